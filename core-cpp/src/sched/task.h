// Tasks: filter copies that run as user-space contexts (fibers) on a few worker threads
// instead of one OS thread each (see scheduler.h for the why). This header is what code
// that may block needs to know about them — the Waiter, mostly: when the caller is a task,
// waiting hands the worker to another task instead of spinning or sleeping the thread.
//
// Thread safety: current_task and block act on the calling thread's own task; make_ready
// may be called from any thread.
#ifndef SLUICE_SCHED_TASK_H_
#define SLUICE_SCHED_TASK_H_

#include <cstdint>

namespace sluice::sched {

class Task;

// What a blocked task waits to do, as its worker sees it. Lives on the task's stack for the
// length of block().
class Wait {
 public:
  virtual ~Wait() = default;
  // Tries, once, what the task waits to do (pop from a queue, push, take a pooled buffer),
  // on the worker's own stack between other tasks. True when it was done — or when the task
  // must run anyway (the run was aborted: it will find out and throw).
  virtual bool attempt() noexcept = 0;
  // The worker has nothing else to run and is about to sleep: announce a sleeper to whoever
  // would make attempt() succeed (their next notify then wakes us), and return what park()
  // needs to tell whether a notify came in between. The worker then runs one heavy barrier
  // for all its blocked tasks and calls attempt() once more before park().
  virtual std::uint32_t arm() noexcept = 0;
  // Hands the task to the Waiter, which calls make_ready() on the next notify. False (and
  // the task is not taken) when a notify came after arm(): try again.
  virtual bool park(Task* task, std::uint32_t armed) noexcept = 0;
};

// The task running on the calling thread, or null on an ordinary thread (a Java copy, the
// data plane's I/O thread, the console's main thread).
Task* current_task() noexcept;

// The index of the worker running the calling task (0 .. workers-1), or -1 on an ordinary
// thread.
int current_worker() noexcept;

// Suspends the calling task until wait.attempt() returns true, which its worker tries
// between other tasks (no switch into the task until then), parking it through
// wait.arm()/park() when the worker has nothing else to do. Returns the nanoseconds the task
// was away, as its workers' clock reads saw them: from the first read after the switch away
// to the one that resumed it (a switch reads the clock once, not once on each side).
// REQUIRES: current_task() != nullptr; wait.attempt() returned false just now.
std::uint64_t block(Wait& wait);

// Puts a parked task back on its worker's run queue. Any thread; once per park.
void make_ready(Task* task) noexcept;

}  // namespace sluice::sched

#endif  // SLUICE_SCHED_TASK_H_
