#include "sync/waiter.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "sluice/error.h"
#include "testing/test_watchdog.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

TEST(Waiter, ReturnsAtOnceWhenTheConditionAlreadyHolds) {
  RunSignal signal;
  Waiter waiter(signal);
  int looks = 0;
  EXPECT_EQ(waiter.wait([&] { return ++looks > 0; }), 0u);
  EXPECT_EQ(looks, 1);
}

TEST(Waiter, StopsLookingAsSoonAsTheConditionHolds) {
  RunSignal signal;
  Waiter waiter(signal);
  int looks = 0;
  waiter.wait([&] { return ++looks == 5; });
  EXPECT_EQ(looks, 5);
}

TEST(Waiter, NotifyFromAnotherThreadWakesASleeper) {
  RunSignal signal;
  Waiter waiter(signal);
  std::atomic<bool> ready{false};
  std::atomic<bool> looked{false};
  bool held_on_return = false;
  std::uint64_t waited_ns = 0;
  std::thread sleeper([&] {
    waited_ns = waiter.wait([&] {
      looked.store(true);
      return ready.load();
    });
    held_on_return = ready.load();
  });
  while (!looked.load()) std::this_thread::yield();
  std::this_thread::sleep_for(50ms);  // long past the spin and yield phases: it sleeps
  const auto set_at = std::chrono::steady_clock::now();
  ready.store(true);
  waiter.notify();
  sleeper.join();
  EXPECT_TRUE(held_on_return);
  EXPECT_GE(waited_ns, 40'000'000u) << "wait() returned before the condition held";
  EXPECT_LT(std::chrono::steady_clock::now() - set_at, 5s);
}

// The futex sleep has a safety-net timeout (about 200 ms), so one slow wake-up cannot
// tell a working notify() from a lost one. Many hand-offs can: each sleeper must be woken
// by notify() far sooner than the timeout, many times over.
class WaiterSleepers : public ::testing::TestWithParam<int> {};

TEST_P(WaiterSleepers, NotifyWakesEverySleeperWithoutTheSafetyNet) {
  const int sleepers = GetParam();
  constexpr int kRounds = 60;
  RunSignal signal;
  Waiter waiter(signal);
  std::atomic<int> round{0};
  std::atomic<int> arrived{0};  // sleepers done with the current round
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int s = 0; s < sleepers; ++s) {
    threads.emplace_back([&] {
      for (int r = 1; r <= kRounds; ++r) {
        waiter.wait([&] { return round.load() >= r; });
        if (round.load() < r) errors.fetch_add(1);
        arrived.fetch_add(1);
      }
    });
  }
  const auto start = std::chrono::steady_clock::now();
  for (int r = 1; r <= kRounds; ++r) {
    while (arrived.load() < sleepers * (r - 1)) std::this_thread::yield();
    std::this_thread::sleep_for(1ms);  // past the 50 us of spinning and yielding
    round.store(r);
    waiter.notify();
  }
  for (std::thread& t : threads) t.join();
  const auto elapsed = std::chrono::steady_clock::now() - start;
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(arrived.load(), sleepers * kRounds);
  // Working: about kRounds ms. Lost wake-ups: up to kRounds * 200 ms = 12 s.
  EXPECT_LT(elapsed, 5s);
}

INSTANTIATE_TEST_SUITE_P(Threads, WaiterSleepers, ::testing::Values(1, 3),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "Sleepers";
                         });

TEST(Waiter, AbortWakesASleeperWithAborted) {
  RunSignal signal;
  Waiter waiter(signal);
  std::atomic<bool> looked{false};
  std::atomic<int> outcome{0};  // 1: returned, 2: Aborted, 3: another exception
  std::thread sleeper([&] {
    outcome = testing::outcome_of([&] {
      waiter.wait([&] {
        looked.store(true);
        return false;
      });
    });
  });
  while (!looked.load()) std::this_thread::yield();
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  signal.abort();
  sleeper.join();
  EXPECT_EQ(outcome.load(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_TRUE(signal.aborted());
}

TEST(Waiter, WaitingAfterAbortThrowsUntilTheSignalIsReset) {
  RunSignal signal;
  Waiter waiter(signal);
  signal.abort();
  signal.abort();  // idempotent
  EXPECT_TRUE(signal.aborted());
  EXPECT_THROW(waiter.wait([] { return false; }), Aborted);
  EXPECT_THROW(waiter.wait([] { return false; }), Aborted);
  signal.reset();
  EXPECT_FALSE(signal.aborted());
  int looks = 0;
  waiter.wait([&] { return ++looks == 3; });
  EXPECT_EQ(looks, 3);
}

TEST(Waiter, AbortWakesSleepersOfEveryRegisteredWaiter) {
  RunSignal signal;
  Waiter first(signal);
  Waiter second(signal);
  std::atomic<int> aborted{0};
  auto sleep_on = [&](Waiter& w) {
    try {
      w.wait([] { return false; });
    } catch (const Aborted&) {
      aborted.fetch_add(1);
    }
  };
  std::thread a(sleep_on, std::ref(first));
  std::thread b(sleep_on, std::ref(second));
  std::this_thread::sleep_for(50ms);
  signal.abort();
  a.join();
  b.join();
  EXPECT_EQ(aborted.load(), 2);
}

// A WaitRecord is stamped with the coarse clock and read against the fine one
// (Engine::activity): the stamp must never be ahead, or a wait would read negative, and it
// must follow the fine clock closely enough for a figure in seconds (a tick is 1-10 ms; a
// vCPU the host descheduled can delay one, so the bound here is a tenth of a second).
TEST(Waiter, TheCoarseClockIsNeverAheadOfTheFineOneAndFollowsIt) {
  for (int i = 0; i < 200000; ++i) {
    const std::uint64_t before = Waiter::now_ns();
    const std::uint64_t coarse = Waiter::coarse_now_ns();
    const std::uint64_t after = Waiter::now_ns();
    ASSERT_LE(coarse, after) << "at look " << i;
    ASSERT_LT(before, coarse + 100'000'000u) << "at look " << i;
  }
}

}  // namespace
}  // namespace sluice
