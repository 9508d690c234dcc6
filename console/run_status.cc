#include "console/run_status.h"

#include <algorithm>

#include "text/shortened.h"

namespace sluice::console {

namespace {

// Live rates cover at least this much time once the run is that old.
constexpr double kRateWindowSeconds = 1.0;
// Across hosts the counters move in steps, once per host report (every 500 ms): over one
// second a steady stream read as 50-150 % of its rate; over three, within about 20 %.
constexpr double kRemoteRateWindowSeconds = 3.0;

double share(std::uint64_t blocked_ns, int copies, double seconds) {
  if (copies <= 0 || seconds <= 0) return 0;
  return std::min(1.0, static_cast<double>(blocked_ns) / 1e9 / (seconds * copies));
}

std::uint64_t delta(std::uint64_t before, std::uint64_t after) { return after > before ? after - before : 0; }

std::vector<StreamStats> zero_streams(const topo::Topology& t) {
  std::vector<StreamStats> out;
  for (const topo::StreamSpec& s : t.streams) {
    StreamStats z;
    z.label = s.label();
    z.producer_copies = t.copies_of(s.from.filter);
    z.consumer_copies = t.copies_of(s.to.filter);
    out.push_back(z);
  }
  return out;
}

// Longest path from a source, in streams; a cycle (which the runtime does not forbid)
// stops growing after as many rounds as there are filters.
// The client (`to: client`) is a box too, after its producer.
std::map<std::string, int> columns(const topo::Topology& t) {
  std::map<std::string, int> column;
  for (const topo::FilterSpec& f : t.filters) column[f.name] = 0;
  if (t.client_stream() != nullptr) column[std::string(topo::kClient)] = 0;
  const int boxes = static_cast<int>(column.size());
  for (int round = 0; round < boxes; ++round) {
    bool changed = false;
    for (const topo::StreamSpec& s : t.streams) {
      const int want = column[s.from.filter] + 1;
      if (column[s.to.filter] < want && want < boxes) {
        column[s.to.filter] = want;
        changed = true;
      }
    }
    if (!changed) break;
  }
  return column;
}

}  // namespace

StreamRate rate_between(const StreamStats& before, const StreamStats& after, double seconds) {
  StreamRate r;
  if (seconds <= 0) return r;
  r.buffers_per_second = static_cast<double>(delta(before.buffers, after.buffers)) / seconds;
  r.bytes_per_second = static_cast<double>(delta(before.bytes, after.bytes)) / seconds;
  r.producer_blocked = share(delta(before.producer_blocked_ns, after.producer_blocked_ns), after.producer_copies, seconds);
  r.consumer_blocked = share(delta(before.consumer_blocked_ns, after.consumer_blocked_ns), after.consumer_copies, seconds);
  return r;
}

RunStatus::RunStatus(const topo::Topology& topology, const std::map<std::string, Placement>& placements)
    : topology_(topology), embedded_(placements.empty()) {
  base_.topology_name = topology.name;
  base_.topology_file = topology.file;
  const std::map<std::string, int> column = columns(topology);
  for (const topo::FilterSpec& f : topology.filters) {
    base_.filters.push_back({f.name, topo::to_string(f.lang), f.class_name, f.copies, column.at(f.name)});
  }
  if (topology.client_stream() != nullptr) {
    // `to: client`: the page draws the submitting program as a box of its own.
    const auto it = column.find(std::string(topo::kClient));
    base_.filters.push_back({std::string(topo::kClient), "program", "the submitting program", 1,
                             it == column.end() ? 0 : it->second});
  }
  const std::vector<StreamStats> zero = zero_streams(topology);
  for (std::size_t i = 0; i < topology.streams.size(); ++i) {
    const topo::StreamSpec& s = topology.streams[i];
    StatusSnapshot::Stream out;
    out.totals = zero[i];
    out.from = s.from.str();
    out.to = s.to.str();
    out.policy = topo::to_string(s.policy);
    out.buffer_size = s.buffer_size;
    out.depth = s.depth;
    base_.streams.push_back(out);
  }
  // Where each copy runs, and the hosts in hosts: order.
  std::map<std::string, int> copies_on;
  for (const topo::FilterSpec& f : topology.filters) {
    for (int c = 0; c < f.copies; ++c) {
      std::string host = "local";
      if (!embedded_) {
        host = "";
        for (const auto& [name, placement] : placements) {
          if (placement.runs_here(f.name, c)) host = name;
        }
      }
      ++copies_on[host];
      CopyActivity a;
      a.filter = f.name;
      a.copy = c;
      a.host = host;
      a.stage = "create";
      copies_.push_back(a);
    }
  }
  if (embedded_) {
    base_.hosts.push_back({"local", "", copies_on["local"], HostTraffic{"local"}});
  } else {
    for (const topo::HostSpec& h : topology.hosts) {
      if (!placements.count(h.name)) continue;
      base_.hosts.push_back({h.name, h.address, copies_on[h.name], HostTraffic{h.name}});
    }
  }
  for (std::size_t i = 0; i < topology.work.size(); ++i) {
    units_.push_back(UnitRecord{i, text::payload_shown(topology.work[i], kPayloadShown), 0, false, ""});
  }
  unit_ended_.assign(units_.size(), false);
  history_.push_back(Sample{start_, zero});
}

void RunStatus::started() {
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;
}

void RunStatus::unit_started(std::uint64_t index) {
  std::lock_guard<std::mutex> lock(mu_);
  started_ = true;
  current_unit_ = index;
  unit_start_ = Clock::now();
}

void RunStatus::stalled(const std::string& report) {
  std::lock_guard<std::mutex> lock(mu_);
  stall_ = report;
}

void RunStatus::moving() {
  std::lock_guard<std::mutex> lock(mu_);
  stall_.reset();
}

void RunStatus::unit_ended(const UnitRecord& unit) {
  std::lock_guard<std::mutex> lock(mu_);
  record_end(unit);
  stall_.reset();
  if (current_unit_ == unit.index) current_unit_.reset();
  // Every copy is done with it, whatever the last sample said: a short unit across hosts
  // ends before a host's next report. A unit that finished ran on every copy, also when the
  // view last saw the application not deployed (it was deployed again for this unit).
  for (CopyActivity& c : copies_) {
    if (c.stage == "not deployed" && !unit.finished) continue;
    settle(c, "idle");
    c.unit = unit.index;
  }
}

void RunStatus::serving() {
  std::lock_guard<std::mutex> lock(mu_);
  open_ended_ = true;
  units_.clear();
  unit_ended_.clear();
  first_unit_ = 0;
}

void RunStatus::unit_queued(std::uint64_t index, const std::string& work) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!open_ended_ || index != first_unit_ + units_.size()) return;  // not serving, or not the next one
  units_.push_back(UnitRecord{index, text::payload_shown(work, kPayloadShown), 0, false, ""});
  unit_ended_.push_back(false);
  while (units_.size() > kUnitsListed && unit_ended_.front()) {
    earlier_finished_ += units_.front().finished ? 1 : 0;
    earlier_failed_ += !units_.front().finished && units_.front().state != "not run" ? 1 : 0;
    units_.pop_front();
    unit_ended_.pop_front();
    ++first_unit_;
  }
}

