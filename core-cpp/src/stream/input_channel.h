// InputChannel: the queue in front of one consumer copy's input port.
//
// Producers (local OutputPorts, or a network receiver) push items; the consumer copy pops
// them. It tracks end-of-work marks per upstream copy: the unit of work ends for this copy
// when every upstream copy has sent its mark, which it does only after all its buffers,
// so nothing is lost and each producer's buffers arrive in order. A second mark from the
// same copy in one unit (only a broken or hostile peer host could send one) is an error,
// never an early end.
//
// Thread safety: try_push from any number of threads, or, for a single_producer channel,
// from one thread at a time with a happens-before edge between their pushes;
// pop/begin_unit/drain only from the consumer copy's thread.
#ifndef SLUICE_STREAM_INPUT_CHANNEL_H_
#define SLUICE_STREAM_INPUT_CHANNEL_H_

#include <cstddef>
#include <cstdint>
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
  // Told about every item the consumer pops, on the consumer's thread, before writers
  // waiting for room are woken (the network receiver returns credit and lands held-back
  // items with it). Must not block for long or throw.
  class PopObserver {
   public:
    virtual ~PopObserver() = default;
    virtual void popped(InputChannel& channel, const Item& item) noexcept = 0;
  };

  // depth: items it holds, rounded up to a power of two (end-of-work marks included).
  // room: the stream's Waiter that blocked writers sleep on. label: the stream
  // ("a.out -> b.in"), for messages. single_producer: one thread at a time pushes, each push
  // after the last (one upstream copy in this process and none elsewhere; or all of them
  // elsewhere, landed by the data plane), so pushes need no compare-and-swap.
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
  std::size_t free_room() const noexcept override;

  // Starts a unit of work: no end-of-work marks seen yet.
  void begin_unit() noexcept;
  // The next buffer, or nullopt once every upstream copy has ended the unit of work.
  // Adds time spent asleep to *blocked_ns. Throws sluice::Aborted, and sluice::Error on a
  // second end-of-work mark from one upstream copy.
  // `waiting`, when given, records the wait while the channel is empty.
  std::optional<Buffer> pop(std::uint64_t* blocked_ns, WaitRecord* waiting = nullptr);

  // The consumer's fast path: takes up to `max` buffers that are already queued, as
  // TakenBuffers, and announces the room once. Stops at an end-of-work mark (kept for pop())
  // and takes nothing when pop() has other work (the run is aborted, a pop observer, a kept
  // mark). Returns how many it took.
  std::size_t take_run(detail::TakenBuffer* out, std::size_t max) noexcept;
  bool ended() const noexcept { return marks_seen_ == upstream_copies_; }
  // Discards buffers until the unit of work ends; returns how many were discarded.
  std::uint64_t drain();

  // REQUIRES: before the consumer copy runs (the data plane sets it in graph_ready).
  void set_pop_observer(PopObserver* observer) noexcept { observer_ = observer; }

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
  // The consumer's pop of one item, as the producer side pushes (single_producer_).
  bool pop_one(Item& item) noexcept { return single_producer_ ? ring_.try_pop_only(item) : ring_.try_pop_single(item); }

  const int upstream_copies_;
  const std::string label_;
  // One producer: pushes and pops use the ring's _only variants (a cell's line crosses
  // between two cores twice a lap, not four times), else the shared ones.
  const bool single_producer_;
  MpmcRing<Item, detail::QueueCell> ring_;
  Waiter not_empty_;
  Waiter& room_;
  int marks_seen_ = 0;             // consumer thread only
  std::vector<bool> marked_;       // [upstream copy]: its mark arrived; consumer thread only
  PopObserver* observer_ = nullptr;  // set before the consumer runs
  Item stash_;                       // an end-of-work mark take_run took; consumer thread
  bool stashed_ = false;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_INPUT_CHANNEL_H_
