#include "sched/scheduler.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <deque>
#include <vector>
#include <exception>
#include <iostream>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#include "stream/asymmetric_barrier.h"
#include "stream/waiter.h"

namespace sluice::sched {

namespace ctx = boost::context;

namespace {

// A worker with nothing ready keeps trying its blocked tasks for a while before it parks them
// and sleeps: their peers on other cores (another worker, a Java copy's thread, the data
// plane) usually hand over work soon, and parking and waking cost system calls on both sides.
// How long adapts, per worker, between these bounds: it doubles after a wait that ended while
// spinning and halves after one that ended parked. Measured with java_bench (a C++ source
// and sink around a Java forward): a fixed 20 us added ~600 ns per buffer at 10 B, 200 us
// ~120 ns; but where the cores are wanted by other threads (two app daemons with their I/O
// and Java threads on one 2-core machine) a long spin only takes their time.
constexpr std::uint64_t kBlockedSpinMinNs = 2'000;
constexpr std::uint64_t kBlockedSpinMaxNs = 200'000;
// A worker with nothing at all (nothing ready, nothing blocked) sleeps after this long.
constexpr std::uint64_t kIdleSpinNs = 2'000;
// A ready task that has waited this long for its busy worker may be taken by another.
constexpr std::uint64_t kStealAfterNs = 200'000;
// The monitor looks this often...
constexpr auto kMonitorPeriod = std::chrono::milliseconds(1);
// ...and starts a worker when every worker has run one task for this long while ready
// tasks wait.
constexpr std::uint64_t kStuckNs = 10'000'000;

void futex_wait(std::atomic<std::uint32_t>& word, std::uint32_t seen, long timeout_ms) {
  struct timespec timeout = {timeout_ms / 1000, (timeout_ms % 1000) * 1000000};
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAIT_PRIVATE, seen, &timeout, nullptr, 0);
}

void futex_wake(std::atomic<std::uint32_t>& word) {
  syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&word), FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

int cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

}  // namespace

class Task {
 public:
  enum class Next { kBlock, kDone };

  ctx::fiber fiber;  // the task, while it is not running
  ctx::fiber back;   // while it runs: its worker's context, to switch back to
  std::function<void()> body;
  const crash::CopyRecord* record = nullptr;
  Scheduler* scheduler = nullptr;
  Worker* worker = nullptr;  // where it runs or waits to run
  Next next = Next::kBlock;
  Wait* wait = nullptr;  // while blocked: what it waits to do
  std::uint64_t ready_since_ns = 0;
};

class Worker {
 public:
  Worker(Scheduler& s, int i) : scheduler(s), index(i) {}

  Scheduler& scheduler;
  const int index;
  std::thread thread;

  std::mutex mu;  // guards ready, blocked, poll_from, sleeping
  std::deque<Task*> ready;
  // Tasks blocked here, whose Wait the worker tries between others. Another worker may take
  // them when this one has been stuck in one task's own code for a while.
  std::vector<Task*> blocked;
  std::size_t poll_from = 0;
  bool sleeping = false;
  // Sizes of `ready` and `blocked`, written under `mu`, read without it: a thief looks at
  // these before it takes the lock, so that an idle worker's search for work does not
  // bounce a busy worker's lock between the cores on every task switch there.
  std::atomic<std::uint32_t> ready_n{0};
  std::atomic<std::uint32_t> blocked_n{0};
  std::atomic<std::uint32_t> wake{0};  // futex word: bumped to wake a sleeping worker

  // For the monitor.
  std::atomic<std::uint64_t> resumes{0};
  std::atomic<std::uint64_t> running_since_ns{0};  // 0: not running a task
  std::atomic<bool> idle{false};
  // How long this worker spins on its blocked tasks before parking them (worker thread only).
  std::uint64_t spin_budget_ns = 50'000;

  // Queues `task` and wakes the worker if it sleeps.
  void push(Task* task) {
    task->ready_since_ns = Waiter::now_ns();
    bool wake_it = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      task->worker = this;
      ready.push_back(task);
      ready_n.store(static_cast<std::uint32_t>(ready.size()), std::memory_order_relaxed);
      if (sleeping) {
        sleeping = false;
        wake_it = true;
      }
    }
    if (wake_it) {
      wake.fetch_add(1, std::memory_order_release);
      futex_wake(wake);
    }
  }
  // Wakes the worker if it sleeps (to look for work to steal).
  void nudge() {
    bool wake_it = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      if (sleeping) {
        sleeping = false;
        wake_it = true;
      }
    }
    if (wake_it) {
      wake.fetch_add(1, std::memory_order_release);
      futex_wake(wake);
    }
  }
};

