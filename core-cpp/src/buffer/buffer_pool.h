// BufferPool: a stream's fixed set of equally sized blocks, allocated once.
//
// acquire() hands out a free block as a Buffer; the Buffer's destruction (anywhere, on any
// thread) puts it back. When the pool is empty acquire() sleeps until a block returns:
// that is how a slow consumer holds back its producers while memory stays bounded.
//
// Lifetime: the pool must outlive every Buffer taken from it; the runtime guarantees this
// by destroying pools only after every filter thread has stopped.
// Thread safety: acquire, try_acquire and release are safe from any thread.
#ifndef SLUICE_BUFFER_BUFFER_POOL_H_
#define SLUICE_BUFFER_BUFFER_POOL_H_

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "buffer/block_memory.h"
#include "buffer/return_lanes.h"
#include "buffer/slot.h"
#include "sluice/stream.h"
#include "sync/mpmc_ring.h"
#include "sync/waiter.h"

namespace sluice {

class BufferPool {
 public:
  // `name` appears in messages; `count` blocks of `buffer_size` bytes each.
  // `single_acquirer`: exactly one thread ever calls acquire/try_acquire (blocks may be
  // released from anywhere), so taking a block needs no compare-and-swap.
  // REQUIRES: buffer_size > 0, count > 0.
  BufferPool(std::string name, std::size_t buffer_size, std::size_t count, RunSignal& signal,
             bool single_acquirer = false);
  ~BufferPool();
  BufferPool(const BufferPool&) = delete;
  BufferPool& operator=(const BufferPool&) = delete;

  // Blocks until a block is free. Adds the nanoseconds spent asleep to *blocked_ns.
  // Throws sluice::Aborted when the run is aborted while waiting.
  Buffer acquire(std::uint64_t* blocked_ns);
  std::optional<Buffer> try_acquire() {
    detail::Slot* slot = nullptr;
    if (!take(slot)) return std::nullopt;
    return fresh(slot);
  }

  // Returns a block whose last reference was dropped. Called by release_slot(); inline, as
  // it is on every buffer's way.
  void release(detail::Slot* slot) noexcept {
    // Each ring has room for every block, so a push fails only while a taker that claimed
    // the cell ahead is between its claim and its store (preempted, in a pool with several
    // takers) and the ring came round to it: then the block goes elsewhere, never lost.
    Ring* mine = returns_.mine();
    if (mine == nullptr || !mine->try_push_single(slot)) {
      if (!free_.try_push(slot)) push_when_room(slot);
    }
    not_empty_.notify();
  }

  // For the pool's single acquirer: what the inline OutputStream::allocate takes free blocks
  // through (as try_acquire does); null when several threads may take from this pool. The
  // pool owns it and repoints it, on the acquirer's thread, when the ring it names runs dry
  // and another has blocks (return_lanes.h).
  const detail::AllocateLane* allocate_lane() const noexcept { return single_acquirer_ ? &allocate_lane_ : nullptr; }

  // For a thread that must not block (the data plane's I/O thread): runs `callback` once
  // when a block is next released (see Waiter::call_once_notified). Look again with
  // try_acquire() after arming.
  void call_when_released(Waiter::Callback* callback) noexcept { not_empty_.call_once_notified(callback); }
  // True while an acquire() may be asleep waiting for a block (or a callback is armed): for
  // tests that must know a thread is blocked before they release.
  bool has_sleeper() const noexcept { return not_empty_.may_sleep_flag().load() != 0; }

  const std::string& name() const { return name_; }
  std::size_t buffer_size() const { return buffer_size_; }
  std::size_t count() const { return slots_.size(); }
  std::size_t available() const { return free_.size_approx() + returns_.size_approx(); }
  // The start of the contiguous memory holding all blocks (tests use it to prove zero copy).
  const std::byte* memory() const { return memory_.get(); }
  // Keeps the blocks' memory mapped for as long as the result is held, even past the pool
  // (a language binding's views of it: BlockMemory::share). Null once the memory is freed.
  std::shared_ptr<const void> share_memory() const noexcept { return memory_.share(); }

  // For a pool kept after its graph is gone, because a client may still hold some of its
  // blocks (buffer/pool_refuge.h). Nobody acquires from it again.
  // Leaves the run's signal, which goes with the graph.
  void outlive_run() noexcept { not_empty_.leave_signal(); }
  // Frees the blocks' memory if every block is back: no Buffer can reach it then; and the
  // slot records, with what a language binding hung on them (the binding deleter is called
  // for each; count() is 0 then). The rings
  // and the waiter stay, as the last releaser may still be inside release(). True when the
  // memory is gone (now or before).
  bool free_memory_if_all_back() noexcept;
  // The bytes of block memory the pool holds (0 once freed).
  std::size_t memory_bytes() const noexcept { return memory_ ? stride_ * slots_.size() : 0; }

  // Process-wide: called with each slot's non-null `binding` when its pool is destroyed,
  // so a language binding (the Java bridge) can free what it attached there. Set once,
  // before any binding is attached (the bridge does it when it loads).
  using BindingDeleter = void (*)(void* binding);
  static void set_binding_deleter(BindingDeleter deleter) noexcept;

 private:
  using Ring = ReturnLanes::Ring;

  // Takes a free block from whichever ring has one. The single acquirer takes from the ring
  // it took from last, and looks at the others only when that one is empty.
  bool take(detail::Slot*& slot) noexcept {
    if (single_acquirer_) return current_->try_pop_single(slot) || take_from_another(slot);
    return take_from_any(slot);
  }
  bool take_from_another(detail::Slot*& slot) noexcept;
  bool take_from_any(detail::Slot*& slot) noexcept;
  // Points allocate_lane_ at `ring`, the single acquirer's ring from now on.
  void take_next_from(Ring& ring) noexcept;
  // Yields until the shared ring takes `slot` (release's rare way out, above).
  void push_when_room(detail::Slot* slot) noexcept;
  // A free slot (refs already 1) as an empty Buffer, its memory found from its position in
  // the pool rather than read from the slot (slot.h says why).
  Buffer fresh(detail::Slot* slot) const noexcept {
    const auto index = static_cast<std::size_t>(slot - slots_.data());
    return detail::BufferAccess::wrap(slot, memory_.get() + index * stride_, static_cast<std::uint32_t>(buffer_size_),
                                      0, 0);
  }

  std::string name_;
  std::size_t buffer_size_;
  std::size_t stride_;  // bytes from one block to the next
  bool single_acquirer_;
  BlockMemory memory_;
  std::vector<detail::Slot> slots_;
  // Its cell type is the public header's, so the inline allocate and the ring agree. Every
  // block starts here; it comes back here only from threads without a return lane.
  Ring free_;
  ReturnLanes returns_;
  // The single acquirer's: the ring it takes from, and the inline allocate's view of it.
  Ring* current_ = &free_;
  detail::AllocateLane allocate_lane_{};
  Waiter not_empty_;
};

}  // namespace sluice

#endif  // SLUICE_BUFFER_BUFFER_POOL_H_
