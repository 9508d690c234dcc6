// InputChannel: the queues in front of one consumer copy's input port.
//
// Every producer copy in this process pushes into a lane of its own, and what other hosts
// send comes through one more lane (attach_landing) that only the data plane's I/O thread
// fills: each lane has one producer, so every lane runs the ring's one-producer protocol (no
// compare-and-swap, and the consumer never writes a cell back), and the consumer takes from
// the lanes in turn, one turn per producer copy (the landed lane gets one for each copy that
// runs elsewhere). It tracks end-of-work marks per upstream copy: the unit of work ends
// for this copy when every upstream copy has sent its mark, which it does only after all
// its buffers, in its own lane, so nothing is lost and each producer's buffers arrive in
// order. (Buffers from different producers interleave in no fixed order, as they always
// did.) A second mark from the same copy in one unit (only a broken or hostile peer host
// could send one) is an error, never an early end.
//
// Thread safety: try_push for upstream copy p from one thread at a time, each push after the
// last (p's copy thread, or a task that moves between workers); different copies push
// concurrently. try_land likewise from one thread at a time (the I/O thread, or a consumer
// flushing what the landing held back, under the landing's lock). pop/take_run/begin_unit/
// drain only from the consumer copy's thread.
#ifndef SLUICE_STREAM_INPUT_CHANNEL_H_
#define SLUICE_STREAM_INPUT_CHANNEL_H_

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "sluice/buffer.h"
#include "stream/endpoint.h"
#include "sync/mpmc_ring.h"
#include "stream/wait_record.h"
#include "sync/waiter.h"

namespace sluice {

class InputChannel final : public Endpoint {
 public:
  // Told about every item the consumer pops from the landed lane (by its producer copy),
  // on the consumer's thread, once the lane shows the room (the network receiver returns
  // credit and lands held-back items with it). Must not block for long or throw.
  class PopObserver {
   public:
    virtual ~PopObserver() = default;
    virtual void popped(InputChannel& channel, std::uint32_t producer) noexcept = 0;
  };

  // depth: items each local producer copy's lane holds (end-of-work marks included), rounded
  // up to a power of two (at least 2): what one producer may have waiting here. room: the
  // stream's Waiter that blocked writers sleep on. label: the stream ("a.out -> b.in"), for
  // messages. local_producers: the upstream copies that run in this
  // process, each of which gets a lane (nullopt: every upstream copy; none: only the landed
  // lane can bring items).
  InputChannel(std::size_t depth, int upstream_copies, RunSignal& signal, Waiter& room,
               std::string label = "",
               std::optional<std::vector<std::uint32_t>> local_producers = std::nullopt);
  ~InputChannel() override;

  bool try_push(const Item& item) noexcept override {
    return try_push_buffer(item.slot, item.size, item.producer, item.key);
  }
  // try_push with the item's fields as they are (a buffer, or an end-of-work mark when
  // `slot` is null), written straight into the producer's lane: the local writer's fast path.
  // REQUIRES: `producer` runs in this process (it has a lane).
  bool try_push_buffer(detail::Slot* slot, std::uint32_t size, std::uint32_t producer, std::uint64_t key) noexcept {
    static_assert(sizeof(Item) == 24, "fill must write every field of Item: update it with the struct");
    auto fill = [&](Item& cell) noexcept {
      cell.slot = slot;
      cell.size = size;
      cell.producer = producer;
      cell.key = key;
    };
    assert(has_lane(producer));
    if (!lane_of_[producer]->try_push_only_with(fill)) return false;
    not_empty_.notify();
    return true;
  }
  // 0 when `producer`'s lane is full (or it has none), else the local lanes' mean room, rounded
  // up (how idle this consumer copy is, on the scale of one lane's depth, as a remote copy's
  // credit is: demand_driven ranks by it).
  std::size_t free_room(std::uint32_t producer) const noexcept override;
  // Whether `producer` has a lane here (runs in this process).
  bool has_lane(std::uint32_t producer) const noexcept {
    return producer < lane_of_.size() && lane_of_[producer] != nullptr;
  }
  // Room in all the local lanes together (a snapshot, for the metrics and tests).
  std::size_t free_room() const noexcept;

  // The lane for items from other hosts: `capacity` items (rounded up to a power of two),
  // enough for every credit the sending hosts hold for this copy, so a landing holds items
  // back only if that is broken. `observer` is told of each item popped from it.
  // REQUIRES: before anything is landed and before the consumer copy runs (the data plane
  // attaches in graph_ready); at most once.
  void attach_landing(PopObserver* observer, std::size_t capacity);
  // The landing's push (see Thread safety); false when the landed lane is full.
  // REQUIRES: attach_landing was called.
  bool try_land(const Item& item) noexcept {
    auto fill = [&](Item& cell) noexcept { cell = item; };
    if (!landed_->try_push_only_with(fill)) return false;
    not_empty_.notify();
    return true;
  }
  // Room in the landed lane; 0 without one.
  std::size_t landed_room() const noexcept;
  // Items waiting in all lanes, and what they hold (for the metrics; a snapshot from any
  // thread).
  std::size_t queued() const noexcept;
  // Consumer thread: take_run kept an end-of-work mark for pop().
  bool holds_mark() const noexcept { return stashed_; }
  std::size_t capacity() const noexcept { return depth_ + (landed_ ? landed_->capacity() : 0); }

