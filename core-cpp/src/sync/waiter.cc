#include "sync/waiter.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <thread>

namespace sluice {

void Waiter::sleep_until_changed(std::uint32_t seen) noexcept {
  // The timeout is a safety net only; correctness comes from the seq_ handshake.
  struct timespec timeout = {0, 200 * 1000 * 1000};
  sleeping_threads_.fetch_add(1, std::memory_order_seq_cst);
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&seq_), FUTEX_WAIT_PRIVATE, seen,
          &timeout, nullptr, 0);
  sleeping_threads_.fetch_sub(1, std::memory_order_relaxed);
}

bool Waiter::park_task(sched::Task* task, std::uint32_t armed) noexcept {
  std::lock_guard<std::mutex> lock(parked_mu_);
  if (seq_.load(std::memory_order_seq_cst) != armed) return false;  // notified meanwhile
  try {
    parked_.push_back(task);
  } catch (...) {
    return false;  // no memory to park it: let it run (and try) again
  }
  return true;
}

void Waiter::yield() noexcept { sched_yield(); }

void Waiter::wake_all() noexcept {
  seq_.fetch_add(1, std::memory_order_seq_cst);
  // A thread that counts itself after this load reads the new seq_ in its futex wait and
  // returns at once (both are seq_cst), so skipping the system call is safe.
  if (sleeping_threads_.load(std::memory_order_seq_cst) != 0) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&seq_), FUTEX_WAKE_PRIVATE, INT_MAX,
            nullptr, nullptr, 0);
  }
  // Always under the lock: a task that read the old seq_ is parked by the time we get it.
  std::vector<sched::Task*> woken;
  {
    std::lock_guard<std::mutex> lock(parked_mu_);
    woken.swap(parked_);
  }
  for (sched::Task* task : woken) sched::make_ready(task);
  if (callback_.load(std::memory_order_relaxed) != nullptr) {
    // Counted before taking it, so that disarm_callback() either takes it first or waits
    // for this run to return (both sides seq_cst: one of them sees the other).
    callbacks_running_.fetch_add(1, std::memory_order_seq_cst);
    if (Callback* callback = callback_.exchange(nullptr, std::memory_order_seq_cst)) callback->run();
    callbacks_running_.fetch_sub(1, std::memory_order_release);
  }
}

void Waiter::disarm_callback() noexcept {
  callback_.exchange(nullptr, std::memory_order_seq_cst);
  while (callbacks_running_.load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
}

namespace {
std::uint64_t read_ns(clockid_t clock) noexcept {
  struct timespec ts;
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + ts.tv_nsec;
}
}  // namespace

std::uint64_t Waiter::now_ns() noexcept { return read_ns(CLOCK_MONOTONIC); }

std::uint64_t Waiter::coarse_now_ns() noexcept { return read_ns(CLOCK_MONOTONIC_COARSE); }

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
