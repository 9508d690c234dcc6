#include "sched/scheduler.h"

#include "log/backend.h"

#include <linux/futex.h>
#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <deque>
#include <vector>
#include <exception>

#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SLUICE_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SLUICE_ASAN 1
#endif
#if SLUICE_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include "sched/layout_trial.h"
#include "sync/asymmetric_barrier.h"
#include "sync/cpu_relax.h"
#include "sync/thread_name.h"
#include "sync/waiter.h"

namespace sluice::sched {

namespace ctx = boost::context;

namespace {

// A task's stack: boost's guarded one. Under AddressSanitizer (the fuzzing build) the frames
// a fiber leaves behind when it switches away for the last time keep their redzones poisoned
// in ASan's shadow after the stack is unmapped, and a later mmap at that address (a buffer
// pool's memory) is then reported as a stack-buffer-underflow. Clearing the shadow of the
// stack as it goes prevents that; elsewhere this is boost's allocator unchanged.
class TaskStack : public ctx::protected_fixedsize_stack {
 public:
  using ctx::protected_fixedsize_stack::protected_fixedsize_stack;
  void deallocate(ctx::stack_context& sctx) noexcept {
#if SLUICE_ASAN
    __asan_unpoison_memory_region(static_cast<char*>(sctx.sp) - sctx.size, sctx.size);
#endif
    ctx::protected_fixedsize_stack::deallocate(sctx);
  }
};

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
// A worker still spinning after this long (on its blocked tasks, or watching a stuck worker)
// offers its core to any other runnable thread between looks (sched_yield(2): returns at
// once when there is none). Where the cores are oversubscribed (a Java copy's thread, the
// data plane's I/O thread, another sluice process) the thread it waits for is often the
// one that wants this core. Measured with
// bench/whole_graph.py (two app daemons on 2 cores): 1.6M -> 2.2M buffers/s across; yielding
// from the first look instead cost ~20 % of a remote stream's 64 KiB throughput and halved
// 100 B over TLS (net_bench): a short wait is still best spent spinning.
constexpr std::uint64_t kYieldAfterNs = 5'000;
// A ready task that has waited this long for its busy worker may be taken by another.
constexpr std::uint64_t kStealAfterNs = 200'000;
// A worker that has run one task this long is stuck, whatever its CPU clock says.
constexpr std::uint64_t kSurelyStuckNs = 20'000'000;
// A blocked task is taken from a stuck worker only once it has stayed there this long.
constexpr std::uint64_t kSettleNs = 2'000'000;
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

}  // namespace

int cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) return CPU_COUNT(&set);
  const unsigned n = std::thread::hardware_concurrency();
  return n > 0 ? static_cast<int>(n) : 1;
}

class Task {
 public:
  enum class Next { kBlock, kDone };

  ctx::fiber fiber;  // the task, while it is not running
  ctx::fiber back;   // while it runs: its worker's context, to switch back to
  std::function<void()> body;
  const crash::CopyRecord* record = nullptr;
  Scheduler* scheduler = nullptr;
  Worker* worker = nullptr;  // where it runs or waits to run
  TaskHome home;
  std::uint32_t epoch = 0;  // the layout it was placed for (Scheduler::layout_epoch_)
  Next next = Next::kBlock;
  Wait* wait = nullptr;  // while blocked: what it waits to do
  std::uint64_t ready_since_ns = 0;
  std::uint64_t moved_ns = 0;  // when it last changed workers (stealing takes settled tasks)
  // When it last blocked: its worker's first clock read after the switch away (0 until
  // then). Atomic because a worker that takes the task from another may resume it.
  std::atomic<std::uint64_t> blocked_at{0};
  std::uint64_t away_ns = 0;  // what block() returns: blocked_at to the resume, set by resume()
};

class Worker {
 public:
  Worker(Scheduler& s, int i) : scheduler(s), index(i) {}
  ~Worker() {
    if (stat_fd >= 0) ::close(stat_fd);
  }

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
  // Tasks that live here: running, ready, blocked or parked on a Waiter (their wake-up
  // queues them here).
  std::atomic<int> tasks_n{0};
  std::atomic<std::uint32_t> wake{0};  // futex word: bumped to wake a sleeping worker

