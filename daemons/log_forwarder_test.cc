// LogForwarder: filter log lines become filter_log messages, in order, under a rate limit that
// says how many lines it held back; long lines are cut.
#include "daemons/log_forwarder.h"

#include <gtest/gtest.h>

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

namespace sluice::daemon {
namespace {

using Clock = LogForwarder::Clock;
using std::chrono::milliseconds;

TEST(LogForwarder, NothingToTellIsNoMessage) {
  LogForwarder logs("b");
  EXPECT_FALSE(logs.take().has_value());
}

TEST(LogForwarder, LinesGoOutInOrderWithPrefixLevelAndHost) {
  LogForwarder logs("b");
  logs.line(LogLevel::kInfo, "count#1@b", "first");
  logs.line(LogLevel::kWarn, "count#0@b", "second");
  auto batch = logs.take();
  ASSERT_TRUE(batch.has_value());
  const control::FilterLog& f = batch->filter_log();
  EXPECT_EQ(f.host(), "b");
  ASSERT_EQ(f.lines_size(), 2);
  EXPECT_EQ(f.lines(0).prefix(), "count#1@b");
  EXPECT_EQ(f.lines(0).level(), "info");
  EXPECT_EQ(f.lines(0).text(), "first");
  EXPECT_EQ(f.lines(1).level(), "warn");
  EXPECT_EQ(f.lines(1).text(), "second");
  EXPECT_EQ(f.not_forwarded(), 0u);
  EXPECT_FALSE(logs.take().has_value());  // taken once
}

TEST(LogForwarder, ATightLoopIsCutToTheBurstThenTheRateAndTheRestCounted) {
  LogForwarder logs("b", {10, 20, 4096});
  const auto t0 = Clock::now();
  for (int i = 0; i < 100000; ++i) logs.line_at(t0, LogLevel::kInfo, "spin#0@b", "line " + std::to_string(i));
  auto batch = logs.take();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->filter_log().lines_size(), 20);
  EXPECT_EQ(batch->filter_log().lines(19).text(), "line 19");
  EXPECT_EQ(batch->filter_log().not_forwarded(), 99980u);
  // One second later: ten more lines pass, the rest is counted again.
  for (int i = 0; i < 1000; ++i) {
    logs.line_at(t0 + milliseconds(1000 + i), LogLevel::kInfo, "spin#0@b", "later " + std::to_string(i));
  }
  batch = logs.take();
  ASSERT_TRUE(batch.has_value());
  EXPECT_GE(batch->filter_log().lines_size(), 10);
  EXPECT_LE(batch->filter_log().lines_size(), 21);  // the first second's ten, and one second's worth
  EXPECT_EQ(batch->filter_log().lines_size() + batch->filter_log().not_forwarded(), 1000u);
  EXPECT_LT(batch->SerializeAsString().size(), 4096u);  // a few lines, not a flood
}

TEST(LogForwarder, HeldBackLinesAreToldEvenWhenNoLinePassesAfterThem) {
  LogForwarder logs("b", {1, 1, 4096});
  const auto t0 = Clock::now();
  logs.line_at(t0, LogLevel::kInfo, "f#0@b", "kept");
  logs.take();
  logs.line_at(t0, LogLevel::kInfo, "f#0@b", "dropped");
  auto batch = logs.take();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->filter_log().lines_size(), 0);
  EXPECT_EQ(batch->filter_log().not_forwarded(), 1u);
}

TEST(LogForwarder, ALongLineIsCutAndSaysWhereTheRestIs) {
  LogForwarder logs("b", {50, 200, 16});
  logs.line(LogLevel::kInfo, "f#0@b", std::string(100, 'x'));
  auto batch = logs.take();
  ASSERT_TRUE(batch.has_value());
  EXPECT_EQ(batch->filter_log().lines(0).text(), std::string(16, 'x') + "... (84 bytes more in host b's sluiced log)");
}

TEST(LogForwarder, BytesThatAreNotUtf8SurviveTheWire) {
  LogForwarder logs("b");
  const std::string raw("\xff\xfe bad \xc3", 8);
  logs.line(LogLevel::kError, "f#0@b", raw);
  auto batch = logs.take();
  ASSERT_TRUE(batch.has_value());
  control::Envelope decoded;
  const std::string frame = control::encode(*batch);
  ASSERT_FALSE(control::decode_body(frame.data() + control::kHeaderSize, frame.size() - control::kHeaderSize, &decoded));
  EXPECT_EQ(decoded.filter_log().lines(0).text(), raw);
}

TEST(LogForwarder, ManyThreadsLogAtOnceWhileBatchesAreTaken) {
  LogForwarder logs("b", {1e9, 1e9, 4096});
  std::atomic<int> running{4};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&logs, &running, t] {
      for (int i = 0; i < 1000; ++i) logs.line(LogLevel::kInfo, "f#" + std::to_string(t) + "@b", std::to_string(i));
      --running;
    });
  }
  std::map<std::string, int> next;  // prefix -> the line it must log next
  int taken = 0;
  bool in_order = true;
  auto consume = [&](const control::Envelope& batch) {
    for (const auto& l : batch.filter_log().lines()) {
      in_order = in_order && std::stoi(l.text()) == next[l.prefix()]++;
      ++taken;
    }
  };
  while (running > 0) {
    if (auto batch = logs.take()) consume(*batch);
  }
  for (auto& t : threads) t.join();
  if (auto batch = logs.take()) consume(*batch);
  EXPECT_EQ(taken, 4000);
  EXPECT_TRUE(in_order);
}

}  // namespace
}  // namespace sluice::daemon