namespace {
thread_local Worker* tl_worker = nullptr;
thread_local Task* tl_task = nullptr;

Task* poll_blocked(Worker& w);
bool park_blocked(Worker& w);
}  // namespace

Task* current_task() noexcept { return tl_task; }

void block(Wait& wait) {
  Task* t = tl_task;
  t->next = Task::Next::kBlock;
  t->wait = &wait;
  t->back = std::move(t->back).resume();
}

void make_ready(Task* task) noexcept {
  try {
    task->worker->push(task);
  } catch (...) {  // allocation in the deque: nothing sane left to do
    std::terminate();
  }
}

Scheduler::Scheduler(SchedulerOptions options) : options_(options) {
  int n = options_.workers > 0 ? options_.workers : cpus_allowed();
  if (options_.tasks_hint > 0 && n > options_.tasks_hint) n = options_.tasks_hint;
  if (n < 1) n = 1;
  if (n > kMaxWorkers) n = kMaxWorkers;
  base_workers_ = n;
  for (int i = 0; i < n; ++i) add_worker();
  monitor_ = std::thread([this] { monitor(); });
}

Scheduler::~Scheduler() {
  if (abandoned_.load()) return;
  {
    std::unique_lock<std::mutex> lock(done_mu_);
    done_cv_.wait(lock, [&] { return live_.load() == 0; });
  }
  stopping_.store(true);
  {
    std::lock_guard<std::mutex> lock(monitor_mu_);
    monitor_stop_ = true;
  }
  monitor_cv_.notify_all();
  monitor_.join();
  const int n = worker_count_.load();
  for (int i = 0; i < n; ++i) workers_[static_cast<std::size_t>(i)]->nudge();
  for (int i = 0; i < n; ++i) workers_[static_cast<std::size_t>(i)]->thread.join();
}

void Scheduler::abandon() {
  abandoned_.store(true);
  {
    std::lock_guard<std::mutex> lock(monitor_mu_);
    monitor_stop_ = true;
  }
  monitor_cv_.notify_all();
  if (monitor_.joinable()) monitor_.join();
  const int n = worker_count_.load();
  for (int i = 0; i < n; ++i) workers_[static_cast<std::size_t>(i)]->thread.detach();
}

Worker& Scheduler::add_worker() {
  std::lock_guard<std::mutex> lock(add_mu_);
  const int i = worker_count_.load();
  auto worker = std::make_unique<Worker>(*this, i);
  Worker& w = *worker;
  workers_[static_cast<std::size_t>(i)] = std::move(worker);
  w.thread = std::thread([this, &w] { run_worker(w); });
  worker_count_.store(i + 1, std::memory_order_release);
  return w;
}

void Scheduler::spawn(std::function<void()> body, int worker, const crash::CopyRecord* record) {
  auto* t = new Task;
  t->body = std::move(body);
  t->record = record;
  t->scheduler = this;
  t->fiber = ctx::fiber(std::allocator_arg, ctx::protected_fixedsize_stack(options_.stack_size),
                        [t](ctx::fiber&& back) {
                          t->back = std::move(back);
                          try {
                            t->body();
                          } catch (...) {  // the body catches what it can report; this is a bug
                            std::cerr << "sluice: internal error: an exception left a task" << std::endl;
                            std::terminate();
                          }
                          t->next = Task::Next::kDone;
                          return std::move(t->back);
                        });
  live_.fetch_add(1);
  const int n = base_workers_;
  workers_[static_cast<std::size_t>(((worker % n) + n) % n)]->push(t);
}

void Scheduler::run_worker(Worker& w) {
  crash::AltStack alt_stack;  // the crash handler's stack, when a task overflows its own
  tl_worker = &w;
  while (Task* t = next_task(w)) resume(w, t);
  tl_worker = nullptr;
}