void RunStatus::unit_failed(const Failure& failure) {
  std::lock_guard<std::mutex> lock(mu_);
  failure_ = failure;
}

void RunStatus::deployment_lost(const Failure& why) {
  std::lock_guard<std::mutex> lock(mu_);
  ++deployments_lost_;
  deployment_lost_ = why;
}

const std::vector<double>& UnitDurations::bounds() {
  static const std::vector<double> kBounds = {0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1, 3, 10, 30, 100, 300, 1000};
  return kBounds;
}

void UnitDurations::add(double seconds) {
  sum += seconds;
  const std::vector<double>& b = bounds();
  const auto bucket = std::lower_bound(b.begin(), b.end(), seconds);  // the first bound >= seconds
  if (bucket == b.end()) {
    ++over;
  } else {
    ++counts[static_cast<std::size_t>(bucket - b.begin())];
  }
}

void RunStatus::record_end(const UnitRecord& unit) {
  if (unit.index < first_unit_ || unit.index - first_unit_ >= units_.size()) return;
  // Counted once: a run's final report records the units unit_ended already did.
  if (!unit_ended_[unit.index - first_unit_] && unit.finished) durations_.add(unit.seconds);
  UnitRecord& kept = units_[unit.index - first_unit_];
  kept = unit;
  kept.work = text::payload_shown(unit.work, kPayloadShown);
  unit_ended_[unit.index - first_unit_] = true;
}