  // Starts a unit of work: no end-of-work marks seen yet.
  void begin_unit() noexcept;
  // The next buffer, or nullopt once every upstream copy has ended the unit of work.
  // Adds time spent asleep to *blocked_ns. Throws sluice::Aborted, and sluice::Error on a
  // second end-of-work mark from one upstream copy.
  // `waiting`, when given, records the wait while the channel is empty.
  std::optional<Buffer> pop(std::uint64_t* blocked_ns, WaitRecord* waiting = nullptr);

  // The consumer's fast path: takes up to `max` buffers that are already queued, as
  // TakenBuffers, from one lane and then the next (a different lane first each time), and
  // announces the room once. Stops at an end-of-work mark (kept for pop()) and takes nothing
  // when pop() has other work (the run is aborted, a kept mark). Returns how many it took.
  std::size_t take_run(detail::TakenBuffer* out, std::size_t max) noexcept;
  bool ended() const noexcept { return marks_seen_ == upstream_copies_; }
  // Discards buffers until the unit of work ends; returns how many were discarded.
  std::uint64_t drain();

  const std::atomic<bool>& aborted_flag() const noexcept { return not_empty_.signal().aborted_flag(); }
  // Fills the queue's part of an inline write path into `producer`'s lane (cells, tail, the
  // consumer's position and the producer's record of the room, the reader's wake-up) and
  // returns true, when one is possible: membarrier(2) (the inline notify check has no
  // fence). The producer then pushes there instead of try_push.
  // REQUIRES: `producer` runs in this process.
  bool fill_lane(detail::WriteLane& lane, std::uint32_t producer) noexcept;
  // notify() of the reader's side, for detail::notify_reader.
  void notify_reader() noexcept { not_empty_.notify(); }
  int upstream_copies() const { return upstream_copies_; }
  const std::string& label() const { return label_; }
  // What the local lanes hold between them (depth, rounded up, per local producer copy).
  std::size_t depth() const { return depth_; }

 private:
  [[noreturn]] void duplicate_mark(std::uint32_t producer) const;
  using Ring = MpmcRing<Item, detail::QueueCell>;
  // The consumer's pop of one item from the next lane in turn that has one (a different lane
  // first each time); *landed says whether it came from the landed lane.
  bool pop_next(Item& item, bool* landed) noexcept;
  // Tells the observer of the landed items take_run took (landed_taken_).
  void report_landed(std::size_t count) noexcept;
  // Calls visit(lane, from_landed), which returns whether it took anything, for each lane
  // once in the round's order (see turns_) from turn_, until done(). The next call starts one
  // turn after the first lane that gave items (after turn_ when none did), so that an empty
  // lane's turn is not handed to the same neighbour every time. Consumer thread.
  template <typename Visit, typename Done>
  void visit_in_turn(Visit&& visit, Done&& done) noexcept {
    if (turns_ == 0) return;
    auto after = [this](std::size_t turn) { return turn + 1 == turns_ ? 0 : turn + 1; };
    std::size_t turn = turn_;
    std::size_t next = after(turn);
    bool served = false;
    bool landed_visited = false;
    for (std::size_t i = 0; i < turns_; ++i, turn = after(turn)) {
      const bool from_landed = turn >= lanes_.size();
      if (from_landed && std::exchange(landed_visited, true)) continue;
      if (visit(from_landed ? *landed_ : *lanes_[turn], from_landed) && !std::exchange(served, true)) {
        next = after(turn);
      }
      if (done()) break;
    }
    turn_ = next;
  }

  const int upstream_copies_;
  const std::string label_;
  // One lane per local producer copy, and lane_of_[upstream copy]: its lane, or null for a
  // copy that runs elsewhere. only_: the one lane when there is exactly one and no landed
  // lane (the pipeline edge), which the reads take from without a turn.
  std::vector<std::unique_ptr<Ring>> lanes_;
  std::vector<Ring*> lane_of_;
  Ring* only_ = nullptr;
  std::size_t depth_ = 0;  // the local lanes' capacities, summed
  // The round the reads go by, one turn per producer copy: position i < lanes_.size() is
  // local lane i, and the rest (one per copy that runs elsewhere, at least one) the landed
  // lane, which carries all those copies' buffers. Fair per producer, not per lane: with
  // two copies here and two elsewhere, a lane-by-lane round gave the landed lane a third of
  // the reads for half the traffic.
  std::size_t turns_ = 0;
  Waiter not_empty_;
  Waiter& room_;
  // The landed lane (attach_landing) and its observer.
  std::unique_ptr<Ring> landed_;
  PopObserver* observer_ = nullptr;
  // The consumer thread's state from here on, on lines of its own: it writes turn_ on every
  // run, and the producers read lane_of_ and not_empty_ on every push. turn_: the position in
  // the round (turns_) that goes first next.
  alignas(64) std::size_t turn_ = 0;
  // Producers of the landed items one take_run took, told to the observer after the run.
  static constexpr std::size_t kLandedRun = 32;
  std::array<std::uint32_t, kLandedRun> landed_taken_{};
  int marks_seen_ = 0;             // consumer thread only
  std::vector<bool> marked_;       // [upstream copy]: its mark arrived; consumer thread only
  Item stash_;                       // an end-of-work mark take_run took; consumer thread
  bool stashed_ = false;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_INPUT_CHANNEL_H_
