#include "sched/scheduler.h"

#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "sync/run_signal.h"
#include "sync/waiter.h"
#include "testing/eventually.h"

namespace sluice::sched {
namespace {

using namespace std::chrono_literals;

using sluice::testing::eventually;

SchedulerOptions with_workers(int workers) {
  SchedulerOptions options;
  options.workers = workers;
  return options;
}

TEST(SchedulerTest, TasksRunAndTheDestructorWaitsForThem) {
  std::atomic<int> ran{0};
  {
    Scheduler s(with_workers(2));
    for (int i = 0; i < 100; ++i) s.spawn([&] { ran.fetch_add(1); }, i, nullptr);
  }
  EXPECT_EQ(ran.load(), 100);
}

// Context switches the kernel counted for every thread of this process so far.
long process_context_switches() {
  long total = 0;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream status(task.path() / "status");
    for (std::string line; std::getline(status, line);) {
      if (line.rfind("voluntary_ctxt_switches:", 0) == 0 || line.rfind("nonvoluntary_ctxt_switches:", 0) == 0) {
        total += std::stol(line.substr(line.find(':') + 1));
      }
    }
  }
  return total;
}

// In `s` (one worker to start with), the first task keeps its worker (calling `hold` in a
// loop) until the second has run. Only another worker, which the monitor starts when the only
// one has been stuck in one task, can run the second. (Without one, the first task gives up
// after 20 s and the same worker then runs the second: gave_up and the worker count tell.)
template <typename Hold>
void expect_second_task_runs_beside(Scheduler& s, Hold hold) {
  struct State {
    std::atomic<bool> second_ran{false};
    std::atomic<bool> gave_up{false};
    std::atomic<bool> first_done{false};
  };
  auto state = std::make_shared<State>();  // the tasks' own: they may outlive a failed ASSERT
  s.spawn(
      [state, hold] {
        const auto deadline = std::chrono::steady_clock::now() + 20s;
        while (!state->second_ran.load()) {
          if (std::chrono::steady_clock::now() > deadline) {
            state->gave_up = true;
            break;
          }
          hold();
        }
        state->first_done = true;
      },
      0, nullptr);
  s.spawn([state] { state->second_ran = true; }, 0, nullptr);
  ASSERT_TRUE(eventually([&] { return state->first_done.load(); }));
  EXPECT_TRUE(state->second_ran.load());
  EXPECT_FALSE(state->gave_up.load()) << "the task that never waits kept the others off its worker";
  EXPECT_GE(s.workers(), 2) << "no worker was added";
}

template <typename Hold>
void expect_second_task_runs_beside(Hold hold) {
  Scheduler s(with_workers(1));
  expect_second_task_runs_beside(s, hold);
}

// A scheduler with no task (between units of work; a deployed application waiting for the
// next one) costs nothing: its monitor and workers sleep until a task is spawned, instead of
// waking every millisecond (300 wake-ups in 300 ms before). And it still watches the next
// unit's tasks: a second task behind one that never waits runs (the monitor adds a worker).
TEST(SchedulerTest, AnIdleSchedulerDoesNotWakeUp) {
  Scheduler s(with_workers(1));
  std::atomic<int> ran{0};
  s.spawn([&] { ran.fetch_add(1); }, 0, nullptr);
  ASSERT_TRUE(eventually([&] { return ran.load() == 1; }));
  std::this_thread::sleep_for(200ms);  // the worker goes to sleep (even on a loaded machine)
  const long before = process_context_switches();
  std::this_thread::sleep_for(300ms);
  const long woke = process_context_switches() - before;
  EXPECT_LT(woke, 30) << "an idle scheduler woke " << woke << " times in 300 ms";
  expect_second_task_runs_beside(s, [] {});  // the next unit
}

// Tasks that live but all wait (a deployed application's copies between units of work, as
// in an idle `sluice serve`): the monitor rests too (it woke ~900 times a second), and the
// tasks still run when woken, with the monitor watching them again.
TEST(SchedulerTest, TasksThatAllWaitCostNoWakeUps) {
  RunSignal signal;
  Waiter next_unit(signal);
  std::atomic<bool> go{false};
  std::atomic<int> done{0};
  {
    Scheduler s(with_workers(2));
    for (int i = 0; i < 4; ++i) {
      s.spawn(
          [&] {
            next_unit.wait([&] { return go.load(std::memory_order_acquire); });
            done.fetch_add(1);
          },
          i, nullptr);
    }
    std::this_thread::sleep_for(300ms);  // the workers park the tasks and sleep
    const long before = process_context_switches();
    std::this_thread::sleep_for(300ms);
    const long woke = process_context_switches() - before;
    EXPECT_LT(woke, 30) << "a scheduler whose tasks all wait woke " << woke << " times in 300 ms";
    go.store(true, std::memory_order_release);
    next_unit.notify();
    EXPECT_TRUE(eventually([&] { return done.load() == 4; }));
  }
}

TEST(SchedulerTest, ATaskThatNeverWaitsDoesNotStarveTheOthersOnItsWorker) {
  expect_second_task_runs_beside([] {});  // computing
}

TEST(SchedulerTest, ATaskAsleepInASystemCallDoesNotStarveTheOthers) {
  // Asleep in the kernel (a blocking read, sleep()): its worker uses no CPU, which must not
  // be mistaken for a worker waiting for one (whose tasks are left where they are).
  expect_second_task_runs_beside([] { std::this_thread::sleep_for(50ms); });
}

TEST(SchedulerTest, TasksWaitingOnEachOtherPassATokenAroundARing) {
  // 64 tasks on 2 workers; task i waits until the token is i, then passes it on, 200 times
  // round. Each wait blocks the task (no thread sleeps); waits cross workers half the time.
  constexpr int kTasks = 64;
  constexpr int kRounds = 200;
  RunSignal signal;
  Waiter changed(signal);
  std::atomic<int> token{0};
  std::atomic<int> finished{0};
  {
    Scheduler s(with_workers(2));
    for (int i = 0; i < kTasks; ++i) {
      s.spawn(
          [&, i] {
            for (int r = 0; r < kRounds; ++r) {
              const int mine = r * kTasks + i;
              changed.wait([&] { return token.load(std::memory_order_acquire) == mine; });
              token.store(mine + 1, std::memory_order_release);
              changed.notify();
            }
            finished.fetch_add(1);
          },
          i, nullptr);
    }
  }
  EXPECT_EQ(finished.load(), kTasks);
  EXPECT_EQ(token.load(), kTasks * kRounds);
}

TEST(SchedulerTest, AParkedTaskWakesOnANotifyFromAnOrdinaryThread) {
  RunSignal signal;
  Waiter changed(signal);
  std::atomic<bool> go{false};
  std::atomic<bool> woke{false};
  Scheduler s(with_workers(2));
  s.spawn(
      [&] {
        changed.wait([&] { return go.load(); });
        woke = true;
      },
      0, nullptr);
  std::this_thread::sleep_for(50ms);  // long enough for the worker to park the task and sleep
  EXPECT_FALSE(woke.load());
  go = true;
  changed.notify();
  EXPECT_TRUE(eventually([&] { return woke.load(); }));
}

// A task's wait reports how long it was blocked as its workers measured it (one clock read a
// switch, sched::block): at least the time the test kept the condition false, and no more
// than the task's own clock saw pass around the wait.
struct HeldWait {
  RunSignal signal;
  Waiter changed{signal};
  std::atomic<bool> waiting{false};  // set by the task just before it waits
  std::atomic<bool> go{false};
  std::atomic<bool> done{false};
  std::uint64_t reported = 0;  // written by the task before `done`
  std::uint64_t around = 0;
};

// `release` gets the state (shared with the tasks, which may outlive a failed ASSERT) and
// must set go and notify 60 ms after the task is about to wait.
void expect_wait_measured(Scheduler& s, const std::function<void(std::shared_ptr<HeldWait>)>& release) {
  auto state = std::make_shared<HeldWait>();
  s.spawn(
      [state] {
        const auto start = std::chrono::steady_clock::now();
        state->waiting = true;
        state->reported = state->changed.wait([&] { return state->go.load(); });
        state->around = static_cast<std::uint64_t>(
            std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
        state->done = true;
      },
      0, nullptr);
  release(state);
  ASSERT_TRUE(eventually([&] { return state->done.load(); }));
  // Below 60 ms by what runs between the flag and the worker's first clock read after the
  // switch (a preempted worker on a loaded machine: hence the margin).
  EXPECT_GE(state->reported, 40'000'000u) << "the wait was held for 60 ms";
  EXPECT_LE(state->reported, state->around) << "more time blocked than passed around the wait";
}

void release(HeldWait& state) {
  state.go = true;
  state.changed.notify();
}

TEST(SchedulerTest, AParkedTaskReportsTheTimeItWaited) {
  Scheduler s(with_workers(2));
  expect_wait_measured(s, [](std::shared_ptr<HeldWait> state) {
    ASSERT_TRUE(eventually([&] { return state->waiting.load(); }));
    std::this_thread::sleep_for(60ms);  // the worker parks the task and sleeps meanwhile
    release(*state);
  });
}

TEST(SchedulerTest, ATaskBlockedBehindAnotherOnItsWorkerReportsTheTimeItWaited) {
  // The waiter's worker runs another task that computes for 60 ms before it releases the
  // wait: the time is measured from the switch away to the resume, on whichever worker.
  Scheduler s(with_workers(1));
  expect_wait_measured(s, [&s](std::shared_ptr<HeldWait> state) {
    s.spawn(
        [state] {
          // Runs after the waiting task blocked: it was spawned first on the only worker.
          const auto until = std::chrono::steady_clock::now() + 60ms;
          while (std::chrono::steady_clock::now() < until) {
          }
          release(*state);
        },
        0, nullptr);
  });
}

TEST(SchedulerTest, AbortWakesParkedTasksWhichThrow) {
  RunSignal signal;
  Waiter never(signal);
  std::atomic<int> aborted{0};
  {
    Scheduler s(with_workers(2));
    for (int i = 0; i < 10; ++i) {
      s.spawn(
          [&] {
            try {
              never.wait([] { return false; });
            } catch (const Aborted&) {
              aborted.fetch_add(1);
            }
          },
          i, nullptr);
    }
    std::this_thread::sleep_for(50ms);
    signal.abort();
  }
  EXPECT_EQ(aborted.load(), 10);
}

// A one-way link between two tasks, room for kRoom values in flight.
struct Link {
  static constexpr std::uint64_t kRoom = 4;
  RunSignal signal;
  Waiter changed{signal};
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> taken{0};
  std::array<std::atomic<std::uint64_t>, kRoom> values{};

  void put(std::uint64_t value) {
    const std::uint64_t at = sent.load(std::memory_order_relaxed);
    changed.wait([&] { return at - taken.load(std::memory_order_acquire) < kRoom; });
    values[at % kRoom].store(value, std::memory_order_relaxed);
    sent.store(at + 1, std::memory_order_release);
    changed.notify();
  }
  std::uint64_t take() {
    const std::uint64_t at = taken.load(std::memory_order_relaxed);
    changed.wait([&] { return sent.load(std::memory_order_acquire) > at; });
    const std::uint64_t value = values[at % kRoom].load(std::memory_order_relaxed);
    taken.store(at + 1, std::memory_order_release);
    changed.notify();
    return value;
  }
};

// Chains of tasks (source, relays, sink) hand numbered values down while the layout flips
// between packed (every task on worker 0) and spread (each chain's second half on worker 1)
// every few hundred microseconds: every value arrives once and in order, and no task is
// lost on the way (the run ends). Where the tasks go is the next test's.
TEST(SchedulerTest, TasksFollowTheLayoutBackAndForthAndEveryValueArrivesInOrder) {
  constexpr int kChains = 4;
  constexpr int kStages = 4;
  constexpr std::uint64_t kValues = 200'000;
  struct Shared {  // the tasks' own: they outlive the test if it gives up on them
    std::array<Link, kChains * (kStages - 1)> links;
    std::atomic<std::uint64_t> out_of_order{0};
    std::atomic<int> sinks_done{0};
  };
  auto shared = std::make_shared<Shared>();
  int flips = 0;
  SchedulerOptions options = with_workers(2);
  options.layout = LayoutChoice::kPacked;  // the test flips it, not the monitor's trial
  auto s = std::make_unique<Scheduler>(options);
  for (int c = 0; c < kChains; ++c) {
    for (int k = 0; k < kStages; ++k) {
      Link* in = k > 0 ? &shared->links[static_cast<std::size_t>(c * (kStages - 1) + k - 1)] : nullptr;
      Link* out = k + 1 < kStages ? &shared->links[static_cast<std::size_t>(c * (kStages - 1) + k)] : nullptr;
      s->spawn(
          [shared, in, out] {
            for (std::uint64_t i = 0; i < kValues; ++i) {
              const std::uint64_t value = in != nullptr ? in->take() : i;
              if (value != i) shared->out_of_order.fetch_add(1);
              if (out != nullptr) out->put(value);
            }
            if (out == nullptr) shared->sinks_done.fetch_add(1);
          },
          TaskHome{0, k < kStages / 2 ? 0 : 1}, nullptr);
    }
  }
  const auto deadline = std::chrono::steady_clock::now() + 60s;
  while (shared->sinks_done.load() < kChains && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(300us);
    s->set_spread(!s->spread());
    ++flips;
  }
  if (shared->sinks_done.load() < kChains) {
    ADD_FAILURE() << "after 60 s only " << shared->sinks_done.load() << " of " << kChains << " chains finished";
    s->abandon();
    (void)s.release();  // its workers still use it: leak it
    return;
  }
  s.reset();
  EXPECT_EQ(shared->out_of_order.load(), 0u);
  EXPECT_GE(flips, 4) << "the run ended before the layout changed a few times";
}

// Tasks that wait on the test's ticks report which worker runs them: once the layout
// changes, each gets to its home in the new one (it moves as it next blocks). Ticks are
// repeated until they all report their homes, because an idle worker may take a ready task
// from a worker the kernel is slow to wake, before it goes home again.
TEST(SchedulerTest, ATaskMovesToItsHomeInTheNewLayoutWhenItNextBlocks) {
  constexpr int kTasks = 4;
  struct Shared {
    RunSignal signal;
    Waiter ticked{signal};
    std::atomic<int> tick{0};
    std::atomic<bool> stop{false};
    std::array<std::atomic<int>, kTasks> seen_tick{};
    std::array<std::atomic<int>, kTasks> worker{};
  };
  auto shared = std::make_shared<Shared>();  // the tasks' own: they may outlive a failed ASSERT
  SchedulerOptions options = with_workers(2);
  options.layout = LayoutChoice::kSpread;  // spread from the start: spawn puts them there
  Scheduler s(options);
  for (int i = 0; i < kTasks; ++i) {
    s.spawn(
        [shared, i] {
          for (int last = -1; !shared->stop.load();) {
            shared->ticked.wait([&] { return shared->stop.load() || shared->tick.load() != last; });
            last = shared->tick.load();
            shared->worker[static_cast<std::size_t>(i)].store(current_worker());
            shared->seen_tick[static_cast<std::size_t>(i)].store(last);
          }
        },
        TaskHome{0, i % 2}, nullptr);
  }
  // Ticks until every task has run on its home in `expected` (at most 200 ticks); returns
  // how many ticks that took, or -1.
  auto ticks_until = [&](const std::array<int, kTasks>& expected) {
    for (int n = 1; n <= 200; ++n) {
      const int now = shared->tick.fetch_add(1) + 1;
      shared->ticked.notify();
      for (auto& t : shared->seen_tick) {
        if (!eventually([&] { return t.load() >= now; })) return -1;
      }
      bool home = true;
      for (int i = 0; i < kTasks; ++i) home = home && shared->worker[static_cast<std::size_t>(i)] == expected[static_cast<std::size_t>(i)];
      if (home) return n;
      std::this_thread::sleep_for(1ms);
    }
    return -1;
  };
  const std::array<int, kTasks> packed{0, 0, 0, 0};
  const std::array<int, kTasks> spread{0, 1, 0, 1};
  EXPECT_GT(ticks_until(spread), 0) << "the tasks did not run on their spread homes";
  s.set_spread(false);
  EXPECT_GT(ticks_until(packed), 0) << "the tasks did not gather on worker 0";
  s.set_spread(true);
  EXPECT_GT(ticks_until(spread), 0) << "the tasks did not go back to their spread homes";
  shared->stop = true;
  shared->ticked.notify();
}

}  // namespace
}  // namespace sluice::sched
