// RunSignal: the "stop everything" flag of one run, and the Waiters it must wake.
#ifndef SLUICE_STREAM_RUN_SIGNAL_H_
#define SLUICE_STREAM_RUN_SIGNAL_H_

#include <atomic>
#include <mutex>
#include <vector>

namespace sluice {

class Waiter;

// Thread safety: all methods are safe from any thread.
class RunSignal {
 public:
  bool aborted() const noexcept { return aborted_.load(std::memory_order_acquire); }
  // Sets the flag and wakes every registered Waiter, so every blocked read, write and
  // allocate in the run throws sluice::Aborted promptly. Idempotent.
  void abort() noexcept;
  // Clears the flag for a new run of the same graph.
  void reset() noexcept { aborted_.store(false, std::memory_order_release); }

  void add(Waiter* waiter);
  void remove(Waiter* waiter);

 private:
  std::atomic<bool> aborted_{false};
  std::mutex mu_;                  // guards waiters_
  std::vector<Waiter*> waiters_;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_RUN_SIGNAL_H_