  // For the monitor.
  std::atomic<std::uint64_t> running_since_ns{0};  // 0: not running a task
  std::atomic<bool> idle{false};
  // Its thread's CPU-time clock and /proc/self/task/TID/stat, to tell a worker busy in a
  // copy's code (or asleep in a system call) from one that waits for a CPU; set once the
  // thread runs.
  std::atomic<bool> introspect{false};
  clockid_t cpu_clock{};
  int stat_fd = -1;
  // This worker as a thief: what it last saw of a stuck victim (worker thread only).
  struct Watch {
    const Worker* victim = nullptr;
    std::uint64_t since = 0;   // the victim's running_since_ns then
    std::uint64_t at = 0;      // when
    std::uint64_t cpu = 0;     // the victim's CPU time then
  } watch;
  // The monitor's last look at it (monitor only): since, and CPU time then.
  std::uint64_t monitor_since = 0;
  std::uint64_t monitor_at = 0;
  std::uint64_t monitor_cpu = 0;
  // How long this worker spins on its blocked tasks before parking them (worker thread only).
  std::uint64_t spin_budget_ns = 50'000;
  // The task that blocked last, as resume() leaves it (worker thread only): `unstamped`
  // until the worker's next clock read gives it its blocked_at, `pending` until the worker's
  // next look under mu puts it on `blocked`. Both come before the worker resumes another
  // task, moves its blocked tasks or sleeps, so no other thread ever sees a task in either.
  // A switch between two tasks thus reads the clock once (at the resume) and takes mu twice
  // (poll_blocked), not three times and four.
  Task* unstamped = nullptr;
  Task* pending = nullptr;

