// Streams across "hosts": two or three Engines with their own DataPlanes in this process,
// connected over loopback, checked end to end with the test filters.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>

#include "net_cluster.h"
#include "stream/output_port.h"
#include "testing/eventually.h"
#include "testing/graph_test_filters.h"

namespace testing_filters {
namespace {

class NetStreamTest : public ::testing::Test {
 protected:
  void SetUp() override { observed().reset(); }

  // Every (source copy, seq) in [0, per_source) arrived at `sink` exactly `times` times.
  void expect_each(const std::string& sink, int sources, std::uint64_t per_source, std::uint32_t times = 1) {
    std::lock_guard<std::mutex> lock(observed().mu);
    auto& arrivals = observed().arrivals[sink];
    ASSERT_EQ(arrivals.size(), static_cast<std::size_t>(sources));
    for (auto& [source, counts] : arrivals) {
      ASSERT_EQ(counts.size(), per_source) << "source " << source;
      std::uint64_t wrong = 0;
      for (std::uint32_t c : counts) wrong += c != times;
      EXPECT_EQ(wrong, 0u) << "source " << source << ": seqs not seen exactly " << times << " times";
    }
  }
  std::vector<std::string> violations() {
    std::lock_guard<std::mutex> lock(observed().mu);
    return observed().violations;
  }
  std::map<int, std::uint64_t> received(const std::string& sink) {
    std::lock_guard<std::mutex> lock(observed().mu);
    return observed().received[sink];
  }
};

// src -> mid -> sink, two copies of each, copy 0 on host a and copy 1 on host b, so
// every stream has local and remote pairs in both directions.
std::string pipeline(const std::string& policy, std::uint64_t per_source, int size, const std::string& sink_args = "") {
  return R"(
defaults: {buffer_size: 256B, depth: 32}
filters:
  src:  {class: "testing_filters::TestSource", copies: 2, args: {count: )" +
         std::to_string(per_source) + ", size: " + std::to_string(size) + R"(, keys: 1000}}
  mid:  {class: "testing_filters::TestRelay", copies: 2}
  sink: {class: "testing_filters::TestSink", copies: 2, args: {record_keys: true)" + sink_args + R"(}}
streams:
  - {from: src.out, to: mid.in, policy: )" + policy + R"(}
  - {from: mid.out, to: sink.in, policy: )" + policy + R"(}
)";
}

std::map<std::string, sluice::Placement> split_ab() {
  return {{"a", place({{"src", {0}}, {"mid", {0}}, {"sink", {0}}})},
          {"b", place({{"src", {1}}, {"mid", {1}}, {"sink", {1}}})}};
}

TEST_F(NetStreamTest, MillionBuffersRoundRobinAcrossTwoHosts) {
  Cluster cluster(pipeline("round_robin", 500000, 200), split_ab());
  auto failure = cluster.run_all();
  ASSERT_FALSE(failure) << *failure;
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each("sink", 2, 500000);
  EXPECT_FALSE(cluster.host("a").plane->failure());
  EXPECT_FALSE(cluster.host("b").plane->failure());
}

TEST_F(NetStreamTest, MillionBuffersDemandDrivenAcrossTwoHosts) {
  Cluster cluster(pipeline("demand_driven", 500000, 100), split_ab());
  auto failure = cluster.run_all();
  ASSERT_FALSE(failure) << *failure;
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each("sink", 2, 500000);
}

TEST_F(NetStreamTest, MillionBuffersByKeyAcrossTwoHosts) {
  Cluster cluster(pipeline("by_key", 500000, 100), split_ab());
  auto failure = cluster.run_all();
  ASSERT_FALSE(failure) << *failure;
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each("sink", 2, 500000);
  std::lock_guard<std::mutex> lock(observed().mu);
  auto& keys = observed().key_copies["sink"];
  ASSERT_EQ(keys.size(), 1000u);
  for (auto& [key, copies] : keys) {
    ASSERT_EQ(copies.size(), 1u) << "key " << key << " reached several copies";
    // The same copy as one process would pick: key_to_copy is stable everywhere.
    EXPECT_EQ(static_cast<std::size_t>(copies.front()), sluice::OutputPort::key_to_copy(key, 2)) << key;
  }
}

TEST_F(NetStreamTest, BroadcastAcrossTwoHostsReachesEveryCopy) {
  // Broadcast shares one payload among the copies, so nothing may write to it on the way:
  // straight from sources to sinks. Each sink copy gets all 2 x 250000 buffers.
  const std::string yaml = R"(
defaults: {buffer_size: 256B, depth: 32}
filters:
  src:  {class: "testing_filters::TestSource", copies: 2, args: {count: 250000, size: 100}}
  sink: {class: "testing_filters::TestSink", copies: 2}
streams:
  - {from: src.out, to: sink.in, policy: broadcast}
)";
  Cluster cluster(yaml, {{"a", place({{"src", {0}}, {"sink", {0}}})}, {"b", place({{"src", {1}}, {"sink", {1}}})}});
  auto failure = cluster.run_all();
  ASSERT_FALSE(failure) << *failure;
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each("sink", 2, 250000, 2);
  auto got = received("sink");
  EXPECT_EQ(got[0], 500000u);
  EXPECT_EQ(got[1], 500000u);
}

TEST_F(NetStreamTest, ThreeHostsThreeUnitsInARow) {
  const std::string yaml = R"(
defaults: {buffer_size: 4KiB, depth: 16}
work: [one, two, three]
filters:
  src:  {class: "testing_filters::TestSource", copies: 3, args: {count: 10000, size: 3000}}
  mid:  {class: "testing_filters::TestRelay", copies: 3}
  sink: {class: "testing_filters::TestSink", copies: 2}
streams:
  - {from: src.out, to: mid.in, policy: round_robin}
  - {from: mid.out, to: sink.in, policy: demand_driven}
)";
  Cluster cluster(yaml, {{"a", place({{"src", {0}}, {"mid", {2}}})},
                         {"b", place({{"src", {1}}, {"mid", {0}}, {"sink", {0}}})},
                         {"c", place({{"src", {2}}, {"mid", {1}}, {"sink", {1}}})}});
  for (std::size_t u = 0; u < 3; ++u) {
    auto failure = cluster.run_unit(u);
    ASSERT_FALSE(failure) << "unit " << u << ": " << *failure;
  }
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each("sink", 3, 10000, 3);  // three units, each sends every seq once
  std::lock_guard<std::mutex> lock(observed().mu);
  std::multiset<std::string> units(observed().units_seen.begin(), observed().units_seen.end());
  for (const char* expected : {"sink#0:0:one", "sink#1:0:one", "sink#0:1:two", "sink#1:1:two", "sink#0:2:three",
                               "sink#1:2:three"}) {
    EXPECT_EQ(units.count(expected), 1u) << expected;
  }
}

