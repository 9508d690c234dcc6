// InputChannel: the queue in front of one consumer copy's input port.
//
// Local producers (OutputPorts) push items; the consumer copy pops them. Items from other
// hosts come through a lane of their own (attach_landing): the data plane's I/O thread is
// its only pusher, so a stream that arrives both from here and from elsewhere keeps the
// one-producer protocol on each lane where it has one producer, and the consumer takes
// from the two lanes in turn. It tracks end-of-work marks per upstream copy: the unit of
// work ends for this copy when every upstream copy has sent its mark, which it does only
// after all its buffers, so nothing is lost and each producer's buffers arrive in order. A
// second mark from the same copy in one unit (only a broken or hostile peer host could
// send one) is an error, never an early end.
//
// Thread safety: try_push from any number of threads, or, for a single_producer channel,
// from one thread at a time with a happens-before edge between their pushes; try_land
// likewise from one thread at a time (the I/O thread, or a consumer flushing what the
// landing held back, under the landing's lock); pop/take_run/begin_unit/drain only from
// the consumer copy's thread.
#ifndef SLUICE_STREAM_INPUT_CHANNEL_H_
#define SLUICE_STREAM_INPUT_CHANNEL_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
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

  // depth: items it holds, rounded up to a power of two (end-of-work marks included).
  // room: the stream's Waiter that blocked writers sleep on. label: the stream
  // ("a.out -> b.in"), for messages. single_producer: one thread at a time pushes, each push
  // after the last (one upstream copy in this process), so pushes need no compare-and-swap.
  InputChannel(std::size_t depth, int upstream_copies, RunSignal& signal, Waiter& room,
               std::string label = "", bool single_producer = false);
  ~InputChannel() override;

  bool try_push(const Item& item) noexcept override {
    return try_push_buffer(item.slot, item.size, item.producer, item.key);
  }
  // try_push with the item's fields as they are (a buffer, or an end-of-work mark when
  // `slot` is null), written straight into the queue: the local writer's fast path.
  bool try_push_buffer(detail::Slot* slot, std::uint32_t size, std::uint32_t producer, std::uint64_t key) noexcept {
    static_assert(sizeof(Item) == 24, "fill must write every field of Item: update it with the struct");
    auto fill = [&](Item& cell) noexcept {
      cell.slot = slot;
      cell.size = size;
      cell.producer = producer;
      cell.key = key;
    };
    if (!(single_producer_ ? ring_.try_push_only_with(fill) : ring_.try_push_with(fill))) return false;
    not_empty_.notify();
    return true;
  }
  // Room in the local lane (what local producers see).
  std::size_t free_room() const noexcept override;

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
  // Items waiting in both lanes, and what both hold (for the metrics; a snapshot from any
  // thread).
  std::size_t queued() const noexcept;
  // Consumer thread: take_run kept an end-of-work mark for pop().
  bool holds_mark() const noexcept { return stashed_; }
  std::size_t capacity() const noexcept { return ring_.capacity() + (landed_ ? landed_->capacity() : 0); }

  // Starts a unit of work: no end-of-work marks seen yet.
  void begin_unit() noexcept;
  // The next buffer, or nullopt once every upstream copy has ended the unit of work.
  // Adds time spent asleep to *blocked_ns. Throws sluice::Aborted, and sluice::Error on a
  // second end-of-work mark from one upstream copy.
  // `waiting`, when given, records the wait while the channel is empty.
  std::optional<Buffer> pop(std::uint64_t* blocked_ns, WaitRecord* waiting = nullptr);

  // The consumer's fast path: takes up to `max` buffers that are already queued, as
  // TakenBuffers, from one lane and then the other (the other first next time), and
  // announces the room once. Stops at an end-of-work mark (kept for pop()) and takes nothing
  // when pop() has other work (the run is aborted, a kept mark). Returns how many it took.
  std::size_t take_run(detail::TakenBuffer* out, std::size_t max) noexcept;
  bool ended() const noexcept { return marks_seen_ == upstream_copies_; }
  // Discards buffers until the unit of work ends; returns how many were discarded.
  std::uint64_t drain();

  const std::atomic<bool>& aborted_flag() const noexcept { return not_empty_.signal().aborted_flag(); }
  // Fills the queue's part of an inline write path (cells, tail, the consumer's position and
  // the producer's record of the room, the reader's wake-up) and
  // returns true, when one is possible: exactly one producer thread, and membarrier(2) (the
  // inline notify check has no fence). The producer then pushes there instead of try_push.
  bool fill_lane(detail::WriteLane& lane) noexcept;
  // notify() of the reader's side, for detail::notify_reader.
  void notify_reader() noexcept { not_empty_.notify(); }
  int upstream_copies() const { return upstream_copies_; }
  const std::string& label() const { return label_; }
  std::size_t depth() const { return ring_.capacity(); }

 private:
  [[noreturn]] void duplicate_mark(std::uint32_t producer) const;
  using Ring = MpmcRing<Item, detail::QueueCell>;
  // The consumer's pop of one local item, as the producer side pushes (single_producer_).
  bool pop_one(Item& item) noexcept { return single_producer_ ? ring_.try_pop_only(item) : ring_.try_pop_single(item); }
  // The consumer's pop of one item from either lane, the other lane first next time;
  // *landed says which.
  bool pop_next(Item& item, bool* landed) noexcept;
  // Tells the observer of the landed items take_run took (landed_taken_).
  void report_landed(std::size_t count) noexcept;

  const int upstream_copies_;
  const std::string label_;
  // One producer: pushes and pops use the ring's _only variants (a cell's line crosses
  // between two cores twice a lap, not four times), else the shared ones.
  const bool single_producer_;
  Ring ring_;
  Waiter not_empty_;
  Waiter& room_;
  // The landed lane (attach_landing), its observer, and whose turn is first; the last two
  // the consumer thread's.
  std::unique_ptr<Ring> landed_;
  PopObserver* observer_ = nullptr;
  bool landed_first_ = false;
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
