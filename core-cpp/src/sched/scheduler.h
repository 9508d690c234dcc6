// Scheduler: runs C++ filter copies as tasks — user-space contexts (Boost.Context fibers),
// each with a stack of its own — on a few worker threads, one per CPU the process may use.
//
// Why: graphs have more copies than the machine has cores. As OS threads, copies that wait
// for each other spin, yield and sleep on futexes; every hand-off between two of them that
// share a core costs the kernel a wake-up and a context switch, and when other processes
// want the cores, a waiting copy's yield hands its core away for a whole time slice. As
// tasks, a copy that would block hands its worker to another ready copy in tens of
// nanoseconds, without a system call: a producer that fills its consumer's queue and the
// consumer that drains it, on one worker, alternate a queue's worth of buffers at a time.
// Each filter stays an ordinary blocking loop (read, write, allocate block as before);
// Java copies keep OS threads of their own (a JVM cannot have native stacks switched under
// its frames).
//
// Placement: spawn() puts a task on a worker, where it stays: its peers' data is warm there.
// Each task has two homes: packed (the caller's choice for hand-off pipelines: usually
// everything on the first worker) and spread (the graph cut over every worker). Which one
// applies is the layout: with SchedulerOptions::progress set, the monitor tries both now and
// then and keeps the faster (layout_trial.h); a task moves to its home in the new layout the
// next time it blocks.
// A task that has waited for a CPU for a while (its worker is busy with another task's own
// code) is taken by an idle worker; a monitor wakes an idle worker for that, and when every
// worker has been stuck in one task's code for 10 ms (a filter computing, or blocked in a
// system call) while others wait, it starts one more worker, so no ready copy starves for
// ever behind one that never waits on a stream. "Stuck" means busy on a CPU or asleep in
// the kernel, judged from the worker thread's CPU-time clock and /proc state: a worker that
// the kernel keeps waiting for a CPU (other processes want the cores) keeps its tasks, since
// splitting a graph whose halves hand buffers to each other makes every hand-off a wake-up
// through the kernel. For the same reason a worker about to park its blocked tasks hands
// them to a worker that has more (ties to the lower index), and a task left alone on its
// worker joins the one that has the rest; a task moved stays at least 2 ms before it is
// taken again.
//
// Stacks: each task's stack is mapped with a guard page below it (stack_size, default
// 8 MiB like a thread's, so that a filter that runs on a thread runs as a task; it takes
// memory only as it is touched); an overflow is a SIGSEGV that the crash handler names
// (crash_report.h), on the worker's alternate signal stack. A frame larger than the guard
// page could jump over it: filter code built with -fstack-clash-protection (which the CMake
// package adds) touches a large frame's pages in order, so it faults on the guard.
//
// User code that keeps state in thread_local variables must not expect a copy to stay on
// one thread: a task can move to another worker between two waits.
//
// Thread safety: spawn from any thread. The destructor waits for every task to finish;
// abandon() instead leaves stuck ones (and their workers) behind.
#ifndef SLUICE_SCHED_SCHEDULER_H_
#define SLUICE_SCHED_SCHEDULER_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include "runtime/crash_report.h"
#include "sched/layout_trial.h"
#include "sched/task.h"

namespace sluice::sched {

// Where a task lives in each layout (worker indices, modulo the starting workers).
struct TaskHome {
  int packed = 0;
  int spread = 0;
};

struct SchedulerOptions {
  // Worker threads to start with. Default (0): one per CPU this process may run on (its
  // affinity mask), at most `tasks_hint` when that is given.
  int workers = 0;
  int tasks_hint = 0;
  // Each task's stack. Default: 8 MiB, a thread's default.
  std::size_t stack_size = std::size_t{8} << 20;
  // kAuto: start packed and let the monitor try both layouts, when `progress` is set (a
  // count that grows with the work done, read from the monitor thread about once a
  // millisecond; it must stay callable until the Scheduler is destroyed or abandoned).
  // kPacked / kSpread: that layout, always.
  LayoutChoice layout = LayoutChoice::kAuto;
  std::function<std::uint64_t()> progress;
};

// The CPUs this process may run on (its affinity mask).
int cpus_allowed();

class Worker;

class Scheduler {
 public:
  explicit Scheduler(SchedulerOptions options = {});
  // Waits until every task has finished, then stops the workers.
  ~Scheduler();
  Scheduler(const Scheduler&) = delete;
  Scheduler& operator=(const Scheduler&) = delete;

