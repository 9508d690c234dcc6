// Waiter: blocking without burning a core (an "eventcount" over a Linux futex).
//
// A thread that finds nothing to do (queue empty, queue full, pool empty) spins briefly,
// then sleeps in the kernel until another thread calls notify(). notify() costs one fence
// and one load when nobody sleeps, so the fast path stays a few nanoseconds; on these
// 2-core machines sleeping early matters more than shaving wake-up latency.
#ifndef SLUICE_STREAM_WAITER_H_
#define SLUICE_STREAM_WAITER_H_

#include <atomic>
#include <cstdint>

#include "sluice/error.h"
#include "stream/run_signal.h"

namespace sluice {

class Waiter {
 public:
  // Registers with `signal` so that RunSignal::abort() wakes this waiter's sleepers.
  explicit Waiter(RunSignal& signal) : signal_(signal) { signal_.add(this); }
  ~Waiter() { signal_.remove(this); }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // Calls try_once() until it returns true. Throws sluice::Aborted if the run is aborted
  // first. Returns the nanoseconds spent sleeping (0 when try_once() succeeded quickly).
  template <typename TryOnce>
  std::uint64_t wait(TryOnce&& try_once) {
    for (int i = 0; i < kSpins; ++i) {
      if (try_once()) return 0;
      if (signal_.aborted()) throw Aborted();
      cpu_relax();
    }
    const std::uint64_t start = now_ns();
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    for (;;) {
      const std::uint32_t seen = seq_.load(std::memory_order_seq_cst);
      if (try_once()) break;
      if (signal_.aborted()) {
        sleepers_.fetch_sub(1, std::memory_order_relaxed);
        throw Aborted();
      }
      sleep_until_changed(seen);
    }
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
    return now_ns() - start;
  }

  // Tells sleepers that the condition may have changed. Call after the state change
  // (push, pop, release) is visible.
  void notify() noexcept {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleepers_.load(std::memory_order_relaxed) != 0) wake_all();
  }

  // Wakes every sleeper unconditionally (used by RunSignal::abort).
  void wake_all() noexcept;

  static std::uint64_t now_ns() noexcept;

 private:
  // Bounded spin before sleeping: about a microsecond, enough to catch a peer that is
  // running on the other core, short enough not to starve one that shares ours.
  static constexpr int kSpins = 64;

  static void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  void sleep_until_changed(std::uint32_t seen) noexcept;

  RunSignal& signal_;
  std::atomic<std::uint32_t> seq_{0};
  std::atomic<std::uint32_t> sleepers_{0};
};

}  // namespace sluice

#endif  // SLUICE_STREAM_WAITER_H_