TEST_F(NetStreamTest, LargeBuffersLandInPooledMemory) {
  const std::string yaml = R"(
defaults: {buffer_size: 64KiB, depth: 8}
filters:
  src:  {class: "testing_filters::TestSource", copies: 1, args: {count: 3000, size: 65536}}
  sink: {class: "testing_filters::TestSink", copies: 1}
streams:
  - {from: src.out, to: sink.in}
)";
  Cluster cluster(yaml, {{"a", place({{"src", {0}}})}, {"b", place({{"sink", {0}}})}});
  auto failure = cluster.run_all();
  ASSERT_FALSE(failure) << *failure;
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each("sink", 1, 3000);
}

// Two pipelines share the a -> b connection; one consumer is stuck, then slow. Credits are
// per consumer copy, so the fast pipeline finishes while the stuck one's producer has sent
// no more than its window, and only that producer waits. The stuck sink reads nothing until
// the fast pipeline is done (a gate, not a race against the clock): were the fast one held
// back by it, the run would never end, and the watcher opens the gate after 60 s to say so.
TEST_F(NetStreamTest, SlowConsumerHoldsBackOnlyItsOwnProducers) {
  const std::string yaml = R"(
defaults: {buffer_size: 128KiB, depth: 8}  # a window of 8 across hosts (net/routes.h remote_window)
filters:
  fast_src:  {class: "testing_filters::TestSource", args: {count: 10000, size: 1000}}
  slow_src:  {class: "testing_filters::TestSource", args: {count: 200, size: 1000}}
  fast_sink: {class: "testing_filters::TestSink"}
  slow_sink: {class: "testing_filters::TestSink", args: {wait_for_gate: true, sleep_us: 20000}}
streams:
  - {from: fast_src.out, to: fast_sink.in}
  - {from: slow_src.out, to: slow_sink.in}
)";
  Cluster cluster(yaml, {{"a", place({{"fast_src", {0}}, {"slow_src", {0}}})},
                         {"b", place({{"fast_sink", {0}}, {"slow_sink", {0}}})}});
  sluice::Engine& a = *cluster.host("a").engine;
  std::atomic<bool> done{false};
  std::uint64_t slow_when_fast_done = 0;
  bool fast_done = false;
  std::thread watcher([&] {
    sluice::testing::eventually(
        [&] {
          std::uint64_t fast = 0, slow = 0;
          for (const auto& s : a.stream_stats()) {
            if (s.label.rfind("fast_src", 0) == 0) fast = s.buffers;
            if (s.label.rfind("slow_src", 0) == 0) slow = s.buffers;
          }
          if (fast == 10000) {
            fast_done = true;
            slow_when_fast_done = slow;
          }
          return fast_done || done.load();
        },
        std::chrono::seconds(60));
    observed().gate_open.store(true);
  });
  auto failure = cluster.run_all();
  done = true;
  watcher.join();
  ASSERT_FALSE(failure) << *failure;
  EXPECT_EQ(violations(), std::vector<std::string>{});
  expect_each("fast_sink", 1, 10000);
  expect_each("slow_sink", 1, 200);
  ASSERT_TRUE(fast_done) << "the fast pipeline was held back by the stuck consumer";
  // The stuck stream's producer got no further than its credit window (depth 8: nothing is
  // read, so no credit comes back), however long the fast pipeline took.
  EXPECT_LE(slow_when_fast_done, 8u) << "more in flight than the credit window allows";
  // The slow stream's producer spent its time waiting for credit: never more than the
  // window (depth) in flight, so memory stayed within the fixed pools.
  for (const auto& s : a.stream_stats()) {
    if (s.label.rfind("slow_src", 0) == 0) {
      EXPECT_GT(s.producer_blocked_ns, 1'000'000'000u);
    }
  }
}

