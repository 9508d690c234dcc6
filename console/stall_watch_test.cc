#include "console/stall_watch.h"

#include <gtest/gtest.h>

#include <thread>

#include "console/host_stats.h"
#include "topology/topology.h"

namespace sluice::console {
namespace {

using namespace std::chrono_literals;

TEST(StallWatchTest, ReportsOncePerStallAndAgainAfterMovementStopsAgain) {
  // The first observe must come within `after` of start_unit: 400 ms, so that a loaded
  // machine does not make the start look like a stall.
  StallWatch watch(400ms, false);
  watch.start_unit(0);
  EXPECT_EQ(watch.observe(0), StallWatch::Verdict::kMoving);
  std::this_thread::sleep_for(420ms);
  EXPECT_EQ(watch.observe(0), StallWatch::Verdict::kReport);
  EXPECT_GE(watch.quiet_seconds(), 0.4);
  EXPECT_EQ(watch.observe(0), StallWatch::Verdict::kMoving);  // once per stall
  EXPECT_TRUE(watch.stalled());  // the live view keeps showing the report
  EXPECT_EQ(watch.observe(5), StallWatch::Verdict::kMoving);  // it moved
  EXPECT_FALSE(watch.stalled());
  std::this_thread::sleep_for(420ms);
  EXPECT_EQ(watch.observe(5), StallWatch::Verdict::kReport);  // a new stall
}

TEST(StallWatchTest, FailsInsteadOfReportingWhenAskedTo) {
  StallWatch watch(10ms, true);
  watch.start_unit(7);
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(watch.observe(7), StallWatch::Verdict::kFail);
}

TEST(StallWatchTest, CountsWrittenAndReadBuffers) {
  std::vector<StreamStats> streams(2);
  streams[0].buffers = 3;
  streams[0].consumed = 2;
  streams[1].buffers = 10;
  EXPECT_EQ(buffers_moved(streams), 15u);
}

TEST(StallWatchTest, TheReportPutsWaitingCopiesFirstAndSaysWhatEachWaitsOn) {
  std::vector<CopyActivity> copies = {
      {"count", 0, "b", "process", "", "", 0},
      {"src", 0, "a", "process", "allocate", "src.out -> fwd.in", 9.5},
      {"read", 0, "a", "idle", "", "", 0},
      {"join", 1, "b", "process", "read", "z.out -> join.in2", 12.25},
      {"fwd", 0, "b", "process", "write", "fwd.out -> join.in1", 11},
  };
  const std::string report = stall_report(12.3, copies, {});
  EXPECT_EQ(report,
            "no buffer has moved for 12.3 s; what each copy is doing:\n"
            "  join#1 on host b: waiting 12.2 s to read from z.out -> join.in2\n"
            "  fwd#0 on host b: waiting 11.0 s to write to fwd.out -> join.in1\n"
            "  src#0 on host a: waiting 9.5 s for a free buffer of src.out -> fwd.in (every one is held: "
            "queued downstream, or kept by a copy; a filter that allocates buffers and never writes nor drops "
            "them holds them itself)\n"
            "  count#0 on host b: busy in its own code (process), not waiting on a stream\n"
            "  read#0 on host a: done with this unit of work");
}

// A producer out of free buffers while nothing is queued and the stream's reader waits to
// read: the reader (or a filter it wrote them to) holds them; a Java filter that forgot
// close() is the usual case. With buffers queued, the general reason stays.
TEST(StallWatchTest, FreeBuffersHeldByTheirReaderAreBlamedOnIt) {
  const std::vector<CopyActivity> copies = {
      {"src", 0, "local", "process", "allocate", "src.out -> dst.in", 12.3},
      {"dst", 0, "local", "process", "read", "src.out -> dst.in", 12.3},
  };
  StreamStats stream;
  stream.label = "src.out -> dst.in";
  stream.buffers = stream.consumed = 26;
  EXPECT_EQ(stall_report(12.4, copies, {stream}),
            "no buffer has moved for 12.4 s; what each copy is doing:\n"
            "  src#0 on host local: waiting 12.3 s for a free buffer of src.out -> dst.in (none is queued on "
            "it while dst#0 waits to read it: every one is held by a copy that read it (or by a filter it was "
            "written to) and neither wrote nor dropped it; a filter must write or drop each buffer it reads (in "
            "Java, close() it))\n"
            "  dst#0 on host local: waiting 12.3 s to read from src.out -> dst.in");
  stream.queued = 3;
  EXPECT_NE(stall_report(12.4, copies, {stream}).find("(every one is held: queued downstream, or kept by a copy;"),
            std::string::npos);
}

// Each host reports at its own moment: a consumer's host may report reads its producers'
// host has not reported writing yet. The merged count never reads more than was written
// (each consumer copy of a broadcast reads all of it): an outside review saw consumed ~200
// ahead of buffers mid-run.
TEST(HostStatsTest, MergedReadsNeverLeadWhatWasWritten) {
  const topo::Topology topology = topo::parse_topology_text(
      "filters: {p: {class: P}, c: {class: C, copies: 2}, d: {class: D, copies: 2}}\n"
      "streams:\n  - {from: p.out, to: c.in}\n  - {from: p.o2, to: d.in, policy: broadcast}\n",
      "t.yaml", "/tmp");
  HostStats stats(topology, 2);
  auto report = [&](int host, std::uint64_t written, std::uint64_t read) {
    google::protobuf::RepeatedPtrField<control::StreamMetrics> streams;
    for (const topo::StreamSpec& spec : topology.streams) {
      control::StreamMetrics* m = streams.Add();
      m->set_label(spec.label());
      m->set_buffers(written);
      m->set_consumed(read);
    }
    stats.store(host, streams);
  };
  report(0, 100, 0);    // the producers' host, 0.5 s ago
  report(1, 0, 250);    // the consumers' host, now
  const std::vector<StreamStats> merged = stats.merged();
  ASSERT_EQ(merged.size(), 2u);
  EXPECT_EQ(merged[0].buffers, 100u);
  EXPECT_EQ(merged[0].consumed, 100u) << "round robin: each buffer is read once";
  EXPECT_EQ(merged[1].consumed, 200u) << "broadcast: each of 2 copies reads every buffer";
  report(1, 0, 60);
  EXPECT_EQ(stats.merged()[0].consumed, 60u) << "behind is reported as it is";
}

// Across hosts, after the copies: what each host's data plane said it holds, indented
// under the host; a host that was still moving said nothing and is left out.
TEST(StallWatchTest, TheReportEndsWithWhatEachHostsDataPlaneHolds) {
  const topo::Topology topology = topo::parse_topology_text("filters: {a: {class: A}}\n", "t.yaml", "/tmp");
  HostStats stats(topology, 3);
  stats.store_in_flight(0, "a", "  to host 'b': 0 frames queued; a.out -> b.in copy 0 credit 0/8;\n");
  stats.store_in_flight(1, "b", "");
  stats.store_in_flight(2, "c",
                        "  from host 'a': 0 frames queued\n"
                        "  landing a.out -> b.in: copy 0 holds back 3 (credit left: a 0/8); 0 parked\n");
  const std::string report = stall_report(2.5, {{"b", 0, "c", "process", "read", "a.out -> b.in", 2.4}}, {}, stats.in_flight());
  EXPECT_EQ(report,
            "no buffer has moved for 2.5 s; what each copy is doing:\n"
            "  b#0 on host c: waiting 2.4 s to read from a.out -> b.in\n"
            "what the data planes hold:\n"
            "  host a:\n"
            "    to host 'b': 0 frames queued; a.out -> b.in copy 0 credit 0/8;\n"
            "  host c:\n"
            "    from host 'a': 0 frames queued\n"
            "    landing a.out -> b.in: copy 0 holds back 3 (credit left: a 0/8); 0 parked");
  // Embedded (no data plane), or every host moving: nothing is added.
  EXPECT_EQ(stall_report(2.5, {}, {}, HostStats(topology, 2).in_flight()),
            "no buffer has moved for 2.5 s; what each copy is doing:");
}

}  // namespace
}  // namespace sluice::console
