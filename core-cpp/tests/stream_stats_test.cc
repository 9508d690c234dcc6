// What Engine::stream_stats() says while a run is under way: a wait counts as blocked while
// it lasts, not only once it is over, so a producer blocked since the start of a unit shows
// blocked (the live view's "blocked %" said 0 for it).
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>

#include "runtime/engine.h"
#include "testing/eventually.h"
#include "testing/graph_harness.h"
#include "testing/graph_test_filters.h"
#include "topology/topology.h"

namespace testing_filters {
namespace {

using namespace std::chrono_literals;

std::optional<sluice::StreamStats> stats_of(const sluice::Engine& engine, const std::string& prefix) {
  for (const auto& s : engine.stream_stats()) {
    if (s.label.rfind(prefix, 0) == 0) return s;
  }
  return std::nullopt;
}

// A topology's first unit of work, under way on a thread of its own; its TestSinks with
// wait_for_gate wait (in their own code) until finish() opens the gate.
struct UnitUnderWay {
  explicit UnitUnderWay(const std::string& yaml)
      : topology(sluice::topo::parse_topology_text(yaml, "test.yaml", SLUICE_TEST_DATA_DIR)) {
    observed().reset();
    sluice::check_loadable(topology);
    engine = std::make_unique<sluice::Engine>(topology);
    failure = engine->start();
    if (!failure) unit = std::thread([this] { failure = engine->run_unit(0, "one"); });
  }
  ~UnitUnderWay() { finish(); }
  void finish() {
    observed().gate_open.store(true);
    if (unit.joinable()) unit.join();
  }

  sluice::topo::Topology topology;
  std::unique_ptr<sluice::Engine> engine;
  std::optional<sluice::Failure> failure;
  std::thread unit;
};

TEST(StreamStats, AWaitUnderWayCountsAsBlocked) {
  UnitUnderWay run(R"(
defaults: {buffer_size: 1KiB, depth: 8}
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 100, size: 1000}}
  sink: {class: "testing_filters::TestSink", args: {wait_for_gate: true}}
streams:
  - {from: src.out, to: sink.in}
)");
  // The sink reads nothing until the gate opens: the source fills the queue, then waits
  // for room, and the sink waits at the gate (not on its stream).
  EXPECT_TRUE(sluice::testing::eventually([&] { return stats_of(*run.engine, "src")->buffers >= 8; }))
      << "the source filled the queue";
  std::this_thread::sleep_for(600ms);
  const sluice::StreamStats during = *stats_of(*run.engine, "src");
  run.finish();
  ASSERT_FALSE(run.failure) << run.failure->str();

  EXPECT_GT(during.producer_blocked_ns, 400'000'000u) << "the source has waited for room for 600 ms";
  EXPECT_LT(during.producer_blocked_ns, 60'000'000'000u);
  EXPECT_EQ(during.consumer_blocked_ns, 0u) << "the sink waits at its gate, not on the stream";
  const sluice::StreamStats after = *stats_of(*run.engine, "src");
  EXPECT_EQ(after.buffers, 100u);
  EXPECT_GE(after.producer_blocked_ns + 50'000'000u, during.producer_blocked_ns)
      << "once the wait is over it is counted once, not twice and not lost";
}

// A run stopped while its copies wait (a stall timeout, a failure elsewhere): the waits it
// ended count as blocked in the summary (they were lost with the abort: "prod blk 0%").
TEST(StreamStats, AWaitEndedByAnAbortCountsAsBlocked) {
  UnitUnderWay run(R"(
defaults: {buffer_size: 1KiB, depth: 8}
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 100, size: 1000}}
  mid:  {class: "testing_filters::TestRelay"}
  sink: {class: "testing_filters::TestSink", args: {wait_for_gate: true}}
streams:
  - {from: src.out, to: mid.in}
  - {from: mid.out, to: sink.in}
)");
  EXPECT_TRUE(sluice::testing::eventually([&] { return stats_of(*run.engine, "mid")->buffers >= 8; }))
      << "the relay filled the sink's queue";
  std::this_thread::sleep_for(600ms);
  run.engine->cancel("stalled, as a test says");
  run.finish();  // the sink waits in its own code, which a cancel does not end
  ASSERT_TRUE(run.failure) << "the cancelled unit fails";
  EXPECT_GT(stats_of(*run.engine, "src")->producer_blocked_ns, 400'000'000u) << "the source waited for room";
  EXPECT_GT(stats_of(*run.engine, "mid")->producer_blocked_ns, 400'000'000u) << "the relay waited for room";
}

}  // namespace
}  // namespace testing_filters
