// ReturnLanes: the rings a pool's blocks come home through, one per thread that releases them.
//
// A block's last holder puts it back on its pool. Through one shared ring every release is a
// compare-and-swap, a locked instruction that drains the CPU's store buffer: a third of the
// time of a hand-off pair on one core (bench/RESULTS.md, 2026-11-25). So each thread that
// releases a pool's blocks gets a ring of its own in that pool, claimed on its first release
// and kept for the pool's life, which only that thread fills: a plain store. The pool's takers
// look in every ring. Up to kLanes threads get one; releases from any further thread go to the
// pool's shared ring, as before. A lane's ring is allocated when it is claimed, so a pool only
// pays for the threads that really release into it (usually one or two workers).
//
// A lane belongs to a thread by its thread pointer (glibc's pthread_t). Once that thread has
// exited, a new thread may get the same one and with it the lane: still one living thread
// filling it. Lanes are never given back otherwise: once four threads that have exited hold
// them, later threads release through the shared ring (correct, with its compare-and-swap).
//
// Thread safety: mine() from any thread, pushes only into the ring mine() returned;
// ring(i) from the pool's takers.
#ifndef SLUICE_BUFFER_RETURN_LANES_H_
#define SLUICE_BUFFER_RETURN_LANES_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "buffer/slot.h"
#include "sluice/stream.h"
#include "sync/mpmc_ring.h"

namespace sluice {

class ReturnLanes {
 public:
  static constexpr std::size_t kLanes = 4;
  // Filled with try_push_single by its owner; emptied with try_pop, or try_pop_single by a
  // pool's single acquirer. The cell type is the public header's, so that the inline
  // OutputStream::allocate can take from it too.
  using Ring = MpmcRing<detail::Slot*, detail::FreeCell>;

  // Each ring can hold `capacity` blocks (every block of the pool).
  explicit ReturnLanes(std::size_t capacity) : capacity_(capacity) {}
  ~ReturnLanes();
  ReturnLanes(const ReturnLanes&) = delete;
  ReturnLanes& operator=(const ReturnLanes&) = delete;

  // The calling thread's ring, claimed now if it has none and a lane is left; null when
  // every lane belongs to other threads (or a ring could not be allocated). Inline: it is
  // on every release. A claim allocates and initialises the ring (16 bytes a cell, the
  // pool's count rounded up to a power of two), once per thread and pool.
  Ring* mine() noexcept {
    const std::uintptr_t me = this_thread();
    for (std::size_t i = 0; i < kLanes; ++i) {
      const std::uintptr_t owner = owners_[i].load(std::memory_order_relaxed);
      // Only this thread stores `me` there, so it sees its own store of the ring.
      if (owner == me) return rings_[i].load(std::memory_order_relaxed);
      if (owner == 0) return claim(me);
    }
    return nullptr;
  }

  // Lane i's ring, or null while it is unclaimed. REQUIRES: i < kLanes.
  Ring* ring(std::size_t i) const noexcept { return rings_[i].load(std::memory_order_acquire); }

  // The most memory a pool of `count` blocks can spend on its lanes' rings.
  static std::size_t bytes_at_most(std::size_t count) noexcept;

  // Blocks in all rings; exact only when nothing is pushed or popped meanwhile.
  std::size_t size_approx() const noexcept;

 private:
  // The calling thread's thread pointer: unique among living threads (glibc's pthread_t on
  // x86-64). Read with a volatile asm, never __builtin_thread_pointer() or pthread_self(),
  // which the compiler may treat as constant within a function: a copy running as a task
  // can move to another worker thread between two releases in one function (after a
  // wait), and must then fill that worker's lane, not the one it started on.
  static std::uintptr_t this_thread() noexcept {
    std::uintptr_t tp;
#if defined(__x86_64__)
    asm volatile("mov %%fs:0, %0" : "=r"(tp));
#elif defined(__aarch64__)
    asm volatile("mrs %0, tpidr_el0" : "=r"(tp));
#else
    tp = this_thread_slow();
#endif
    return tp;
  }
  static std::uintptr_t this_thread_slow() noexcept;  // out of line: pthread_self()
  Ring* claim(std::uintptr_t me) noexcept;

  const std::size_t capacity_;
  std::array<std::atomic<std::uintptr_t>, kLanes> owners_{};  // pthread_t, 0 while free
  std::array<std::atomic<Ring*>, kLanes> rings_{};             // owned; set once, after owners_
};

}  // namespace sluice

#endif  // SLUICE_BUFFER_RETURN_LANES_H_
