#include "console/run_status.h"

#include <gtest/gtest.h>

#include <map>

#include <nlohmann/json.hpp>

#include "console/status_views.h"
#include "console/ui_server.h"

namespace sluice::console {
namespace {

const char* kTopology = R"(name: t
filters:
  a: {class: A, library: /x.so}
  b: {class: B, library: /x.so, copies: 2}
  c: {class: C, library: /x.so}
streams:
  - {from: a.out, to: b.in}
  - {from: b.out, to: c.in}
work: [one, two]
)";

StreamStats counters(const std::string& label, std::uint64_t buffers, std::uint64_t bytes, std::uint64_t pblk_ns,
                     std::uint64_t cblk_ns, int producers, int consumers) {
  StreamStats s;
  s.label = label;
  s.buffers = buffers;
  s.bytes = bytes;
  s.producer_blocked_ns = pblk_ns;
  s.consumer_blocked_ns = cblk_ns;
  s.producer_copies = producers;
  s.consumer_copies = consumers;
  return s;
}

TEST(RateBetween, RatesAndSharesOverTheStretch) {
  // 2 s: 1000 buffers, 4000 bytes; producer (1 copy) blocked 1 s, consumers (2) 1 s of 4.
  const StreamRate r = rate_between(counters("x", 100, 400, 0, 0, 1, 2),
                                    counters("x", 1100, 4400, 1'000'000'000, 1'000'000'000, 1, 2), 2.0);
  EXPECT_DOUBLE_EQ(r.buffers_per_second, 500);
  EXPECT_DOUBLE_EQ(r.bytes_per_second, 2000);
  EXPECT_DOUBLE_EQ(r.producer_blocked, 0.5);
  EXPECT_DOUBLE_EQ(r.consumer_blocked, 0.25);
  // Shares are capped at 1; no time, no rate.
  EXPECT_DOUBLE_EQ(rate_between(counters("x", 0, 0, 0, 0, 1, 1), counters("x", 0, 0, 9'000'000'000, 0, 1, 1), 1.0)
                       .producer_blocked, 1.0);
  EXPECT_DOUBLE_EQ(rate_between(counters("x", 0, 0, 0, 0, 1, 1), counters("x", 5, 5, 0, 0, 1, 1), 0).buffers_per_second, 0);
}

// The submitting program's box comes after its producer, not first (the page drew every
// `to: client` graph backwards).
TEST(RunStatus, TheClientIsDrawnAfterItsProducer) {
  const topo::Topology t = topo::parse_topology_text(R"(name: t
filters:
  gen: {class: G, library: none.so, copies: 2}
  relay: {class: R, library: none.so, copies: 3}
streams:
  - {from: gen.out, to: relay.in}
  - {from: relay.out, to: client}
)", "t.yaml", "/base");
  const StatusSnapshot s = RunStatus(t).snapshot();
  std::map<std::string, int> column;
  for (const auto& f : s.filters) column[f.name] = f.column;
  ASSERT_EQ(column.size(), 3u);
  EXPECT_EQ(column["gen"], 0);
  EXPECT_EQ(column["relay"], 1);
  EXPECT_EQ(column["client"], 2);
}

// Deployed again for a unit too short for any report (after the deployment broke between
// units): once it finished, every copy shows it, not the unit before the break.
TEST(RunStatus, AUnitThatFinishedOnAFreshDeploymentIsEveryCopysLast) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  status.started();
  status.unit_started(0);
  status.unit_ended(UnitRecord{0, "one", 0.1, true, ""});
  status.sample({counters("a.out -> b.in", 0, 0, 0, 0, 1, 2), counters("b.out -> c.in", 0, 0, 0, 0, 2, 1)}, {}, {},
                /*deployed=*/false);
  for (const CopyActivity& c : status.snapshot().copies) EXPECT_EQ(c.stage, "not deployed") << c.filter;
  status.unit_started(1);
  status.unit_ended(UnitRecord{1, "two", 0.1, true, ""});
  status.sample({counters("a.out -> b.in", 0, 0, 0, 0, 1, 2), counters("b.out -> c.in", 0, 0, 0, 0, 2, 1)}, {}, {},
                /*deployed=*/true);
  for (const CopyActivity& c : status.snapshot().copies) {
    EXPECT_EQ(c.stage, "idle") << c.filter;
    EXPECT_EQ(c.unit, 1u) << c.filter;
  }
}

TEST(RunStatus, SnapshotFollowsTheRunAndKeepsTheFinalCounters) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  StatusSnapshot s = status.snapshot();
  EXPECT_EQ(s.status, "starting");
  ASSERT_EQ(s.filters.size(), 3u);
  EXPECT_EQ(s.filters[0].column, 0);
  EXPECT_EQ(s.filters[1].column, 1);
  EXPECT_EQ(s.filters[2].column, 2);
  ASSERT_EQ(s.copies.size(), 4u);  // a#0, b#0, b#1, c#0, all on "local"
  EXPECT_EQ(s.copies[2].filter, "b");
  EXPECT_EQ(s.copies[2].copy, 1);
  ASSERT_EQ(s.hosts.size(), 1u);
  EXPECT_EQ(s.hosts[0].copies, 4);

  status.started();
  status.unit_started(0);
  status.sample({counters("a.out -> b.in", 10, 100, 0, 0, 1, 2), counters("b.out -> c.in", 5, 50, 0, 0, 2, 1)},
                {CopyActivity{"b", 1, "local", "process", "read", "a.out -> b.in", 0.5, 0}});
  s = status.snapshot();
  EXPECT_EQ(s.status, "running");
  EXPECT_EQ(s.units[0].state, "running");
  EXPECT_EQ(s.units[1].state, "pending");
  EXPECT_EQ(s.streams[0].totals.buffers, 10u);
  EXPECT_GT(s.streams[0].rate.buffers_per_second, 0);
  EXPECT_EQ(s.copies[2].waiting_for, "read");
  EXPECT_EQ(s.hosts[0].traffic.buffers_written, 15u);

  status.unit_ended(UnitRecord{0, "one", 0.25, true, ""});
  RunReport report;
  report.units = {UnitRecord{0, "one", 0.25, true, ""}, UnitRecord{1, "two", 0, false, ""}};
  report.streams = {counters("a.out -> b.in", 20, 200, 0, 0, 1, 2), counters("b.out -> c.in", 7, 70, 0, 0, 2, 1)};
  report.wall_seconds = 2;
  report.failure = Failure{"c", 0, "local", 1, "process", "boom"};
  report.exit_code = 1;
  report.partial_counts = {"b, last reported 0.4 s before the end"};
  status.finish(report);
  // Samples after the end change nothing.
  status.sample({counters("a.out -> b.in", 99, 990, 0, 0, 1, 2), counters("b.out -> c.in", 99, 990, 0, 0, 2, 1)}, {});
  s = status.snapshot();
  EXPECT_TRUE(s.ended);
  EXPECT_EQ(s.status, "failed");
  EXPECT_EQ(s.exit_code, 1);
  EXPECT_EQ(s.streams[0].totals.buffers, 20u);
  EXPECT_DOUBLE_EQ(s.streams[0].rate.buffers_per_second, 10);  // the whole run's, once ended
  EXPECT_EQ(s.units[0].state, "finished");
  EXPECT_EQ(s.units[1].state, "failed");
  ASSERT_TRUE(s.failure);
  EXPECT_EQ(s.failure->filter, "c");

  const nlohmann::json doc = nlohmann::json::parse(status_json(s));
  EXPECT_EQ(doc["streams"][0]["buffers"], 20);
  EXPECT_EQ(doc["failure"]["message"], "boom");
  EXPECT_EQ(doc["status"], "failed");
  // As in the --metrics file: the counts are lower bounds (the page says so under Hosts).
  EXPECT_EQ(doc["partial_counts_from_hosts"], nlohmann::json::array({"b, last reported 0.4 s before the end"}));

  const std::string metrics = status_metrics(s);
  EXPECT_NE(metrics.find("sluice_stream_buffers_total{stream=\"a.out -> b.in\",from=\"a.out\",to=\"b.in\"} 20\n"),
            std::string::npos) << metrics;
  EXPECT_NE(metrics.find("# TYPE sluice_stream_buffers_total counter\n"), std::string::npos);
  EXPECT_NE(metrics.find("sluice_run_ended{topology=\"t\"} 1\n"), std::string::npos) << metrics;
}

// sluice serve: units arrive as clients submit them, a failed one is shown while serving
// goes on, only the latest kUnitsListed are listed (the rest counted), and how serving
// ended is its exit status, not the last failed unit.
TEST(RunStatus, OpenEndedUnitsAsSluiceServeFeedsThem) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  status.serving();
  status.started();
  const std::uint64_t listed = RunStatus::kUnitsListed;
  // The topology's own work: (one, two) is not what serve runs: clients' units are.
  EXPECT_TRUE(status.snapshot().units.empty());
  status.unit_queued(0, "q0");
  status.unit_queued(7, "out of order");  // not the next one: ignored
  status.unit_started(0);
  StatusSnapshot s = status.snapshot();
  ASSERT_EQ(s.units.size(), 1u);
  EXPECT_EQ(s.units[0].work, "q0");
  EXPECT_EQ(s.units[0].state, "running");
  status.unit_queued(1, "q1");  // waits behind unit 0
  status.unit_ended(UnitRecord{0, "q0", 0.5, false, ""});
  status.unit_failed(Failure{"b", 1, "local", 0, "process", "boom"});
  s = status.snapshot();
  EXPECT_EQ(s.status, "running");  // serving goes on
  ASSERT_TRUE(s.failure.has_value());
  EXPECT_EQ(s.failure->filter, "b");
  EXPECT_EQ(s.units[0].state, "failed");
  EXPECT_EQ(s.units[1].state, "pending");
  // Ended units beyond the limit are forgotten from the front, up to the first pending one:
  // the failed unit 0 goes, the pending unit 1 and everything after it stay.
  for (std::uint64_t i = 2; i < listed + 50; ++i) {
    status.unit_queued(i, "u" + std::to_string(i));
    status.unit_started(i);
    status.unit_ended(UnitRecord{i, "u" + std::to_string(i), 0.01, true, ""});
  }
  s = status.snapshot();
  EXPECT_EQ(s.units.size(), listed + 49);
  EXPECT_EQ(s.units.front().index, 1u);
  EXPECT_EQ(s.earlier_units, 1u);
  EXPECT_EQ(s.earlier_finished, 0u);
  status.unit_ended(UnitRecord{1, "q1", 0.01, true, ""});
  status.unit_queued(listed + 50, "last");
  s = status.snapshot();
  EXPECT_EQ(s.units.size(), listed);
  EXPECT_EQ(s.earlier_units, 51u);
  EXPECT_EQ(s.earlier_finished, 50u);  // units 0..50 but the failed unit 0
  EXPECT_EQ(s.units.front().index, 51u);
  EXPECT_EQ(s.units.back().work, "last");
  EXPECT_EQ(s.units.back().state, "pending");
  const std::string metrics = status_metrics(s);
  EXPECT_NE(metrics.find("# TYPE sluice_units_total counter\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("sluice_units_total{topology=\"t\"} " + std::to_string(listed + 51)), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("sluice_units_finished_total{topology=\"t\"} " + std::to_string(listed + 49)), std::string::npos);
  // Every finished unit's duration is in the histogram, listed or not (10 ms each: the
  // bucket up to 10 ms), and no unit has a series of its own (an outside review: a series
  // per unit, its payload a label, grew Prometheus's database for as long as serve ran).
  EXPECT_NE(metrics.find("sluice_unit_duration_seconds_bucket{topology=\"t\",le=\"0.003\"} 0\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("sluice_unit_duration_seconds_bucket{topology=\"t\",le=\"0.01\"} " +
                         std::to_string(listed + 49) + "\n"), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("sluice_unit_duration_seconds_count{topology=\"t\"} " + std::to_string(listed + 49) + "\n"),
            std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("unit=\""), std::string::npos) << metrics;
  EXPECT_EQ(metrics.find("work=\""), std::string::npos) << metrics;
  // The failed unit 0 is no longer listed, and still counted (an outside review: a failure
  // counter had to be worked out from the others).
  EXPECT_EQ(s.earlier_failed, 1u);
  EXPECT_NE(metrics.find("sluice_units_failed_total{topology=\"t\"} 1\n"), std::string::npos) << metrics;
  RunReport end;
  end.exit_code = 0;
  status.finish(end);
  s = status.snapshot();
  EXPECT_EQ(s.status, "ok");  // stopped cleanly, though a unit had failed
  ASSERT_TRUE(s.failure.has_value());  // still shown
}

// A stall report (the console's, after 10 s without a buffer moving) is in /api/status and
// /metrics while it lasts, not on the terminal alone (an outside review): gone once buffers
// move again, or the unit ends.
TEST(RunStatus, AStallIsShownUntilBuffersMoveAgain) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  status.started();
  status.unit_started(0);
  EXPECT_FALSE(status.snapshot().stall.has_value());
  EXPECT_NE(status_metrics(status.snapshot()).find("sluice_run_stalled{topology=\"t\"} 0\n"), std::string::npos);
  status.stalled("no buffer has moved for 10.1 s; what each copy is doing:\n  b#0 on host local: waiting");
  StatusSnapshot s = status.snapshot();
  ASSERT_TRUE(s.stall.has_value());
  EXPECT_NE(status_json(s).find("\"stall\":\"no buffer has moved for 10.1 s"), std::string::npos) << status_json(s);
  EXPECT_NE(status_metrics(s).find("sluice_run_stalled{topology=\"t\"} 1\n"), std::string::npos);
  status.moving();
  EXPECT_FALSE(status.snapshot().stall.has_value());
  EXPECT_EQ(status_json(status.snapshot()).find("\"stall\""), std::string::npos);
  status.stalled("again");
  status.unit_ended(UnitRecord{0, "", 12.0, true, ""});
  EXPECT_FALSE(status.snapshot().stall.has_value()) << "the unit ended";
}

// sluice serve between a deployment that broke and the next: no copy runs, whatever the
// last samples said (embedded here: hosts' report ages are the remote view's, see
// console.serve's across_hosts).
TEST(RunStatus, WithoutADeploymentCopiesAreNotDeployed) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  status.started();
  const std::vector<StreamStats> streams = {counters("a.out -> b.in", 10, 100, 0, 0, 1, 2),
                                            counters("b.out -> c.in", 5, 50, 0, 0, 2, 1)};
  HostTraffic host;
  host.host = "local";
  host.buffers_written = 15;
  host.report_age_seconds = 0.2;
  status.sample(streams, {CopyActivity{"b", 1, "local", "process", "read", "a.out -> b.in", 0.5, 0}}, {host});
  status.sample(streams, {}, {host}, false);
  const StatusSnapshot s = status.snapshot();
  ASSERT_EQ(s.copies.size(), 4u);
  EXPECT_EQ(s.copies[2].stage, "not deployed");
  EXPECT_EQ(s.copies[2].waiting_for, "");
  EXPECT_EQ(s.streams[0].totals.buffers, 10u);  // the counters stay
  // Deployed again, before any report names the copies (units shorter than a report's
  // 500 ms): they are idle, not "not deployed" (which stuck for thousands of units).
  status.sample(streams, {}, {host}, true);
  EXPECT_EQ(status.snapshot().copies[2].stage, "idle");
}

