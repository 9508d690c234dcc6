// Waiter: blocking without burning a core (an "eventcount" over a Linux futex).
//
// A thread that finds nothing to do (queue empty, queue full, pool empty) spins briefly,
// then sleeps in the kernel until another thread calls notify(). notify() costs one fence
// and one load when nobody sleeps, so the fast path stays a few nanoseconds; on these
// 2-core machines sleeping early matters more than shaving wake-up latency.
#ifndef SLUICE_SYNC_WAITER_H_
#define SLUICE_SYNC_WAITER_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <vector>

#include "sluice/error.h"
#include "sync/asymmetric_barrier.h"
#include "sync/cpu_relax.h"
#include "sync/run_signal.h"
#include "sched/task.h"

namespace sluice {

class Waiter {
 public:
  // Run once by the notify() that follows call_once_notified(): the asynchronous
  // counterpart of wait(), for a thread that must never block (the data plane's I/O
  // thread waiting for a pool to have a free block). run() is called on the notifying
  // thread (or by RunSignal::abort) and must only hand the news on (e.g. post to an
  // io_context): it must not block, throw, or touch this Waiter.
  class Callback {
   public:
    virtual ~Callback() = default;
    virtual void run() noexcept = 0;
  };

  // Registers with `signal` so that RunSignal::abort() wakes this waiter's sleepers.
  explicit Waiter(RunSignal& signal) : signal_(signal) { signal_.add(this); }
  ~Waiter() {
    if (!left_signal_) signal_.remove(this);
  }
  Waiter(const Waiter&) = delete;
  Waiter& operator=(const Waiter&) = delete;

  // Calls try_once() until it returns true. Throws sluice::Aborted if the run is aborted
  // first. Returns the nanoseconds spent waiting (0 when try_once() succeeded at once).
  //
  // Three phases: spin (the peer is likely running on the other core and about to act),
  // yield (let a peer that shares our core run), then sleep on the futex.
  //
  // When the caller is a task (a copy running on a scheduler's worker, sched/task.h),
  // waiting hands the worker to its other ready tasks instead: the peer the caller waits
  // for is often one of them. Only when nothing else there makes our condition true does
  // the task park (the worker then runs others or sleeps).
  template <typename TryOnce>
  std::uint64_t wait(TryOnce&& try_once) {
    if (try_once()) return 0;
    if (sched::current_task() != nullptr) return wait_as_task(try_once);
    const std::uint64_t start = now_ns();
    // Spin briefly, backing off between looks: a waiter that polls the line its peer is
    // writing slows that peer down; polling less lets the peer run ahead and hand over
    // several items per cache-line transfer.
    for (std::uint32_t i = 0;; ++i) {
      const std::uint32_t pauses = 1u << (i < kMaxBackoffShift ? i : kMaxBackoffShift);
      for (std::uint32_t p = 0; p < pauses; ++p) cpu_relax();
      if (try_once()) return now_ns() - start;
      if (signal_.aborted()) throw Aborted();
      if (i >= kMaxBackoffShift && now_ns() - start > signal_.patience().spin_ns) break;
    }
    // Then yield: when the peer shares our CPU (the scheduler often puts a woken thread
    // next to its waker) this runs it at once; when it does not, it is a cheap syscall.
    while (now_ns() - start < signal_.patience().yield_ns) {
      yield();
      if (try_once()) return now_ns() - start;
      if (signal_.aborted()) throw Aborted();
    }
    for (;;) {
      // Read seq_ first, then announce the sleep, then take the last look. In the other
      // order a notify() landing between the announcement and the read would clear the
      // flag and bump seq_ into `seen`: we would sleep unannounced, and no later notify()
      // would wake us. This way such a notify() makes the futex wait return at once.
      const std::uint32_t seen = seq_.load(std::memory_order_seq_cst);
      may_sleep_.store(1, std::memory_order_seq_cst);
      heavy_barrier();  // pairs with light_barrier() in notify()
      if (try_once()) break;
      if (signal_.aborted()) throw Aborted();
      sleep_until_changed(seen);
    }
    return now_ns() - start;
  }

  // wait() for a task: the task blocks, and its worker tries `try_once` between other
  // tasks (a peer on the same worker usually makes it succeed); when the worker runs out of
  // work, it parks the task here until notify().
  // The time blocked is the worker's measure (sched::block): a switch between two tasks on
  // one worker reads the clock once, where reading it here too cost two more reads a switch
  // (~5 % of a chain's time on one core).
  template <typename TryOnce>
  std::uint64_t wait_as_task(TryOnce& try_once) {
    std::uint64_t blocked = 0;
    TaskWait<TryOnce> wait(*this, try_once);
    for (;;) {
      blocked += sched::block(wait);
      if (wait.done) return blocked;
      if (signal_.aborted()) throw Aborted();
      if (try_once()) return blocked;  // woken from a park: look before blocking again
    }
  }

