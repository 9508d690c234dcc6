// PortCounters: one port's traffic, written by its copy's thread, read by the console.
#ifndef SLUICE_STREAM_PORT_COUNTERS_H_
#define SLUICE_STREAM_PORT_COUNTERS_H_

#include <atomic>
#include <cstdint>

#include "sync/waiter.h"

namespace sluice {

// Single writer: add() is a relaxed load and store, not an atomic read-modify-write, so
// counting costs the hot path almost nothing. Readers on other threads see a recent value.
class Counter {
 public:
  void add(std::uint64_t n) noexcept {
    value_.store(value_.load(std::memory_order_relaxed) + n, std::memory_order_relaxed);
  }
  void set(std::uint64_t n) noexcept { value_.store(n, std::memory_order_relaxed); }
  std::uint64_t get() const noexcept { return value_.load(std::memory_order_relaxed); }
  // The value itself, for the one writer's inline path (OutputStream::write), which adds
  // to it the same way.
  std::atomic<std::uint64_t>* raw() noexcept { return &value_; }

 private:
  std::atomic<std::uint64_t> value_{0};
};

struct alignas(64) PortCounters {
  Counter buffers;     // written, or read (a consumer counts a run once it is all read)
  Counter bytes;
  // Time waiting for data, room or a free buffer: asleep (a thread), or switched out (a
  // task, measured by its worker: sched::block); a wait that succeeds at once adds 0.
  Counter blocked_ns;
  Counter in_hand;     // a consumer's run: taken off the queue, not all read yet
};

// Runs `wait` (a port's slow path, which adds the time it waited to `blocked` itself when it
// returns); when it ends by an exception instead (an abort: a stall, a failure elsewhere),
// the time it took still counts in `blocked`.
template <typename Wait>
void counting_aborted_wait(Counter& blocked, Wait&& wait) {
  const std::uint64_t start = Waiter::coarse_now_ns();
  try {
    wait();
  } catch (...) {
    blocked.add(Waiter::coarse_now_ns() - start);
    throw;
  }
}

}  // namespace sluice

#endif  // SLUICE_STREAM_PORT_COUNTERS_H_
