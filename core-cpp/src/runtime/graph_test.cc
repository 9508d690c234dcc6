#include "runtime/graph.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "runtime/stream_wiring.h"
#include "sync/run_signal.h"
#include "topology/topology.h"

namespace sluice {
namespace {

topo::Topology two_by_two(int source_copies) {
  return topo::parse_topology_text(R"(
defaults: {buffer_size: 100B, depth: 64}
filters:
  src:  {class: "t::Source", copies: )" + std::to_string(source_copies) + R"(}
  sink: {class: "t::Sink", copies: 2}
streams:
  - {from: src.out, to: sink.in, policy: by_key}
)",
                                   "two_by_two.yaml", ".");
}

// Producer copies that share a pool take from it with a compare-and-swap and outside the
// inline allocate; so with several here (and nothing landing from other hosts) each gets a
// share of the stream's blocks of its own, of which it is the only taker.
TEST(GraphPools, SeveralProducerCopiesHereEachTakeFromAShareOfTheirOwn) {
  const topo::Topology topology = two_by_two(3);
  RunSignal signal;
  Graph graph(topology, signal, Placement::everything(topology), nullptr);
  StreamRuntime& stream = *graph.streams()[0];
  std::size_t blocks = 0;
  for (int p = 0; p < 3; ++p) {
    BufferPool& share = stream.pool_of(p);
    EXPECT_NE(&share, stream.pool.get()) << "producer copy " << p;
    EXPECT_NE(share.allocate_lane(), nullptr) << "producer copy " << p << " does not allocate inline";
    for (int q = 0; q < p; ++q) EXPECT_NE(&share, &stream.pool_of(q)) << "copies " << q << " and " << p;
    blocks += share.count();
  }
  EXPECT_GE(blocks, Graph::pool_count(topology.streams[0], 3, 2)) << "the shares hold less than the one pool would";
  EXPECT_LT(blocks, Graph::pool_count(topology.streams[0], 3, 2) + 3);
}

TEST(GraphPools, OneProducerCopyHereTakesFromTheStreamsPoolInline) {
  const topo::Topology topology = two_by_two(3);
  Placement placement = Placement::everything(topology);
  placement.local["src"] = {1};  // copies 0 and 2 run elsewhere
  RunSignal signal;
  Graph graph(topology, signal, placement, nullptr);
  StreamRuntime& stream = *graph.streams()[0];
  EXPECT_EQ(&stream.pool_of(1), stream.pool.get());
  EXPECT_NE(stream.pool->allocate_lane(), nullptr);
  EXPECT_EQ(stream.pool->count(), Graph::pool_count(topology.streams[0], 1, 2));
}

// A source feeding two Java sink copies (64 KiB, depth 16 and depth 4) and a C++ sink (64 KiB,
// depth 16).
topo::Topology java_and_cpp_consumers(int source_copies, int cpp_sink_copies) {
  return topo::parse_topology_text(R"(
filters:
  src:  {class: "t::Source", copies: )" + std::to_string(source_copies) + R"(}
  jsink: {lang: java, class: t.Sink, copies: 2}
  csink: {class: "t::Sink", copies: )" + std::to_string(cpp_sink_copies) + R"(}
streams:
  - {from: src.out, to: jsink.in, buffer_size: 64KiB, depth: 16}
  - {from: src.other, to: csink.in, buffer_size: 64KiB, depth: 16}
  - {from: src.small, to: jsink.small, buffer_size: 64KiB, depth: 4}
)",
                                   "java_and_cpp_consumers.yaml", ".");
}

// A Java consumer copy gives closed blocks back in groups (at its next native call): its
// stream's pool has a group's worth more per consumer copy, at most the depth, so that the
// producer is not held up by a group it cannot have yet. A C++ consumer's is unchanged.
TEST(GraphPools, AJavaConsumersStreamHasRoomForTheBlocksItGivesBackInGroups) {
  const topo::Topology topology = java_and_cpp_consumers(1, 1);
  RunSignal signal;
  Graph graph(topology, signal, Placement::everything(topology), nullptr);
  EXPECT_EQ(graph.streams()[0]->pool->count(), 16u * 2 + 1 + 2 + 8u * 2);
  EXPECT_EQ(graph.streams()[1]->pool->count(), 16u + 1 + 1);
  EXPECT_EQ(graph.streams()[2]->pool->count(), 4u * 2 + 1 + 2 + 4u * 2) << "more than the depth";
}

// Where frames land from other hosts, the landing pool keeps the senders' credit, and per
// local consumer copy a run (InputPort::kRun = 32, at most the depth) and the buffer in hand,
// and for a Java consumer copy its group of closes (8, at most the depth) as well.
class FixedLandingRoom : public StreamWiring {
 public:
  explicit FixedLandingRoom(std::size_t room) : room_(room) {}
  Endpoint* remote_consumer(StreamRuntime&, int) override { return nullptr; }
  std::size_t landing_room(int) const override { return room_; }
  void graph_ready(Graph&) override {}
  void graph_gone() noexcept override {}

 private:
  std::size_t room_;
};

// Each stream's pool count in a process that runs `placement`'s copies of
// java_and_cpp_consumers(2, 2), with room to land 32 buffers of each stream from other hosts.
std::vector<std::size_t> pool_counts_with_landing(const Placement& placement) {
  const topo::Topology topology = java_and_cpp_consumers(2, 2);
  FixedLandingRoom wiring(32);
  RunSignal signal;
  Graph graph(topology, signal, placement, &wiring);
  std::vector<std::size_t> counts;
  for (const auto& stream : graph.streams()) counts.push_back(stream->pool->count());
  return counts;
}

TEST(GraphPools, AJavaConsumersLandingPoolHasRoomForItsGroupOfCloses) {
  Placement placement;  // both consumers' copies and one source copy here: the landing has a pool of its own
  placement.local["src"] = {0};
  placement.local["jsink"] = {0, 1};
  placement.local["csink"] = {0, 1};
  const std::vector<std::size_t> counts = pool_counts_with_landing(placement);
  EXPECT_EQ(counts[1], 32u + 2 * (16 + 1)) << "a C++ consumer's";
  EXPECT_EQ(counts[0], 32u + 2 * (16 + 1 + 8)) << "no room for the Java copies' groups of closes";
  EXPECT_EQ(counts[2], 32u + 2 * (4 + 1 + 4)) << "more than the depth";
}

// With no producer copy here, the stream's one pool is the landing's, and its local part
// already holds the groups of closes (depth x consumers + a buffer and a group each).
TEST(GraphPools, WithNoProducerHereTheLandingSharesTheLocalPartsRoomForClosing) {
  Placement placement;
  placement.local["jsink"] = {0, 1};
  placement.local["csink"] = {0, 1};
  const std::vector<std::size_t> counts = pool_counts_with_landing(placement);
  EXPECT_EQ(counts[1], (16u * 2 + 2) + 32 + 2 * (16 + 1));
  EXPECT_EQ(counts[0], (16u * 2 + 2 * (1 + 8)) + 32 + 2 * (16 + 1));
}

}  // namespace
}  // namespace sluice
