// Graph tests: real topologies through the embedded runtime, checked end to end.
#include <gtest/gtest.h>

#include <set>

#include "testing/graph_harness.h"
#include "testing/graph_test_filters.h"

namespace testing_filters {
namespace {

class GraphTest : public ::testing::Test {
 protected:
  void SetUp() override { observed().reset(); }

  // Every (source copy, seq) in [0, per_source) arrived at `sink` exactly once.
  void expect_each_exactly_once(const std::string& sink, int sources, std::uint64_t per_source) {
    std::lock_guard<std::mutex> lock(observed().mu);
    auto& arrivals = observed().arrivals[sink];
    ASSERT_EQ(arrivals.size(), static_cast<std::size_t>(sources));
    for (auto& [source, counts] : arrivals) {
      ASSERT_EQ(counts.size(), per_source) << "source " << source;
      std::uint64_t missing = 0, duplicated = 0;
      for (std::uint32_t c : counts) {
        missing += c == 0;
        duplicated += c > 1;
      }
      EXPECT_EQ(missing, 0u) << "source " << source;
      EXPECT_EQ(duplicated, 0u) << "source " << source;
    }
  }
  std::vector<std::string> violations() {
    std::lock_guard<std::mutex> lock(observed().mu);
    return observed().violations;
  }
};

// A million buffers through copies on every stage and three policies: nothing lost,
// duplicated, corrupted, and per producer -> consumer pair nothing reordered.
TEST_F(GraphTest, MillionBuffersThroughCopiesOnEveryStage) {
  RunOutcome out = run_yaml(R"(
defaults: {buffer_size: 256B, depth: 32}
filters:
  src:   {class: "testing_filters::TestSource", copies: 2, args: {count: 500000, size: 200}}
  mid:   {class: "testing_filters::TestRelay", copies: 3}
  mid2:  {class: "testing_filters::TestRelay", copies: 2}
  sink:  {class: "testing_filters::TestSink", copies: 2}
streams:
  - {from: src.out, to: mid.in}
  - {from: mid.out, to: mid2.in, policy: demand_driven}
  - {from: mid2.out, to: sink.in, policy: by_key}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each_exactly_once("sink", 2, 500000);
  ASSERT_EQ(out.streams.size(), 3u);
  for (const auto& s : out.streams) {
    EXPECT_EQ(s.buffers, 1000000u) << s.label;
    EXPECT_EQ(s.bytes, 200000000u) << s.label;
  }
}

TEST_F(GraphTest, ByKeySendsEqualKeysToOneCopy) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", copies: 2, args: {count: 20000, keys: 97}}
  sink: {class: "testing_filters::TestSink", copies: 3, args: {record_keys: true}}
streams:
  - {from: src.out, to: sink.in, policy: by_key}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  std::lock_guard<std::mutex> lock(observed().mu);
  auto& keys = observed().key_copies["sink"];
  ASSERT_EQ(keys.size(), 97u);
  std::set<int> copies_used;
  for (auto& [key, copies] : keys) {
    EXPECT_EQ(copies.size(), 1u) << "key " << key << " reached several copies";
    copies_used.insert(copies.front());
  }
  EXPECT_EQ(copies_used.size(), 3u) << "97 keys should spread over all 3 copies";
}

TEST_F(GraphTest, BroadcastDeliversEverythingToEveryCopySharingThePayload) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 3000, record_address: true}}
  sink: {class: "testing_filters::TestSink", copies: 3, args: {record_address: true}}
streams:
  - {from: src.out, to: sink.in, policy: broadcast, depth: 8}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  std::lock_guard<std::mutex> lock(observed().mu);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(observed().received["sink"][c], 3000u) << "copy " << c;
  // Each sequence number arrived three times (once per copy), at the source's address.
  ASSERT_EQ(observed().arrivals["sink"][0].size(), 3000u);
  for (std::uint32_t n : observed().arrivals["sink"][0]) ASSERT_EQ(n, 3u);
  for (auto& [id, addresses] : observed().sink_address) {
    ASSERT_EQ(addresses.size(), 3u);
    for (const void* a : addresses) ASSERT_EQ(a, observed().source_address[id]) << "payload was copied";
  }
  EXPECT_EQ(out.streams[0].buffers, 3000u);
}

