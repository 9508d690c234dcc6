#include "stream/waiter.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>

namespace sluice {

void Waiter::sleep_until_changed(std::uint32_t seen) noexcept {
  // The timeout is a safety net only; correctness comes from the seq_ handshake.
  struct timespec timeout = {0, 200 * 1000 * 1000};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&seq_), FUTEX_WAIT_PRIVATE, seen,
          &timeout, nullptr, 0);
}

void Waiter::yield() noexcept { sched_yield(); }

void Waiter::wake_all() noexcept {
  seq_.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&seq_), FUTEX_WAKE_PRIVATE, INT_MAX,
          nullptr, nullptr, 0);
  if (callback_.load(std::memory_order_relaxed) != nullptr) {
    if (Callback* callback = callback_.exchange(nullptr, std::memory_order_acq_rel)) callback->run();
  }
}

std::uint64_t Waiter::now_ns() noexcept {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + ts.tv_nsec;
}

void RunSignal::abort() noexcept {
  aborted_.store(true, std::memory_order_seq_cst);
  std::lock_guard<std::mutex> lock(mu_);
  for (Waiter* waiter : waiters_) waiter->wake_all();
}

void RunSignal::add(Waiter* waiter) {
  std::lock_guard<std::mutex> lock(mu_);
  waiters_.push_back(waiter);
}

void RunSignal::remove(Waiter* waiter) {
  std::lock_guard<std::mutex> lock(mu_);
  waiters_.erase(std::remove(waiters_.begin(), waiters_.end(), waiter), waiters_.end());
}

}  // namespace sluice