  // Throws sluice::Aborted if the run is aborted. Blocking calls check on entry, so that
  // after an abort every read, write and allocate throws, even one that would not wait.
  void throw_if_aborted() const {
    if (signal_.aborted()) throw Aborted();
  }
  bool aborted() const noexcept { return signal_.aborted(); }
  // Unregisters from the signal, which may then go before this Waiter, and disarms the
  // callback (call_once_notified), whose owner may go too: for a waiter nobody will wait on
  // again, only notify: a pool that outlives its run (buffer/pool_refuge.h).
  void leave_signal() noexcept {
    if (!left_signal_) signal_.remove(this);
    left_signal_ = true;
    disarm_callback();
  }
  // Disarms the armed callback, if any; when a notify() on another thread is running it,
  // waits until it has returned. After this no callback armed so far runs.
  void disarm_callback() noexcept;
  const RunSignal& signal() const noexcept { return signal_; }
  // Nonzero while someone may sleep here: notify() must be called. For a notifier that
  // inlines notify()'s check (the inline OutputStream::write); it calls notify() when set.
  const std::atomic<std::uint32_t>& may_sleep_flag() const noexcept { return may_sleep_; }

  // Tells sleepers that the condition may have changed. Call after the state change
  // (push, pop, release) is visible. One load and no fence when nobody sleeps (the
  // sleeper pays with a membarrier instead: see asymmetric_barrier.h); the first
  // notify after a sleep clears the flag, so a sleeper costs one wake-up, not one per push.
  void notify() noexcept {
    light_barrier();
    if (may_sleep_.load(std::memory_order_relaxed) != 0 &&
        may_sleep_.exchange(0, std::memory_order_seq_cst) != 0) {
      wake_all();
    }
  }

  // Arms `callback` to run once at the next notify() (or abort). Then look at the
  // condition again: a change made before this call is not announced. Costs what a
  // sleeper's last look costs (a membarrier), so it is for rare waits, not a hot path.
  // At most one callback is armed per Waiter; arming again replaces it.
  void call_once_notified(Callback* callback) noexcept {
    callback_.store(callback, std::memory_order_seq_cst);
    may_sleep_.store(1, std::memory_order_seq_cst);
    heavy_barrier();  // pairs with light_barrier() in notify(), as for a sleeper
  }

  // Wakes every sleeper unconditionally and runs the armed callback (used by
  // RunSignal::abort, and by notify() when someone may sleep).
  void wake_all() noexcept;

  static std::uint64_t now_ns() noexcept;
  // now_ns() as of the kernel's last tick (CLOCK_MONOTONIC_COARSE: up to one tick behind,
  // 1-10 ms by CONFIG_HZ, never ahead), for a timestamp read in seconds: a seventh of the cost
  // on these VMs (~3 ns against ~21 ns), where a task switch costs a few dozen nanoseconds.
  static std::uint64_t coarse_now_ns() noexcept;

 private:
  // By default (RunSignal::Patience) spin about 2 us (enough to catch a peer running on
  // the other core), yield until 50 us (enough to cover a futex wake-up and a peer sharing
  // our core), then sleep: an idle copy costs nothing measurable, and a busy pipeline
  // rarely enters the kernel to sleep.
  static constexpr std::uint32_t kMaxBackoffShift = 4;  // at most 16 pauses between looks

  void sleep_until_changed(std::uint32_t seen) noexcept;
  static void yield() noexcept;
  // Keeps `task` until wake_all(), unless wake_all() ran since seq_ was `armed`.
  bool park_task(sched::Task* task, std::uint32_t armed) noexcept;

  // A task's wait on this Waiter, as its worker sees it (sched/task.h).
  template <typename TryOnce>
  class TaskWait final : public sched::Wait {
   public:
    TaskWait(Waiter& waiter, TryOnce& try_once) : waiter_(waiter), try_once_(try_once) {}
    bool attempt() noexcept override {
      if (try_once_()) {
        done = true;
        return true;
      }
      return waiter_.signal_.aborted();
    }
    std::uint32_t arm() noexcept override {
      const std::uint32_t seen = waiter_.seq_.load(std::memory_order_seq_cst);
      waiter_.may_sleep_.store(1, std::memory_order_seq_cst);
      return seen;
    }
    bool park(sched::Task* task, std::uint32_t armed) noexcept override { return waiter_.park_task(task, armed); }
    bool done = false;  // try_once succeeded (on the worker): the caller owns its result

   private:
    Waiter& waiter_;
    TryOnce& try_once_;
  };

  RunSignal& signal_;
  bool left_signal_ = false;  // leave_signal() was called: signal_ may be gone
  std::atomic<std::uint32_t> seq_{0};
  // 1 when some thread may be about to sleep or sleeping; set by each sleeper before its
  // last look, cleared by the notify() that wakes them all.
  std::atomic<std::uint32_t> may_sleep_{0};
  std::atomic<Callback*> callback_{nullptr};  // armed by call_once_notified
  std::atomic<std::uint32_t> callbacks_running_{0};  // wake_all()s that may be running it
  std::atomic<std::uint32_t> sleeping_threads_{0};  // threads in (or entering) the futex wait
  std::mutex parked_mu_;                             // guards parked_
  std::vector<sched::Task*> parked_;                 // tasks waiting for wake_all
};

}  // namespace sluice

#endif  // SLUICE_SYNC_WAITER_H_