// Across hosts, once the run ended its deployment is gone: no host has a recent report (the
// age said 0.2 s for as long as --ui-linger served the final state).
TEST(RunStatus, AfterTheRunNoHostHasARecentReport) {
  const topo::Topology t = topo::parse_topology_text(std::string(kTopology) + "hosts:\n  h: 127.0.0.1:1\n",
                                                     "t.yaml", "/base");
  Placement everything = Placement::everything(t);
  RunStatus status(t, {{"h", everything}});
  status.started();
  HostTraffic host;
  host.host = "h";
  host.buffers_written = 15;
  host.report_age_seconds = 0.2;
  const std::vector<StreamStats> streams = {counters("a.out -> b.in", 10, 100, 0, 0, 1, 2),
                                            counters("b.out -> c.in", 5, 50, 0, 0, 2, 1)};
  status.sample(streams, {}, {host});
  ASSERT_EQ(status.snapshot().hosts.size(), 1u);
  EXPECT_DOUBLE_EQ(status.snapshot().hosts[0].traffic.report_age_seconds, 0.2);
  RunReport end;
  end.streams = streams;
  status.finish(end);
  const StatusSnapshot s = status.snapshot();
  EXPECT_EQ(s.hosts[0].traffic.buffers_written, 15u);  // the final counters stay
  EXPECT_EQ(s.hosts[0].traffic.report_age_seconds, -1);
}

