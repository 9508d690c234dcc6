#include "sync/asymmetric_barrier.h"

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace sluice {

namespace detail {

namespace {
bool register_membarrier() noexcept {
  long supported = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
  if (supported < 0 || (supported & MEMBARRIER_CMD_PRIVATE_EXPEDITED) == 0) return false;
  return syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0;
}
}  // namespace

// Registered while libsluice loads, before any stream exists; light_barrier() then never
// sees the flag change under it.
std::atomic<bool> membarrier_ready{register_membarrier()};

}  // namespace detail

void heavy_barrier() noexcept {
  if (detail::membarrier_ready.load(std::memory_order_relaxed)) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) return;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

}  // namespace sluice