Task* Scheduler::steal(Worker& thief, std::uint64_t min_wait_ns) {
  const int n = worker_count_.load(std::memory_order_acquire);
  const std::uint64_t now = Waiter::now_ns();
  for (int k = 1; k < n; ++k) {
    Worker& victim = *workers_[static_cast<std::size_t>((thief.index + k) % n)];
    const std::uint64_t since = victim.running_since_ns.load(std::memory_order_relaxed);
    const bool stuck = since != 0 && now - since >= min_wait_ns;  // in one task's code for long
    if (victim.ready_n.load(std::memory_order_relaxed) == 0 &&
        !(stuck && victim.blocked_n.load(std::memory_order_relaxed) != 0)) {
      continue;  // nothing to take: do not touch its lock
    }
    std::vector<Task*> moved;
    Task* run = nullptr;
    {
      std::lock_guard<std::mutex> lock(victim.mu);
      if (!victim.ready.empty() && now - victim.ready.front()->ready_since_ns >= min_wait_ns) {
        run = victim.ready.front();
        victim.ready.pop_front();
        victim.ready_n.store(static_cast<std::uint32_t>(victim.ready.size()), std::memory_order_relaxed);
      }
      if (stuck && !victim.blocked.empty()) {
        moved.swap(victim.blocked);
        victim.poll_from = 0;
        victim.blocked_n.store(0, std::memory_order_relaxed);
      }
    }
    if (!moved.empty()) {
      std::lock_guard<std::mutex> lock(thief.mu);
      thief.blocked.insert(thief.blocked.end(), moved.begin(), moved.end());
      thief.blocked_n.store(static_cast<std::uint32_t>(thief.blocked.size()), std::memory_order_relaxed);
    }
    if (run != nullptr) {
      run->worker = &thief;
      return run;
    }
    if (!moved.empty()) return poll_blocked(thief);
  }
  return nullptr;
}

namespace {

// The first blocked task whose wait now succeeds, in turn from where the last one was found.
// The attempts run without the worker's lock: one may notify a Waiter, whose wake-up queues
// a task on this very worker.
Task* poll_blocked(Worker& w) {
  std::vector<Task*> blocked;
  std::size_t from;
  {
    std::lock_guard<std::mutex> lock(w.mu);
    if (w.blocked.empty()) return nullptr;
    blocked.swap(w.blocked);
    from = w.poll_from;
  }
  Task* found = nullptr;
  const std::size_t n = blocked.size();
  std::size_t at = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const std::size_t i = (from + k) % n;
    if (blocked[i]->wait->attempt()) {
      found = blocked[i];
      blocked.erase(blocked.begin() + static_cast<std::ptrdiff_t>(i));
      at = n > 1 ? i % (n - 1) : 0;
      break;
    }
  }
  std::lock_guard<std::mutex> lock(w.mu);
  if (!w.blocked.empty()) blocked.insert(blocked.end(), w.blocked.begin(), w.blocked.end());
  w.blocked.swap(blocked);
  w.blocked_n.store(static_cast<std::uint32_t>(w.blocked.size()), std::memory_order_relaxed);
  w.poll_from = found != nullptr ? at : from;
  return found;
}

// The worker is about to sleep: hands every blocked task to its Waiter (one heavy barrier
// for all), or finds one that can run after all. True when something became runnable.
bool park_blocked(Worker& w) {
  std::vector<Task*> blocked;
  {
    std::lock_guard<std::mutex> lock(w.mu);
    blocked.swap(w.blocked);
    w.poll_from = 0;
    w.blocked_n.store(0, std::memory_order_relaxed);
  }
  if (blocked.empty()) return false;
  std::vector<std::uint32_t> armed(blocked.size());
  for (std::size_t i = 0; i < blocked.size(); ++i) armed[i] = blocked[i]->wait->arm();
  heavy_barrier();  // pairs with light_barrier() in each Waiter's notify()
  bool runnable = false;
  for (std::size_t i = 0; i < blocked.size(); ++i) {
    Task* t = blocked[i];
    if (t->wait->attempt() || !t->wait->park(t, armed[i])) {
      w.push(t);
      runnable = true;
    }
  }
  return runnable;
}

}  // namespace