// A run that failed in its first unit: its copies went with it, wherever the last sample saw
// them (an operator's dashboard showed a dead run's copies "in process"), and the units after
// the failed one never ran: "not run", not "failed".
TEST(RunStatus, AFailedRunsCopiesAreGoneAndItsLaterUnitsNotRun) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t, {});
  status.started();
  status.unit_started(0);
  CopyActivity busy{"b", 1, "local", "process", "", "", 0};
  const std::vector<StreamStats> streams = {counters("a.out -> b.in", 10, 100, 0, 0, 1, 2),
                                            counters("b.out -> c.in", 5, 50, 0, 0, 2, 1)};
  status.sample(streams, {busy});
  RunReport end;
  end.streams = streams;
  end.units = {UnitRecord{0, "one", 0.5, false, ""}, UnitRecord{1, "two", 0, false, "not run"}};
  end.failure = Failure{"b", 1, "local", 0, "process", "boom"};
  status.finish(end);
  const StatusSnapshot s = status.snapshot();
  for (const CopyActivity& c : s.copies) EXPECT_EQ(c.stage, "not deployed") << c.filter << "#" << c.copy;
  ASSERT_EQ(s.units.size(), 2u);
  EXPECT_EQ(s.units[0].state, "failed");
  EXPECT_EQ(s.units[1].state, "not run");
}

