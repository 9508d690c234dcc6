// RunSignal: the "stop everything" flag of one run, and the Waiters it must wake.
#ifndef SLUICE_SYNC_RUN_SIGNAL_H_
#define SLUICE_SYNC_RUN_SIGNAL_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

namespace sluice {

class Waiter;

// Thread safety: all methods are safe from any thread.
class RunSignal {
 public:
  // How long a blocked call spins, then yields, before it sleeps (see Waiter::wait).
  // Measured on 2 cores (bench/RESULTS.md): a 2 us spin catches a peer on the other
  // core; yielding up to 50 us serves a peer on our core, and when copies outnumber
  // cores it lets a runnable copy work instead of paying a futex sleep and wake-up.
  // The Engine drops the yield phase when it pins copies to CPUs of their own.
  struct Patience {
    std::uint64_t spin_ns = 2000;
    std::uint64_t yield_ns = 50000;
  };
  const Patience& patience() const noexcept { return patience_; }
  // REQUIRES: no thread is waiting (set before the run starts).
  void set_patience(Patience patience) noexcept { patience_ = patience; }

  bool aborted() const noexcept { return aborted_.load(std::memory_order_acquire); }
  // The flag itself, for a check inlined where a call would cost too much (InputStream::read).
  const std::atomic<bool>& aborted_flag() const noexcept { return aborted_; }
  // Sets the flag and wakes every registered Waiter, so every blocked read, write and
  // allocate in the run throws sluice::Aborted promptly. Idempotent.
  void abort() noexcept;
  // Clears the flag for a new run of the same graph.
  void reset() noexcept { aborted_.store(false, std::memory_order_release); }

  void add(Waiter* waiter);
  void remove(Waiter* waiter);

 private:
  std::atomic<bool> aborted_{false};
  Patience patience_;
  std::mutex mu_;                  // guards waiters_
  std::vector<Waiter*> waiters_;
};

}  // namespace sluice

#endif  // SLUICE_SYNC_RUN_SIGNAL_H_
