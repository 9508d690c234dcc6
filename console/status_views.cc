#include "console/status_views.h"

#include <nlohmann/json.hpp>

#include "http/metrics_text.h"

namespace sluice::console {

namespace {

double seconds(std::uint64_t ns) { return static_cast<double>(ns) / 1e9; }

nlohmann::json rate_json(const StreamRate& r) {
  return {{"buffers_per_second", r.buffers_per_second},
          {"bytes_per_second", r.bytes_per_second},
          {"producer_blocked", r.producer_blocked},
          {"consumer_blocked", r.consumer_blocked}};
}

}  // namespace

std::string status_json(const StatusSnapshot& s) {
  nlohmann::json doc;
  // The fields of the --metrics file (report.cc), with the same meaning.
  doc["topology"] = {{"name", s.topology_name}, {"file", s.topology_file}};
  doc["exit_code"] = s.exit_code;
  doc["status"] = s.status;
  doc["ended"] = s.ended;
  doc["wall_seconds"] = s.wall_seconds;
  doc["rate_seconds"] = s.rate_seconds;
  doc["units"] = nlohmann::json::array();
  for (const UnitRecord& u : s.units) {
    doc["units"].push_back({{"index", u.index}, {"work", u.work}, {"seconds", u.seconds},
                            {"finished", u.finished}, {"state", u.state}});
  }
  doc["earlier_units"] = s.earlier_units;  // sluice serve: units no longer listed, and how many finished
  doc["earlier_finished"] = s.earlier_finished;
  doc["earlier_failed"] = s.earlier_failed;
  if (s.current_unit) doc["current_unit"] = *s.current_unit;
  doc["streams"] = nlohmann::json::array();
  for (const StatusSnapshot::Stream& st : s.streams) {
    const StreamStats& t = st.totals;
    doc["streams"].push_back({{"stream", t.label},
                              {"from", st.from},
                              {"to", st.to},
                              {"policy", st.policy},
                              {"buffer_size", st.buffer_size},
                              {"depth", st.depth},
                              {"buffers", t.buffers},
                              {"bytes", t.bytes},
                              {"consumed", t.consumed},
                              {"queued", t.queued},
                              {"capacity", t.capacity},
                              {"producer_copies", t.producer_copies},
                              {"consumer_copies", t.consumer_copies},
                              {"producer_blocked_seconds", seconds(t.producer_blocked_ns)},
                              {"consumer_blocked_seconds", seconds(t.consumer_blocked_ns)},
                              {"rate", rate_json(st.rate)},
                              {"average", rate_json(st.average)}});
  }
  doc["filters"] = nlohmann::json::array();
  for (const StatusSnapshot::Filter& f : s.filters) {
    doc["filters"].push_back({{"name", f.name}, {"lang", f.lang}, {"class", f.class_name},
                              {"copies", f.copies}, {"column", f.column}});
  }
  doc["copies"] = nlohmann::json::array();
  for (const CopyActivity& c : s.copies) {
    doc["copies"].push_back({{"filter", c.filter}, {"copy", c.copy}, {"host", c.host}, {"stage", c.stage},
                             {"waiting_for", c.waiting_for}, {"stream", c.stream},
                             {"waiting_seconds", c.waiting_seconds}, {"unit", c.unit}});
  }
  doc["hosts"] = nlohmann::json::array();
  for (const StatusSnapshot::Host& h : s.hosts) {
    const HostTraffic& t = h.traffic;
    doc["hosts"].push_back({{"name", h.name}, {"address", h.address}, {"copies", h.copies},
                            {"buffers_written", t.buffers_written}, {"bytes_written", t.bytes_written},
                            {"buffers_read", t.buffers_read},
                            {"producer_blocked_seconds", seconds(t.producer_blocked_ns)},
                            {"consumer_blocked_seconds", seconds(t.consumer_blocked_ns)},
                            {"report_age_seconds", t.report_age_seconds}});
  }
  if (s.failure) {
    const Failure& f = *s.failure;
    doc["failure"] = failure_json(f);
  }
  // sluice serve: 0 until a deployment breaks between units (always 0 for sluice run); the
  // latest one's cause once one did, without "unit": it broke none.
  doc["deployments_lost"] = s.deployments_lost;
  if (s.deployment_lost) {
    doc["deployment_lost"] = failure_json(*s.deployment_lost);
    doc["deployment_lost"].erase("unit");
  }
  if (!s.stuck.empty()) doc["stuck_copies"] = s.stuck;
  if (s.stall) doc["stall"] = *s.stall;
  // The streams' and hosts' counts are lower bounds when this is there, as in --metrics.
  if (!s.partial_counts.empty()) doc["partial_counts_from_hosts"] = s.partial_counts;
  // Payloads and messages are bytes a peer chose: what is not UTF-8 becomes U+FFFD.
  return doc.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string status_metrics(const StatusSnapshot& s) {
  http::MetricsText m;
  const http::Labels run = {{"topology", s.topology_name}};
  m.family("sluice_run_info", "gauge", "The run being watched; its labels say which and how it stands.");
  m.sample("sluice_run_info", {{"topology", s.topology_name}, {"file", s.topology_file}, {"status", s.status}},
           std::uint64_t{1});
  m.family("sluice_run_ended", "gauge", "1 once the run has ended, else 0.");
  m.sample("sluice_run_ended", run, std::uint64_t{s.ended ? 1u : 0u});
  m.family("sluice_run_exit_code", "gauge", "The console's exit status (meaningful once the run ended).");
  m.sample("sluice_run_exit_code", run, s.exit_code);
  m.family("sluice_run_stalled", "gauge",
           "1 while no buffer has moved for the stall report's time (10 s; /api/status's stall says what each copy waits on), else 0.");
  m.sample("sluice_run_stalled", run, std::uint64_t{s.stall ? 1u : 0u});
  m.family("sluice_run_wall_seconds", "gauge", "Seconds since the run started (the whole run once it ended).");
  m.sample("sluice_run_wall_seconds", run, s.wall_seconds);
  m.family("sluice_deployments_lost_total", "counter",
           "sluice serve: deployments that broke between units (the next unit deploys again).");
  m.sample("sluice_deployments_lost_total", run, s.deployments_lost);

  std::uint64_t finished = s.earlier_finished;
  std::uint64_t failed = s.earlier_failed;
  for (const UnitRecord& u : s.units) {
    finished += u.finished ? 1 : 0;
    failed += u.state == "failed" ? 1 : 0;
  }
  // Counters, so that rate() and increase() work on them; a unit's detail (its payload, its
  // state) is in /api/status, not in a series of its own per unit.
  m.family("sluice_units_total", "counter", "Units of work in the run (sluice serve: submitted so far).");
  m.sample("sluice_units_total", run, s.earlier_units + s.units.size());
  m.family("sluice_units_finished_total", "counter", "Units of work finished.");
  m.sample("sluice_units_finished_total", run, finished);
  m.family("sluice_units_failed_total", "counter", "Units of work that failed (sluice serve goes on after them).");
  m.sample("sluice_units_failed_total", run, failed);
  m.histogram("sluice_unit_duration_seconds", "How long each finished unit of work took.", run,
              UnitDurations::bounds(), s.durations.counts, s.durations.over, s.durations.sum);
  double running = 0;
  for (const UnitRecord& u : s.units) {
    if (s.current_unit && u.index == *s.current_unit) running = u.seconds;
  }
  m.family("sluice_unit_running_seconds", "gauge", "How long the unit of work running now has run (0 when none runs).");
  m.sample("sluice_unit_running_seconds", run, running);

  // Per stream. Labels: stream ("a.out -> b.in"), from, to.
  auto stream_family = [&](const char* name, const char* type, const char* help, auto value) {
    m.family(name, type, help);
    for (const StatusSnapshot::Stream& st : s.streams) {
      m.sample(name, {{"stream", st.totals.label}, {"from", st.from}, {"to", st.to}}, value(st));
    }
  };
  using St = StatusSnapshot::Stream;
  stream_family("sluice_stream_buffers_total", "counter", "Buffers written to the stream by its producer copies.",
                [](const St& st) { return st.totals.buffers; });
  stream_family("sluice_stream_bytes_total", "counter", "Payload bytes written to the stream.",
                [](const St& st) { return st.totals.bytes; });
  stream_family("sluice_stream_consumed_buffers_total", "counter", "Buffers read from the stream by its consumer copies (a run counted once read to the end).",
                [](const St& st) { return st.totals.consumed; });
  stream_family("sluice_stream_producer_blocked_seconds_total", "counter",
                "Seconds the producer copies spent blocked on the stream (waiting for a buffer or room), summed over them.",
                [](const St& st) { return seconds(st.totals.producer_blocked_ns); });
  stream_family("sluice_stream_consumer_blocked_seconds_total", "counter",
                "Seconds the consumer copies spent blocked waiting for data, summed over them.",
                [](const St& st) { return seconds(st.totals.consumer_blocked_ns); });
  stream_family("sluice_stream_queue_depth", "gauge", "Buffers waiting for the consumer copies now: queued, or in the run a copy took off its queue and has not read to the end (up to 31 of which it may have read already).",
                [](const St& st) { return st.totals.queued; });
  stream_family("sluice_stream_queue_capacity", "gauge", "Buffers waiting for the consumer copies at most (depth per copy, plus the run it may take).",
                [](const St& st) { return st.totals.capacity; });
  stream_family("sluice_stream_producer_copies", "gauge", "Copies of the producing filter.",
                [](const St& st) { return st.totals.producer_copies; });
  stream_family("sluice_stream_consumer_copies", "gauge", "Copies of the consuming filter.",
                [](const St& st) { return st.totals.consumer_copies; });

  // Per copy. Labels: filter, copy, host (and stage for the state).
  m.family("sluice_copy_state", "gauge", "1 for the stage each copy is in now (create, init, process, end of work, finalize, idle; under sluice serve also not deployed, between a deployment that broke and the next).");
  for (const CopyActivity& c : s.copies) {
    m.sample("sluice_copy_state", {{"filter", c.filter}, {"copy", std::to_string(c.copy)}, {"host", c.host}, {"stage", c.stage}},
             std::uint64_t{1});
  }
  m.family("sluice_copy_unit", "gauge", "The unit of work each copy runs, or ran last.");
  for (const CopyActivity& c : s.copies) {
    m.sample("sluice_copy_unit", {{"filter", c.filter}, {"copy", std::to_string(c.copy)}, {"host", c.host}}, c.unit);
  }
  m.family("sluice_copy_waiting_seconds", "gauge", "How long each copy has waited on a stream now (0 when not waiting).");
  for (const CopyActivity& c : s.copies) {
    m.sample("sluice_copy_waiting_seconds", {{"filter", c.filter}, {"copy", std::to_string(c.copy)}, {"host", c.host}},
             c.waiting_seconds);
  }

  // Per host. Label: host ("local" when embedded).
  auto host_family = [&](const char* name, const char* type, const char* help, auto value) {
    m.family(name, type, help);
    for (const StatusSnapshot::Host& h : s.hosts) m.sample(name, {{"host", h.name}}, value(h));
  };
  using H = StatusSnapshot::Host;
  host_family("sluice_host_copies", "gauge", "Copies placed on the host.", [](const H& h) { return h.copies; });
  host_family("sluice_host_buffers_written_total", "counter", "Buffers the host's copies wrote, over every stream.",
              [](const H& h) { return h.traffic.buffers_written; });
  host_family("sluice_host_bytes_written_total", "counter", "Bytes the host's copies wrote, over every stream.",
              [](const H& h) { return h.traffic.bytes_written; });
  host_family("sluice_host_buffers_read_total", "counter", "Buffers the host's copies read, over every stream.",
              [](const H& h) { return h.traffic.buffers_read; });
  host_family("sluice_host_producer_blocked_seconds_total", "counter", "Seconds the host's copies spent blocked writing.",
              [](const H& h) { return seconds(h.traffic.producer_blocked_ns); });
  host_family("sluice_host_consumer_blocked_seconds_total", "counter", "Seconds the host's copies spent blocked reading.",
              [](const H& h) { return seconds(h.traffic.consumer_blocked_ns); });
  host_family("sluice_host_report_age_seconds", "gauge", "Seconds since the host last reported (-1: not yet; 0 embedded).",
              [](const H& h) { return h.traffic.report_age_seconds; });
  return m.str();
}

}  // namespace sluice::console