// A payload of megabytes (sluice serve takes what a client sends) is kept and shown cut, with
// its size: the view and the metrics stay small.
TEST(RunStatus, APayloadIsKeptCutToItsStart) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  status.serving();
  status.started();
  const std::string huge = "x=0 " + std::string(8000000, 'A');
  status.unit_queued(0, huge);
  status.unit_started(0);
  status.unit_ended(UnitRecord{0, huge, 0.5, true, ""});
  const StatusSnapshot s = status.snapshot();
  ASSERT_EQ(s.units.size(), 1u);
  EXPECT_EQ(s.units[0].work, "x=0 " + std::string(RunStatus::kPayloadShown - 4, 'A') + "... (8000004 bytes)");
  EXPECT_LT(status_metrics(s).size(), 10000u);
}

// A payload (or a failure's message) is bytes a client chose: the JSON and the metrics stay
// UTF-8 (the JSON library threw: /api/status answered 500). The payload shown is cut and
// escaped (text::shortened): the stray byte is written as \xff.
TEST(RunStatus, BytesThatAreNotUtf8StayOutOfTheJsonAndTheMetrics) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  status.serving();
  status.started();
  status.unit_queued(0, "x\xff");
  status.unit_started(0);
  status.unit_ended(UnitRecord{0, "x\xff", 0.5, true, ""});
  const StatusSnapshot s = status.snapshot();
  EXPECT_NE(status_json(s).find(R"("x\\xff")"), std::string::npos) << status_json(s);
  EXPECT_EQ(status_json(s).find('\xff'), std::string::npos);
  const std::string metrics = status_metrics(s);
  EXPECT_EQ(metrics.find('\xff'), std::string::npos) << "no payload is a label any more";
}