void RunStatus::sample(std::vector<StreamStats> streams, const std::vector<CopyActivity>& copies,
                       const std::vector<HostTraffic>& hosts, bool deployed) {
  const Clock::time_point now = Clock::now();
  std::lock_guard<std::mutex> lock(mu_);
  if (ended_ || streams.size() != base_.streams.size()) return;
  history_.push_back(Sample{now, std::move(streams)});
  // Keep one sample at least the window old, and nothing older than that one.
  const auto window = std::chrono::duration<double>(embedded_ ? kRateWindowSeconds : kRemoteRateWindowSeconds);
  while (history_.size() > 2 && now - history_[1].at >= window) history_.pop_front();
  for (const CopyActivity& a : copies) {
    for (CopyActivity& mine : copies_) {
      if (mine.filter == a.filter && mine.copy == a.copy) {
        mine = a;
        break;
      }
    }
  }
  for (const HostTraffic& h : hosts) traffic_[h.host] = h;
  if (!deployed) {
    for (CopyActivity& mine : copies_) settle(mine, "not deployed");
    for (auto& [name, t] : traffic_) t.report_age_seconds = -1;
  } else {
    // Deployed again: a copy no report has named yet (across hosts they come while a unit
    // runs, every 500 ms) waits for its next unit; it is no longer "not deployed".
    for (CopyActivity& mine : copies_) {
      if (mine.stage == "not deployed") settle(mine, "idle");
    }
  }
}

void RunStatus::finish(const RunReport& report) {
  std::lock_guard<std::mutex> lock(mu_);
  if (report.streams.size() == base_.streams.size()) history_.push_back(Sample{Clock::now(), report.streams});
  for (const UnitRecord& u : report.units) record_end(u);
  if (report.failure || !open_ended_) failure_ = report.failure;
  stuck_ = report.stuck;
  partial_counts_ = report.partial_counts;
  exit_code_ = report.exit_code;
  final_wall_ = report.wall_seconds;
  current_unit_.reset();
  // Across hosts the deployment is gone with the run: the hosts' counters are final, and no
  // report is recent (-1, as between deployments), however long --ui-linger shows them.
  for (auto& [name, t] : traffic_) t.report_age_seconds = -1;
  // A failed run's copies went with it, wherever the last sample saw them (in process, on a
  // host that was lost): none runs any more.
  if (report.failure && !open_ended_) {
    for (CopyActivity& c : copies_) settle(c, "not deployed");
  }
  ended_ = true;
}

bool RunStatus::ended() const {
  std::lock_guard<std::mutex> lock(mu_);
  return ended_;
}

StatusSnapshot RunStatus::snapshot() const {
  StatusSnapshot s = base_;
  std::lock_guard<std::mutex> lock(mu_);
  const Clock::time_point now = Clock::now();
  s.ended = ended_;
  s.exit_code = exit_code_;
  // sluice serve goes on after a failed unit: how it ended is its exit status.
  const bool failed = open_ended_ ? exit_code_ != 0 : failure_.has_value();
  s.status = ended_ ? (failed ? "failed" : "ok") : started_ ? "running" : "starting";
  s.wall_seconds = ended_ ? final_wall_ : std::chrono::duration<double>(now - start_).count();
  const Sample& newest = history_.back();
  const Sample& oldest = history_.front();
  const double since_start = ended_ ? final_wall_ : std::chrono::duration<double>(newest.at - start_).count();
  s.rate_seconds = ended_ ? final_wall_ : std::chrono::duration<double>(newest.at - oldest.at).count();
  const std::vector<StreamStats> zero = zero_streams(topology_);
  for (std::size_t i = 0; i < s.streams.size(); ++i) {
    StatusSnapshot::Stream& out = s.streams[i];
    out.totals = newest.streams[i];
    out.average = rate_between(zero[i], out.totals, since_start);
    out.rate = ended_ ? out.average : rate_between(oldest.streams[i], out.totals, s.rate_seconds);
  }
  s.copies = copies_;
  for (StatusSnapshot::Host& h : s.hosts) {
    if (embedded_) {
      h.traffic = traffic_of(h.name, newest.streams);
      h.traffic.report_age_seconds = 0;
    } else if (auto it = traffic_.find(h.name); it != traffic_.end()) {
      h.traffic = it->second;
    }
  }
  s.units.assign(units_.begin(), units_.end());
  s.earlier_units = first_unit_;
  s.earlier_finished = earlier_finished_;
  s.earlier_failed = earlier_failed_;
  s.durations = durations_;
  for (std::size_t i = 0; i < s.units.size(); ++i) {
    UnitRecord& u = s.units[i];
    if (current_unit_ && *current_unit_ == u.index) {
      u.state = "running";
      u.seconds = std::chrono::duration<double>(now - unit_start_).count();
    } else if (unit_ended_[i]) {
      u.state = u.finished ? "finished" : u.state == "not run" ? "not run" : "failed";
    } else {
      u.state = "pending";
    }
  }
  s.current_unit = current_unit_;
  if (!ended_) s.stall = stall_;
  s.failure = failure_;
  s.deployments_lost = deployments_lost_;
  s.deployment_lost = deployment_lost_;
  s.stuck = stuck_;
  s.partial_counts = partial_counts_;
  return s;
}

}  // namespace sluice::console