Task* Scheduler::next_task(Worker& w) {
  std::uint64_t idle_since = 0;
  bool spun_blocked = false;  // this wait spun on blocked tasks
  auto found = [&](Task* t) {
    w.idle.store(false, std::memory_order_relaxed);
    if (spun_blocked) w.spin_budget_ns = std::min(kBlockedSpinMaxNs, w.spin_budget_ns * 2);
    return t;
  };
  for (;;) {
    {
      std::lock_guard<std::mutex> lock(w.mu);
      if (!w.ready.empty()) {
        Task* t = w.ready.front();
        w.ready.pop_front();
        w.ready_n.store(static_cast<std::uint32_t>(w.ready.size()), std::memory_order_relaxed);
        return found(t);
      }
      if (stopping_.load()) return nullptr;
    }
    if (Task* t = poll_blocked(w)) return found(t);
    w.idle.store(true, std::memory_order_relaxed);
    if (Task* t = steal(w, kStealAfterNs)) return found(t);
    const std::uint64_t now = Waiter::now_ns();
    if (idle_since == 0) idle_since = now;
    bool has_blocked;
    {
      std::lock_guard<std::mutex> lock(w.mu);
      has_blocked = !w.blocked.empty();
    }
    if (now - idle_since < (has_blocked ? w.spin_budget_ns : kIdleSpinNs)) {
      spun_blocked = spun_blocked || has_blocked;
      for (int i = 0; i < 16; ++i) cpu_relax();
      continue;
    }
    if (has_blocked) w.spin_budget_ns = std::max(kBlockedSpinMinNs, w.spin_budget_ns / 2);
    spun_blocked = false;
    if (park_blocked(w)) {
      idle_since = 0;
      continue;
    }
    std::uint32_t seen;
    {
      std::lock_guard<std::mutex> lock(w.mu);
      if (!w.ready.empty() || stopping_.load()) continue;
      w.sleeping = true;
      seen = w.wake.load(std::memory_order_acquire);
    }
    futex_wait(w.wake, seen, 1000);
    {
      std::lock_guard<std::mutex> lock(w.mu);
      w.sleeping = false;
    }
    idle_since = 0;
  }
}

void Scheduler::resume(Worker& w, Task* t) {
  t->worker = &w;
  w.resumes.fetch_add(1, std::memory_order_relaxed);
  w.running_since_ns.store(Waiter::now_ns(), std::memory_order_relaxed);
  tl_task = t;
  crash::set_current(t->record);
  t->fiber = std::move(t->fiber).resume();
  crash::set_current(nullptr);
  tl_task = nullptr;
  w.running_since_ns.store(0, std::memory_order_relaxed);
  if (t->next == Task::Next::kDone) {
    finished(t);
  } else {
    std::lock_guard<std::mutex> lock(w.mu);
    w.blocked.push_back(t);  // tried between other tasks from now on
    w.blocked_n.store(static_cast<std::uint32_t>(w.blocked.size()), std::memory_order_relaxed);
  }
}

void Scheduler::finished(Task* t) {
  delete t;  // its fiber has returned: deleting it frees the stack
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    live_.fetch_sub(1);
  }
  done_cv_.notify_all();
}

void Scheduler::monitor() {
  std::unique_lock<std::mutex> lock(monitor_mu_);
  while (!monitor_cv_.wait_for(lock, kMonitorPeriod, [&] { return monitor_stop_; })) {
    const int n = worker_count_.load(std::memory_order_acquire);
    const std::uint64_t now = Waiter::now_ns();
    bool waiting = false;  // a task has waited long for its worker
    for (int i = 0; i < n; ++i) {
      Worker& w = *workers_[static_cast<std::size_t>(i)];
      const std::uint64_t since = w.running_since_ns.load(std::memory_order_relaxed);
      const bool stuck = since != 0 && now - since >= kStealAfterNs;
      std::lock_guard<std::mutex> wl(w.mu);
      if (!w.ready.empty() && now - w.ready.front()->ready_since_ns >= kStealAfterNs) waiting = true;
      if (stuck && !w.blocked.empty()) waiting = true;
    }
    if (!waiting) continue;
    // Someone idle can take it: wake the sleepers (they steal before sleeping again).
    bool someone_idle = false;
    for (int i = 0; i < n; ++i) {
      Worker& w = *workers_[static_cast<std::size_t>(i)];
      if (w.idle.load(std::memory_order_relaxed)) {
        someone_idle = true;
        w.nudge();
      }
    }
    if (someone_idle) continue;
    // Every worker busy: if each has run one task for long (own code, a blocking system
    // call), start one more worker to take the waiting tasks.
    bool all_stuck = true;
    for (int i = 0; i < n && all_stuck; ++i) {
      const std::uint64_t since = workers_[static_cast<std::size_t>(i)]->running_since_ns.load(std::memory_order_relaxed);
      all_stuck = since != 0 && now - since >= kStuckNs;
    }
    if (all_stuck && n < kMaxWorkers) add_worker();
  }
}

}  // namespace sluice::sched