  // Starts `body` as a task on worker `worker` (modulo the number of workers). While it
  // runs, `record` (may be null; must outlive the task) is the thread's crash record.
  void spawn(std::function<void()> body, TaskHome home, const crash::CopyRecord* record);
  void spawn(std::function<void()> body, int worker, const crash::CopyRecord* record) {
    spawn(std::move(body), TaskHome{worker, worker}, record);
  }

  // The layout now, and a switch to the other (the monitor's trial does this under kAuto;
  // tests call it directly). Tasks move to their new homes as they next block.
  bool spread() const { return spread_.load(std::memory_order_relaxed); }
  void set_spread(bool spread);

  int workers() const { return worker_count_.load(std::memory_order_acquire); }
  // Leaves every worker running, detached: tasks are stuck in user code and the process is
  // about to exit. The workers keep using this object, so the caller must then leak it
  // (never destroy it).
  void abandon();

 private:
  friend class Worker;
  friend void make_ready(Task* task) noexcept;

  Worker& add_worker();  // throws std::system_error when no thread can be had
  void stop_workers();   // stops and joins the workers (no task may live)
  void run_worker(Worker& worker);
  Task* next_task(Worker& worker);
  Task* steal(Worker& thief, std::uint64_t min_wait_ns);
  bool hand_over_blocked(Worker& w);
  // Moves `t`, which just blocked on `w`, to its home in the current layout. False when
  // that worker is stuck in one task's code (t stays).
  bool relocate(Worker& w, Task* t);
  bool stuck_for_long(Worker& w, std::uint64_t now);
  bool working(Worker& thief, const Worker& victim, std::uint64_t since, std::uint64_t now);
  void resume(Worker& worker, Task* task);
  void finished(Task* task);
  void monitor();

  static constexpr int kMaxWorkers = 64;
  const SchedulerOptions options_;
  std::array<std::unique_ptr<Worker>, kMaxWorkers> workers_;
  std::atomic<int> worker_count_{0};
  int base_workers_ = 0;
  std::mutex add_mu_;  // serializes add_worker

  // The layout: spread_ says which home applies; layout_epoch_ is bumped on every change, and
  // a task whose epoch differs goes to its home when it next blocks.
  std::atomic<bool> spread_{false};
  std::atomic<std::uint32_t> layout_epoch_{0};
  std::atomic<bool> homes_differ_{false};  // some task's two homes are different workers

  std::atomic<bool> stopping_{false};
  std::atomic<bool> abandoned_{false};
  std::mutex done_mu_;  // guards live_ (with the atomic), for the destructor's wait
  std::condition_variable done_cv_;
  std::atomic<int> live_{0};  // tasks spawned and not finished

  std::mutex monitor_mu_;  // guards monitor_stop_
  std::condition_variable monitor_cv_;
  bool monitor_stop_ = false;
  // Workers asleep on their futex (every task they have waits on a Waiter, or none is left).
  // While all are, the monitor rests (monitor_resting_) until one wakes: nothing runs, so
  // nothing can be stuck, and tasks that all wait for the next unit of work cost no CPU.
  std::atomic<int> asleep_workers_{0};
  std::atomic<bool> monitor_resting_{false};
  std::thread monitor_;
};

}  // namespace sluice::sched

#endif  // SLUICE_SCHED_SCHEDULER_H_