TEST_F(GraphTest, BuffersCrossFiltersWithoutCopying) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 500, record_address: true}}
  mid:  {class: "testing_filters::TestRelay", copies: 2}
  sink: {class: "testing_filters::TestSink", args: {record_address: true}}
streams:
  - {from: src.out, to: mid.in}
  - {from: mid.out, to: sink.in}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  std::lock_guard<std::mutex> lock(observed().mu);
  ASSERT_EQ(observed().sink_address.size(), 500u);
  for (auto& [id, addresses] : observed().sink_address) {
    ASSERT_EQ(addresses.size(), 1u);
    EXPECT_EQ(addresses[0], observed().source_address[id]);
  }
}

TEST_F(GraphTest, ThreeUnitsOfWorkInARowReuseTheFilterObjects) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", copies: 2, args: {count: 10000}}
  mid:  {class: "testing_filters::TestRelay", copies: 2}
  sink: {class: "testing_filters::TestSink", copies: 2}
streams:
  - {from: src.out, to: mid.in, depth: 4}
  - {from: mid.out, to: sink.in, depth: 4}
work: [alpha, beta, gamma]
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(violations(), std::vector<std::string>{});
  std::lock_guard<std::mutex> lock(observed().mu);
  // Each unit starts at seq 0 again, so every seq arrived once per unit.
  for (auto& [source, counts] : observed().arrivals["sink"]) {
    ASSERT_EQ(counts.size(), 10000u);
    for (std::uint32_t n : counts) ASSERT_EQ(n, 3u);
  }
  EXPECT_EQ(observed().constructed["TestSource"], 2);  // objects live across units
  EXPECT_EQ(observed().constructed["TestSink"], 2);
  EXPECT_EQ(observed().inits["src"], 6);               // 2 copies x 3 units
  std::multiset<std::string> units(observed().units_seen.begin(), observed().units_seen.end());
  for (const char* unit : {"0:alpha", "1:beta", "2:gamma"}) {
    for (int c = 0; c < 2; ++c) {
      EXPECT_EQ(units.count("sink#" + std::to_string(c) + ":" + unit), 1u) << unit;
    }
  }
  EXPECT_EQ(out.streams[1].buffers, 60000u);
}

TEST_F(GraphTest, DemandDrivenGivesTheFastCopyMoreWork) {
  // Two consumer copies: copy 0 sleeps per buffer, copy 1 does not. Demand-driven sends
  // to the copy with the most free room, so the fast copy takes most of the work.
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 3000}}
  sink: {class: "testing_filters::TestSink", copies: 2, args: {slow_copy: 0, sleep_us: 300}}
streams:
  - {from: src.out, to: sink.in, policy: demand_driven, depth: 4}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  expect_each_exactly_once("sink", 1, 3000);
  std::lock_guard<std::mutex> lock(observed().mu);
  auto& received = observed().received["sink"];
  EXPECT_GT(received[1], 4 * received[0]) << "slow copy got " << received[0] << ", fast copy " << received[1];
}

TEST_F(GraphTest, RoundRobinSplitsEvenlyWhateverTheSpeed) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 600}}
  sink: {class: "testing_filters::TestSink", copies: 3, args: {slow_copy: 0, sleep_us: 50}}
streams:
  - {from: src.out, to: sink.in, depth: 4}
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  std::lock_guard<std::mutex> lock(observed().mu);
  for (int c = 0; c < 3; ++c) EXPECT_EQ(observed().received["sink"][c], 200u) << "copy " << c;
}

TEST_F(GraphTest, UnreadInputIsDrainedSoTheRunEnds) {
  RunOutcome out = run_yaml(R"(
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 5000}}
  sink: {class: "testing_filters::TestSink", args: {read: false}}
streams:
  - {from: src.out, to: sink.in, depth: 2}
work: [one, two]
)");
  ASSERT_FALSE(out.failure) << out.failure->str();
  EXPECT_EQ(out.streams[0].buffers, 10000u);
}

TEST_F(GraphTest, SourceOnlyGraphRuns) {
  RunOutcome out = run_yaml(R"(
filters:
  lonely: {class: "testing_filters::TestSpinner", args: {ms: 1}}
)");
  EXPECT_FALSE(out.failure);
}

}  // namespace
}  // namespace testing_filters
