#include "net/rate_limited_log.h"

#include <thread>

#include <gtest/gtest.h>

namespace sluice::net {
namespace {

// Every line written, as a string: the log writes warnings to stderr.
template <typename F>
std::string written_by(F&& f) {
  testing::internal::CaptureStderr();
  f();
  return testing::internal::GetCapturedStderr();
}

TEST(RateLimitedLog, AFloodIsOneLineAPeriodWithTheCountOfTheRest) {
  RateLimitedLog log("data plane: ", std::chrono::milliseconds(100));
  const std::string out = written_by([&] {
    EXPECT_TRUE(log.line("refused 1"));
    for (int i = 2; i <= 5; ++i) EXPECT_FALSE(log.line("refused " + std::to_string(i)));
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_TRUE(log.line("refused 6"));
  });
  EXPECT_NE(out.find("data plane: refused 1\n"), std::string::npos) << out;
  EXPECT_NE(out.find("data plane: refused 6 (and 4 more like it, not shown)"), std::string::npos) << out;
  EXPECT_EQ(log.suppressed_total(), 4u);
}

// The flood stops and no line follows: flush() tells the count, with the newest line held back,
// once a period passed (or at the end, at once).
TEST(RateLimitedLog, FlushTellsWhatWasHeldBackWhenNoLineFollows) {
  RateLimitedLog log("data plane: ", std::chrono::milliseconds(100));
  std::string out = written_by([&] {
    log.line("refused 1");
    for (int i = 2; i <= 4; ++i) log.line("refused " + std::to_string(i));
    EXPECT_FALSE(log.flush());  // within the period: nothing yet
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    EXPECT_TRUE(log.flush());
    EXPECT_FALSE(log.flush(/*at_end=*/true));  // told once
  });
  EXPECT_NE(out.find("data plane: refused 4 (and 2 more like it, not shown)"), std::string::npos) << out;
  EXPECT_EQ(out.find("refused 2"), std::string::npos) << out;

  out = written_by([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    log.line("refused 5");  // a period passed since the flush: written
    log.line("refused 6");
    EXPECT_TRUE(log.flush(/*at_end=*/true));
  });
  EXPECT_NE(out.find("data plane: refused 5\n"), std::string::npos) << out;
  EXPECT_NE(out.find("data plane: refused 6\n"), std::string::npos) << out;
}

}  // namespace
}  // namespace sluice::net
