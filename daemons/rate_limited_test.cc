// RateLimited: a flood of log lines becomes a bounded number, and the count of those held
// back is told.
#include "daemons/log.h"

#include <gtest/gtest.h>

namespace sluice::daemon {
namespace {

using Clock = RateLimited::Clock;
using std::chrono::milliseconds;

TEST(RateLimited, OneASecondHoldsBackTheRestAndCountsThem) {
  RateLimited limit(1.0);
  const auto t0 = Clock::now();
  std::uint64_t held = 99;
  EXPECT_TRUE(limit.allow(t0, &held));
  EXPECT_EQ(held, 0u);
  int passed = 0;
  for (int i = 1; i <= 1000; ++i) passed += limit.allow(t0 + milliseconds(i), &held);  // 1 s of flood
  EXPECT_EQ(passed, 1);  // the one at t0 + 1 s
  EXPECT_EQ(held, 999u);
  EXPECT_FALSE(limit.allow(t0 + milliseconds(1500), &held));
  EXPECT_TRUE(limit.allow(t0 + milliseconds(2100), &held));
  EXPECT_EQ(held, 1u);
}

TEST(RateLimited, ABurstThenTheRate) {
  RateLimited limit(5.0);
  const auto t0 = Clock::now();
  std::uint64_t held = 0;
  int passed = 0;
  for (int i = 0; i < 100; ++i) passed += limit.allow(t0, &held);
  EXPECT_EQ(passed, 5);
  // 10 s of one attempt per millisecond: 5 a second get through.
  passed = 0;
  for (int i = 1; i <= 10000; ++i) passed += limit.allow(t0 + milliseconds(i), &held);
  EXPECT_GE(passed, 49);
  EXPECT_LE(passed, 51);
}

TEST(RateLimited, ALargerBurstRefillsAtTheRate) {
  RateLimited limit(2.0, 10.0);
  const auto t0 = Clock::now();
  std::uint64_t held = 0;
  int passed = 0;
  for (int i = 0; i < 100; ++i) passed += limit.allow(t0, &held);
  EXPECT_EQ(passed, 10);
  EXPECT_FALSE(limit.allow(t0 + milliseconds(400), &held));
  EXPECT_TRUE(limit.allow(t0 + milliseconds(600), &held));
  EXPECT_EQ(held, 91u);
  // Idle for a minute: the burst is back, not more.
  passed = 0;
  for (int i = 0; i < 100; ++i) passed += limit.allow(t0 + std::chrono::seconds(60), &held);
  EXPECT_EQ(passed, 10);
}

}  // namespace
}  // namespace sluice::daemon