// What the data plane reports holding, for the report on a run that stopped moving: a
// producer out of credit on the sending host, a consumer's full queue and the credit its
// host has given out on the receiving one.
TEST_F(NetStreamTest, InFlightSaysWhereAStuckStreamsFramesAre) {
  const std::string yaml = R"(
defaults: {buffer_size: 128KiB, depth: 8}  # a window of 8 across hosts (net/routes.h remote_window)
filters:
  src:  {class: "testing_filters::TestSource", args: {count: 200, size: 1000}}
  sink: {class: "testing_filters::TestSink", args: {wait_for_gate: true}}
streams:
  - {from: src.out, to: sink.in}
)";
  Cluster cluster(yaml, {{"a", place({{"src", {0}}})}, {"b", place({{"sink", {0}}})}});
  std::string sender, receiver;
  std::thread watcher([&] {
    // The sink reads nothing: the source spends its window (8) and waits for credit. Until
    // the last of those frames is written, a's connection still says it is writing: wait
    // for the state to settle (the two hosts are asked one after the other).
    sluice::testing::eventually(
        [&] {
          sender = cluster.host("a").plane->in_flight();
          receiver = cluster.host("b").plane->in_flight();
          return sender.find("0 frames queued; src.out -> sink.in copy 0 credit 0/8") != std::string::npos &&
                 receiver.find("copy 0 holds back 0 (credit left: a 0/8)") != std::string::npos;
        },
        std::chrono::seconds(30));
    observed().gate_open.store(true);
  });
  auto failure = cluster.run_all();
  watcher.join();
  ASSERT_FALSE(failure) << *failure;
  expect_each("sink", 1, 200);
  EXPECT_NE(sender.find("  to host 'b': 0 frames queued; src.out -> sink.in copy 0 credit 0/8;"), std::string::npos)
      << sender;
  EXPECT_NE(receiver.find("  from host 'a': "), std::string::npos) << receiver;
  EXPECT_NE(receiver.find("  landing src.out -> sink.in: copy 0 holds back 0 (credit left: a 0/8); 0 parked, "),
            std::string::npos)
      << receiver;
}

// CPU time, in ns, that this process's threads named `name` have run (schedstat), and
// how many there are.
struct ThreadsCpu {
  std::uint64_t ns = 0;
  int threads = 0;
};
ThreadsCpu cpu_of_threads(const std::string& name) {
  ThreadsCpu out;
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string comm_name;
    std::getline(comm, comm_name);
    if (comm_name != name) continue;
    std::ifstream stat(task.path() / "schedstat");
    std::uint64_t on_cpu = 0;
    stat >> on_cpu;
    out.ns += on_cpu;
    ++out.threads;
  }
  return out;
}

TEST_F(NetStreamTest, AnIdleDataPlaneSleeps) {
  // The I/O thread keeps looking for work for a few microseconds after its last handler
  // before it sleeps in epoll_wait; between units it must really sleep.
  Cluster cluster(pipeline("round_robin", 20000, 100), split_ab());
  // Each I/O thread names itself once it runs (threads it starts, such as Asio's resolver's,
  // inherit the name: counted too, they only sleep).
  ASSERT_TRUE(sluice::testing::eventually([] { return cpu_of_threads("sluice-net-io").threads >= 2; }))
      << "one I/O thread per host's data plane: found " << cpu_of_threads("sluice-net-io").threads;
  const ThreadsCpu at_start = cpu_of_threads("sluice-net-io");
  auto failure = cluster.run_all();
  ASSERT_FALSE(failure) << *failure;
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const ThreadsCpu before = cpu_of_threads("sluice-net-io");
  ASSERT_GT(before.ns, at_start.ns) << "the I/O threads' CPU time (schedstat) did not move during a run";
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const std::uint64_t used = cpu_of_threads("sluice-net-io").ns - before.ns;
  EXPECT_LT(used, 25'000'000u) << "two idle data planes' I/O threads ran " << used / 1000 << " us in 500 ms";
}

}  // namespace
}  // namespace testing_filters
