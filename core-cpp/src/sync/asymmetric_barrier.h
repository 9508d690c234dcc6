// Asymmetric memory barriers: a free "light" side for hot paths and an expensive "heavy"
// side for rare ones, via Linux membarrier(2) (as in liburcu and folly).
//
// Pattern (Dekker): the hot thread stores X then loads Y; the rare thread stores Y then
// loads X. With light_barrier() between the hot thread's store and load and
// heavy_barrier() between the rare thread's, at least one of them sees the other's store.
// When membarrier is unavailable both sides fall back to full fences.
#ifndef SLUICE_SYNC_ASYMMETRIC_BARRIER_H_
#define SLUICE_SYNC_ASYMMETRIC_BARRIER_H_

#include <atomic>

namespace sluice {

namespace detail {
// True once membarrier(PRIVATE_EXPEDITED) is registered for this process.
extern std::atomic<bool> membarrier_ready;
}  // namespace detail

inline void light_barrier() noexcept {
  if (detail::membarrier_ready.load(std::memory_order_relaxed)) {
    std::atomic_signal_fence(std::memory_order_seq_cst);  // compiler-only
  } else {
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
}

// Costs a system call (an IPI to the CPUs running this process's threads).
void heavy_barrier() noexcept;

}  // namespace sluice

#endif  // SLUICE_SYNC_ASYMMETRIC_BARRIER_H_
