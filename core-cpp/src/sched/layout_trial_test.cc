#include "sched/layout_trial.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <functional>

namespace sluice::sched {
namespace {

constexpr std::uint64_t kMs = 1'000'000;

// Drives a trial for `ms` milliseconds, a sample a millisecond, with work growing at
// `rate(layout, ms)` per millisecond in whichever layout the trial returned last. Returns
// how many of those milliseconds ran spread.
struct Driver {
  LayoutTrial trial;
  std::uint64_t now = 5 * kMs;  // not 0: a clock that starts anywhere
  std::uint64_t work = 0;
  Layout layout = Layout::kPacked;

  int advance(int ms, const std::function<std::uint64_t(Layout, int)>& rate) {
    int spread_ms = 0;
    for (int i = 0; i < ms; ++i) {
      layout = trial.step(now, work);
      spread_ms += layout == Layout::kSpread;
      work += rate(layout, i);
      now += kMs;
    }
    return spread_ms;
  }
};

std::uint64_t spread_faster(Layout l, int) { return l == Layout::kSpread ? 130'000 : 100'000; }
std::uint64_t spread_slower(Layout l, int) { return l == Layout::kSpread ? 30'000 : 100'000; }

TEST(LayoutTrial, StartsPackedAndKeepsSpreadWhenItIsClearlyFaster) {
  Driver run;
  EXPECT_EQ(run.trial.step(run.now, 0), Layout::kPacked);
  run.advance(100, spread_faster);
  EXPECT_EQ(run.layout, Layout::kSpread);
  EXPECT_EQ(run.trial.trials(), 1);
  EXPECT_NEAR(run.trial.spread_rate() / run.trial.packed_rate(), 1.3, 0.05);
  // Trials go on, and keep it: after ten seconds nearly all the time ran spread.
  const int spread_ms = run.advance(10'000, spread_faster);
  EXPECT_GT(spread_ms, 9'800);
  EXPECT_GT(run.trial.trials(), 3);
}

TEST(LayoutTrial, GoesBackToPackedWhenSpreadIsSlowerAndTriesItOnlyBriefly) {
  Driver run;
  const int spread_ms = run.advance(10'000, spread_slower);
  EXPECT_EQ(run.layout, Layout::kPacked);
  EXPECT_GE(run.trial.trials(), 3);
  // Each trial runs spread for a settle and a window, and the holds between them double
  // from 250 ms: a small share of the time.
  const LayoutTrial::Timing timing;
  const auto per_trial = static_cast<int>((timing.settle_ns + timing.window_ns) / kMs) + 1;
  EXPECT_LE(spread_ms, per_trial * run.trial.trials());
  EXPECT_LT(spread_ms, 200);
}

TEST(LayoutTrial, PrefersPackedWhenSpreadIsOnlyAlittleFaster) {
  Driver run;
  run.advance(2'000, [](Layout l, int) -> std::uint64_t { return l == Layout::kSpread ? 105'000 : 100'000; });
  EXPECT_EQ(run.layout, Layout::kPacked);
}

TEST(LayoutTrial, FollowsTheMachineWhenTheBetterLayoutChanges) {
  Driver run;
  run.advance(1'000, spread_faster);
  ASSERT_EQ(run.layout, Layout::kSpread);
  // The cores' hand-over turns slow: within the longest hold and a trial, packed again.
  run.advance(5'000, spread_slower);
  EXPECT_EQ(run.layout, Layout::kPacked);
  // And fast again.
  run.advance(5'000, spread_faster);
  EXPECT_EQ(run.layout, Layout::kSpread);
}

TEST(LayoutTrial, LearnsNothingFromAGraphThatDoesNoWork) {
  Driver run;
  run.advance(2'000, [](Layout, int) -> std::uint64_t { return 0; });
  EXPECT_EQ(run.layout, Layout::kPacked);
  EXPECT_GE(run.trial.trials(), 1);
  EXPECT_EQ(run.trial.packed_rate(), 0);
  // Once work flows, the next trial (soon: no long hold after an uninformed one) decides,
  // and spread runs most of the next 400 ms.
  EXPECT_GT(run.advance(400, spread_faster), 200);
  EXPECT_GT(run.trial.spread_rate(), run.trial.packed_rate());
}

TEST(LayoutTrial, AWindowWithoutWorkDecidesNothing) {
  // Work comes only while spread (as when a unit starts just as the trial switches): the
  // packed window saw none, so no comparison, packed, and trials every 20 ms or so.
  Driver run;
  const int spread_ms = run.advance(1'000, [](Layout l, int) -> std::uint64_t { return l == Layout::kSpread ? 100'000 : 0; });
  EXPECT_EQ(run.layout, Layout::kPacked);
  EXPECT_GT(run.trial.trials(), 20);
  EXPECT_EQ(run.trial.packed_rate(), 0);
  EXPECT_GT(run.trial.spread_rate(), 0);
  EXPECT_LT(spread_ms, 1'000 / 3);
}

}  // namespace
}  // namespace sluice::sched