TEST(UiResponse, ServesThreePathsAndNothingElse) {
  const topo::Topology t = topo::parse_topology_text(kTopology, "t.yaml", "/base");
  RunStatus status(t);
  http::Response page = ui_response(status, {"GET", "/", "/"});
  EXPECT_EQ(page.status, 200);
  EXPECT_NE(page.content_type.find("text/html"), std::string::npos);
  EXPECT_NE(page.body.find("/api/status"), std::string::npos);
  EXPECT_EQ(page.body.find("http"), page.body.find("http://www.w3.org/2000/svg"));  // nothing fetched from elsewhere
  std::string csp;
  for (const auto& [name, value] : page.headers) {
    if (name == "Content-Security-Policy") csp = value;
  }
  EXPECT_NE(csp.find("script-src 'sha256-"), std::string::npos) << csp;  // its own script only, by hash
  EXPECT_EQ(csp.find("unsafe"), std::string::npos) << csp;
  EXPECT_EQ(ui_response(status, {"GET", "/api/status", "/api/status"}).content_type, "application/json");
  EXPECT_NE(ui_response(status, {"GET", "/metrics", "/metrics"}).content_type.find("version=0.0.4"), std::string::npos);
  EXPECT_EQ(ui_response(status, {"GET", "/etc/passwd", "/etc/passwd"}).status, 404);
}

}  // namespace
}  // namespace sluice::console