  // Queues `task` and wakes the worker if it sleeps.
  void push(Task* task) {
    task->ready_since_ns = Waiter::now_ns();
    wake_after([&] {
      task->worker = this;
      ready.push_back(task);
      ready_n.store(static_cast<std::uint32_t>(ready.size()), std::memory_order_relaxed);
    });
  }
  // Wakes the worker if it sleeps (to look for work to steal).
  void nudge() {
    wake_after([] {});
  }
  // Runs `change` under mu, then wakes the worker if it was asleep (the futex wake after the
  // lock is released).
  template <typename Change>
  void wake_after(Change change) {
    bool wake_it = false;
    {
      std::lock_guard<std::mutex> lock(mu);
      change();
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

// The worker's clock read `now` is when the task that blocked last started to wait.
void stamp(Worker& w, std::uint64_t now) noexcept {
  if (w.unstamped == nullptr) return;
  w.unstamped->blocked_at.store(now, std::memory_order_relaxed);
  w.unstamped = nullptr;
}

// Puts the task that blocked last on `blocked`. REQUIRES: w.mu held, on w's own thread.
void queue_pending(Worker& w) {
  if (w.pending == nullptr) return;
  w.blocked.push_back(w.pending);
  w.blocked_n.store(static_cast<std::uint32_t>(w.blocked.size()), std::memory_order_relaxed);
  w.pending = nullptr;
}

// Every task blocked on `w`, taken off it (to park, or to hand to another worker), on w's
// own thread.
std::vector<Task*> take_blocked(Worker& w) {
  std::vector<Task*> blocked;
  std::lock_guard<std::mutex> lock(w.mu);
  queue_pending(w);
  blocked.swap(w.blocked);
  w.poll_from = 0;
  w.blocked_n.store(0, std::memory_order_relaxed);
  return blocked;
}
// `w` has been in one task's code (or descheduled in it) for `ns` or more.
bool in_one_task_for(const Worker& w, std::uint64_t now, std::uint64_t ns) {
  const std::uint64_t since = w.running_since_ns.load(std::memory_order_relaxed);
  return since != 0 && now - since >= ns;
}

// Puts `moved`, blocked tasks taken off `from`, on `to`'s blocked list, where `to` tries them
// between its own tasks. Neither worker's lock held; the caller wakes `to` if it must.
void move_blocked(Worker& from, Worker& to, const std::vector<Task*>& moved, std::uint64_t now) {
  const int count = static_cast<int>(moved.size());
  from.tasks_n.fetch_sub(count, std::memory_order_relaxed);
  to.tasks_n.fetch_add(count, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(to.mu);
  for (Task* t : moved) {
    t->worker = &to;
    t->moved_ns = now;
  }
  to.blocked.insert(to.blocked.end(), moved.begin(), moved.end());
  to.blocked_n.store(static_cast<std::uint32_t>(to.blocked.size()), std::memory_order_relaxed);
}
}  // namespace

Task* current_task() noexcept { return tl_task; }

int current_worker() noexcept { return tl_worker != nullptr ? tl_worker->index : -1; }

std::uint64_t block(Wait& wait) {
  Task* t = tl_task;
  t->next = Task::Next::kBlock;
  t->wait = &wait;
  t->back = std::move(t->back).resume();
  return t->away_ns;
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
  spread_.store(options_.layout == LayoutChoice::kSpread, std::memory_order_relaxed);
  try {
    for (int i = 0; i < n; ++i) add_worker();
    monitor_ = std::thread([this] {
      name_this_thread("sluice-monitor");
      monitor();
    });
  } catch (...) {
    // No thread to be had (a limit on threads or address space): the workers started so far
    // stop, since the destructor does not run for a constructor that throws.
    stop_workers();
    throw;
  }
}

void Scheduler::stop_workers() {
  stopping_.store(true);
  const int n = worker_count_.load();
  for (int i = 0; i < n; ++i) workers_[static_cast<std::size_t>(i)]->nudge();
  for (int i = 0; i < n; ++i) workers_[static_cast<std::size_t>(i)]->thread.join();
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
  stop_workers();
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
  // If no thread can be had, the slot stays beyond worker_count_, for the next try.
  workers_[static_cast<std::size_t>(i)] = std::move(worker);
  w.thread = std::thread([this, &w, i] {
    name_this_thread("sluice-wkr-" + std::to_string(i));
    run_worker(w);
  });
  worker_count_.store(i + 1, std::memory_order_release);
  return w;
}

void Scheduler::spawn(std::function<void()> body, TaskHome home, const crash::CopyRecord* record) {
  auto owned = std::make_unique<Task>();  // until its fiber has a stack (that may throw)
  Task* t = owned.get();
  t->body = std::move(body);
  t->record = record;
  t->scheduler = this;
  t->fiber = ctx::fiber(std::allocator_arg, TaskStack(options_.stack_size),
                        [t](ctx::fiber&& back) {
                          t->back = std::move(back);
                          try {
                            t->body();
                          } catch (...) {  // the body catches what it can report; this is a bug
                            logging::plain_line(LogLevel::kError, "sluice: internal error: an exception left a task");
                            std::terminate();
                          }
                          t->next = Task::Next::kDone;
                          return std::move(t->back);
                        });
  (void)owned.release();  // the workers own it now; it deletes itself when done
  if (live_.fetch_add(1) == 0) {
    // The monitor sleeps while no task lives; this one is for it to watch.
    std::lock_guard<std::mutex> lock(monitor_mu_);
    monitor_cv_.notify_all();
  }
  const int n = base_workers_;
  auto wrap = [n](int i) { return ((i % n) + n) % n; };
  t->home = {wrap(home.packed), wrap(home.spread)};
  if (t->home.packed != t->home.spread) homes_differ_.store(true, std::memory_order_relaxed);
  // Acquire: the epoch is bumped after spread_ is set (set_spread).
  t->epoch = layout_epoch_.load(std::memory_order_acquire);
  Worker& w = *workers_[static_cast<std::size_t>(spread() ? t->home.spread : t->home.packed)];
  t->worker = &w;
  w.tasks_n.fetch_add(1, std::memory_order_relaxed);
  try {
    w.push(t);
  } catch (...) {  // no memory for the queue: ended before it began, so the destructor's wait can end
    finished(t);   // a fiber never resumed: deleting it frees its stack
    throw;
  }
}

void Scheduler::set_spread(bool spread) {
  // Read first: every resume() reads this line, and the monitor calls this every millisecond.
  if (spread_.load(std::memory_order_relaxed) == spread) return;
  spread_.store(spread, std::memory_order_relaxed);
  layout_epoch_.fetch_add(1, std::memory_order_release);
}

void Scheduler::run_worker(Worker& w) {
  crash::AltStack alt_stack;  // the crash handler's stack, when a task overflows its own
  tl_worker = &w;
  {
    const std::string path = "/proc/self/task/" + std::to_string(::gettid()) + "/stat";
    w.stat_fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (w.stat_fd >= 0 && pthread_getcpuclockid(pthread_self(), &w.cpu_clock) == 0) {
      w.introspect.store(true, std::memory_order_release);
    }
  }
  while (Task* t = next_task(w)) resume(w, t);
  tl_worker = nullptr;
}

Task* Scheduler::steal(Worker& thief, std::uint64_t min_wait_ns) {
  const int n = worker_count_.load(std::memory_order_acquire);
  const std::uint64_t now = Waiter::now_ns();
  stamp(thief, now);
  for (int k = 1; k < n; ++k) {
    Worker& victim = *workers_[static_cast<std::size_t>((thief.index + k) % n)];
    // Acquire: a blocked task taken from a stuck victim carries the stamp the victim's
    // resume() gave it before storing `since` (release).
    const std::uint64_t since = victim.running_since_ns.load(std::memory_order_acquire);
    const bool stuck = since != 0 && now - since >= min_wait_ns;  // in one task's code for long
    if (victim.ready_n.load(std::memory_order_relaxed) == 0 &&
        !(stuck && victim.blocked_n.load(std::memory_order_relaxed) != 0)) {
      continue;  // nothing to take: do not touch its lock
    }
    if (since != 0 && !working(thief, victim, since, now)) continue;
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
        // Only tasks that have stayed there a while: a task moved back and forth every time
        // one of two workers is descheduled for a moment runs cold on both.
        auto settled = [&](Task* t) { return now - t->moved_ns >= kSettleNs; };
        auto keep = std::stable_partition(victim.blocked.begin(), victim.blocked.end(),
                                          [&](Task* t) { return !settled(t); });
        moved.assign(keep, victim.blocked.end());
        victim.blocked.erase(keep, victim.blocked.end());
        victim.poll_from = 0;
        victim.blocked_n.store(static_cast<std::uint32_t>(victim.blocked.size()), std::memory_order_relaxed);
      }
    }
    if (!moved.empty()) move_blocked(victim, thief, moved, now);
    if (run != nullptr) {
      victim.tasks_n.fetch_sub(1, std::memory_order_relaxed);
      thief.tasks_n.fetch_add(1, std::memory_order_relaxed);
      run->worker = &thief;
      run->moved_ns = now;
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
    queue_pending(w);
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
  std::vector<Task*> blocked = take_blocked(w);
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
    // ready_n without the lock first: the usual switch between two tasks that wait for each
    // other finds no ready task, and a push it misses now is seen on the next look (the
    // last look before sleeping is under the lock).
    if (w.ready_n.load(std::memory_order_relaxed) != 0 || stopping_.load()) {
      std::lock_guard<std::mutex> lock(w.mu);
      queue_pending(w);
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
    stamp(w, now);  // before any blocked task can be parked or handed over
    if (idle_since == 0) idle_since = now;
    bool has_blocked;
    {
      std::lock_guard<std::mutex> lock(w.mu);
      has_blocked = !w.blocked.empty();
    }
    // A worker watching a stuck one (to take its tasks if it is really busy) stays awake to
    // look again.
    const bool watching = w.watch.victim != nullptr && w.watch.since != 0 &&
                          w.watch.victim->running_since_ns.load(std::memory_order_relaxed) == w.watch.since;
    const std::uint64_t budget = has_blocked ? w.spin_budget_ns : watching ? kStealAfterNs : kIdleSpinNs;
    if (now - idle_since < budget) {
      spun_blocked = spun_blocked || has_blocked;
      for (int i = 0; i < 16; ++i) cpu_relax();
      if (now - idle_since >= kYieldAfterNs) sched_yield();
      continue;
    }
    if (has_blocked) w.spin_budget_ns = std::max(kBlockedSpinMinNs, w.spin_budget_ns / 2);
    spun_blocked = false;
    // Spread on purpose: the halves stay where the layout put them.
    if (has_blocked && !spread() && hand_over_blocked(w)) {
      idle_since = 0;
      continue;
    }
    if (park_blocked(w)) {
      idle_since = 0;
      continue;
    }
    std::uint32_t seen;
    {
      std::lock_guard<std::mutex> lock(w.mu);
      // A task may have been moved here (relocate, hand_over_blocked) since the park.
      if (!w.ready.empty() || !w.blocked.empty() || stopping_.load()) continue;
      w.sleeping = true;
      seen = w.wake.load(std::memory_order_acquire);
    }
    asleep_workers_.fetch_add(1);
    futex_wait(w.wake, seen, 1000);
    // Seq_cst with the monitor's store of monitor_resting_ and its count of sleepers: either
    // it sees this worker awake, or this worker sees it resting and wakes it.
    asleep_workers_.fetch_sub(1);
    if (monitor_resting_.load()) {
      std::lock_guard<std::mutex> lock(monitor_mu_);
      monitor_cv_.notify_all();
    }
    {
      std::lock_guard<std::mutex> lock(w.mu);
      w.sleeping = false;
    }
    idle_since = 0;
  }
}

namespace {

// CPU time the worker's thread has used, in ns (the kernel counts the running slice too).
std::uint64_t cpu_ns(const Worker& w) {
  struct timespec t;
  if (clock_gettime(w.cpu_clock, &t) != 0) return 0;
  return static_cast<std::uint64_t>(t.tv_sec) * 1'000'000'000u + static_cast<std::uint64_t>(t.tv_nsec);
}

// The worker's thread sleeps in the kernel (state S or D in /proc/.../stat): a copy's
// blocking system call, not a wait for a CPU (state R).
bool asleep(const Worker& w) {
  char text[256];
  const ssize_t got = ::pread(w.stat_fd, text, sizeof text - 1, 0);
  if (got <= 0) return false;
  text[got] = '\0';
  const char* close = std::strrchr(text, ')');  // "pid (comm) S ..."; comm may hold spaces
  return close != nullptr && close[1] == ' ' && (close[2] == 'S' || close[2] == 'D');
}

}  // namespace

bool Scheduler::working(Worker& thief, const Worker& victim, std::uint64_t since, std::uint64_t now) {
  if (!victim.introspect.load(std::memory_order_acquire)) return true;  // cannot tell: take it
  // No time slice lasts this long: whatever the CPU clock says (on a loaded machine a copy
  // computing gets a small share of a CPU), its other tasks have waited enough.
  if (now - since >= kSurelyStuckNs) return true;
  const std::uint64_t cpu = cpu_ns(victim);
  Worker::Watch& seen = thief.watch;
  if (seen.victim != &victim || seen.since != since) {
    seen = {&victim, since, now, cpu};
    return false;  // look again in a while
  }
  if (now - seen.at < kStealAfterNs / 2) return false;
  // Busy in a copy's code, or asleep in a system call: its other tasks can run elsewhere.
  // Waiting for a CPU (other processes have them): it will switch tasks by itself once it
  // runs again, and taking its tasks now would split a graph whose halves then wait for
  // each other, every hand-off between them a wake-up through the kernel.
  if ((cpu - seen.cpu) * 2 >= now - seen.at) return true;
  return asleep(victim);
}

bool Scheduler::hand_over_blocked(Worker& w) {
  // Give them to the worker that has the most tasks, when it has more than this one and is
  // not itself stuck in one task's code (or descheduled): there they are tried between the
  // tasks they wait for. Without this, a split made by stealing from a worker that the
  // kernel descheduled for a time slice (other processes want the cores) stays split:
  // every hand-off between the halves then parks and wakes through the kernel.
  const int n = worker_count_.load(std::memory_order_acquire);
  const std::uint64_t now = Waiter::now_ns();
  Worker* target = nullptr;
  int most = w.tasks_n.load(std::memory_order_relaxed);
  for (int k = 1; k < n; ++k) {
    Worker& other = *workers_[static_cast<std::size_t>((w.index + k) % n)];
    const int tasks = other.tasks_n.load(std::memory_order_relaxed);
    // Ties go to the lower index, so that two workers with as many tasks do not swap them.
    const bool more = tasks > most || (tasks == most && tasks > 0 && other.index < w.index && target == nullptr);
    if (more && !in_one_task_for(other, now, kStealAfterNs)) {
      target = &other;
      most = tasks;
    }
  }
  if (target == nullptr) return false;
  std::vector<Task*> moved = take_blocked(w);
  if (moved.empty()) return false;
  move_blocked(w, *target, moved, now);
  target->nudge();
  return true;
}

void Scheduler::resume(Worker& w, Task* t) {
  t->worker = &w;
  const std::uint64_t now = Waiter::now_ns();
  stamp(w, now);  // the task that blocked before this one (or this one, back at once)
  const std::uint64_t blocked_at = t->blocked_at.load(std::memory_order_relaxed);
  t->away_ns = blocked_at != 0 && now > blocked_at ? now - blocked_at : 0;
  w.running_since_ns.store(now, std::memory_order_release);  // after the stamp (steal)
  tl_task = t;
  crash::set_current(t->record);
  t->fiber = std::move(t->fiber).resume();
  crash::set_current(nullptr);
  tl_task = nullptr;
  w.running_since_ns.store(0, std::memory_order_relaxed);
  if (t->next == Task::Next::kDone) {
    finished(t);
    return;
  }
  // Tried between other tasks from now on; next_task() stamps and queues it.
  t->blocked_at.store(0, std::memory_order_relaxed);
  w.unstamped = t;
  w.pending = t;
  // The layout changed since it was placed: to its home in the new one. Spread, a task
  // that an idle worker took (it waited 200 us for its own) also goes home once settled
  // there: nothing else merges or restores the halves in that layout.
  const std::uint32_t epoch = layout_epoch_.load(std::memory_order_acquire);
  if (t->epoch != epoch ||
      (spread() && t->home.spread != w.index && now - t->moved_ns >= kSettleNs)) {
    // Placed for this epoch once it is home (or on its way); it tries again at its next
    // block while its home is stuck in one task's code.
    if (relocate(w, t)) t->epoch = epoch;
    return;
  }
  // A task left alone here (the others were taken while this worker was busy with it)
  // joins the worker that has the rest, where its peers usually are: alone, every
  // hand-off with them crosses cores, and stalls whenever the kernel deschedules either.
  // Not when spread on purpose.
  if (w.tasks_n.load(std::memory_order_relaxed) == 1 && !spread()) {
    const std::uint64_t then = Waiter::now_ns();
    stamp(w, then);
    if (then - t->moved_ns >= kSettleNs) hand_over_blocked(w);  // takes it from `pending`
  }
}

bool Scheduler::relocate(Worker& w, Task* t) {
  Worker& target = *workers_[static_cast<std::size_t>(spread() ? t->home.spread : t->home.packed)];
  if (&target == &w) return true;
  const std::uint64_t now = Waiter::now_ns();
  // Not to a worker stuck in one task's code (it would not try the task before that task
  // waits, and an idle worker would take it back 2 ms later, and so on).
  if (in_one_task_for(target, now, kStealAfterNs)) return false;
  stamp(w, now);  // t's blocked_at, before another worker can resume it
  w.pending = nullptr;  // t, which resume() just left there
  move_blocked(w, target, {t}, now);  // rare: once a task per change of layout
  target.nudge();
  return true;
}

void Scheduler::finished(Task* t) {
  t->worker->tasks_n.fetch_sub(1, std::memory_order_relaxed);
  delete t;  // its fiber has returned: deleting it frees the stack
  {
    std::lock_guard<std::mutex> lock(done_mu_);
    live_.fetch_sub(1);
  }
  done_cv_.notify_all();
}

bool Scheduler::stuck_for_long(Worker& w, std::uint64_t now) {
  const std::uint64_t since = w.running_since_ns.load(std::memory_order_relaxed);
  if (since == 0 || now - since < kStuckNs) return false;
  if (!w.introspect.load(std::memory_order_acquire)) return true;
  const std::uint64_t cpu = cpu_ns(w);
  if (w.monitor_since != since) {
    w.monitor_since = since;
    w.monitor_at = now;
    w.monitor_cpu = cpu;
    return false;
  }
  if (now - since >= 5 * kSurelyStuckNs) return true;  // as working(), at the monitor's pace
  if (now - w.monitor_at < kStuckNs / 2) return false;
  // As working(): in a copy's code or a system call, not waiting for a CPU.
  return (cpu - w.monitor_cpu) * 2 >= now - w.monitor_at || asleep(w);
}

void Scheduler::monitor() {
  // Tries both layouts now and then, when there is a choice to make: tasks whose homes
  // differ, more than one worker, and a measure of the work done.
  LayoutTrial trial;
  // When a new worker's thread could not be had: not tried again for a second, said once.
  std::uint64_t next_worker_try_ns = 0;
  bool said_no_worker = false;
  const bool trying = options_.layout == LayoutChoice::kAuto && options_.progress && base_workers_ > 1;
  std::unique_lock<std::mutex> lock(monitor_mu_);
  for (;;) {
    // Nothing to watch while no task lives (between units of work, a deployed application
    // waiting for its next unit): sleep until spawn() starts one, rather than wake every
    // millisecond for nothing (~1 % of a CPU in an idle `sluice serve`).
    monitor_cv_.wait(lock, [&] { return monitor_stop_ || live_.load() > 0; });
    // Nor while every worker sleeps (tasks live, but all wait: copies between units of work
    // in a deployed application): until one wakes (a task was made ready, or the worker's
    // 1 s look), nothing runs that could be stuck, nor waits for a worker.
    monitor_resting_.store(true);
    monitor_cv_.wait(lock, [&] {
      return monitor_stop_ || asleep_workers_.load() < worker_count_.load(std::memory_order_acquire);
    });
    monitor_resting_.store(false);
    if (monitor_cv_.wait_for(lock, kMonitorPeriod, [&] { return monitor_stop_; })) return;
    const int n = worker_count_.load(std::memory_order_acquire);
    const std::uint64_t now = Waiter::now_ns();
    if (trying && homes_differ_.load(std::memory_order_relaxed)) {
      set_spread(trial.step(now, options_.progress()) == Layout::kSpread);
    }
    bool waiting = false;  // a task has waited long for its worker
    for (int i = 0; i < n; ++i) {
      Worker& w = *workers_[static_cast<std::size_t>(i)];
      const bool stuck = in_one_task_for(w, now, kStealAfterNs);
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
    for (int i = 0; i < n; ++i) {
      if (!stuck_for_long(*workers_[static_cast<std::size_t>(i)], now)) all_stuck = false;
    }
    if (all_stuck && n < kMaxWorkers && now >= next_worker_try_ns) {
      try {
        add_worker();
      } catch (const std::exception& e) {
        // Out of threads or address space (perhaps for a moment: a limit shared with other
        // processes): the waiting tasks wait for a busy worker until a later try succeeds.
        next_worker_try_ns = now + 1'000'000'000;
        if (!said_no_worker) {
          said_no_worker = true;
          logging::plain_line(LogLevel::kWarn, std::string("sluice: cannot start another worker thread (") +
                                                   e.what() + "); tasks wait for the busy workers. "
                                                   "Raise the process's limits (ulimit -u, ulimit -v)");
        }
      }
    }
  }
}

}  // namespace sluice::sched
