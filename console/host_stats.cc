#include "console/host_stats.h"

#include <algorithm>
#include <sstream>

namespace sluice::console {

HostStats::HostStats(const topo::Topology& topology, std::size_t hosts)
    : topology_(topology), per_host_(hosts), activity_(hosts), in_flight_(hosts), reported_(hosts), idle_(hosts, false),
      final_(hosts, false) {
  for (const topo::StreamSpec& s : topology_.streams) labels_.push_back(s.label());
}

void HostStats::store(int host, const google::protobuf::RepeatedPtrField<control::StreamMetrics>& streams) {
  auto& mine = per_host_[static_cast<std::size_t>(host)];
  reported_[static_cast<std::size_t>(host)] = std::chrono::steady_clock::now();
  for (const auto& m : streams) {
    StreamStats& s = mine[m.label()];
    s.label = m.label();
    s.producer_copies = m.producer_copies();
    s.consumer_copies = m.consumer_copies();
    s.buffers = m.buffers();
    s.bytes = m.bytes();
    s.producer_blocked_ns = m.producer_blocked_ns();
    s.consumer_blocked_ns = m.consumer_blocked_ns();
    s.consumed = m.consumed();
    s.queued = m.queued();
    s.capacity = m.capacity();
  }
}

void HostStats::store_activity(int host, const std::string& name,
                               const google::protobuf::RepeatedPtrField<control::CopyActivity>& copies) {
  auto& mine = activity_[static_cast<std::size_t>(host)];
  mine.clear();
  for (const auto& c : copies) {
    mine.push_back(
        CopyActivity{c.filter(), c.copy(), name, c.stage(), c.waiting_for(), c.stream(), c.waiting_seconds(), c.unit()});
  }
}

void add_traffic(HostTraffic& into, const HostTraffic& more) {
  into.buffers_written += more.buffers_written;
  into.bytes_written += more.bytes_written;
  into.buffers_read += more.buffers_read;
  into.producer_blocked_ns += more.producer_blocked_ns;
  into.consumer_blocked_ns += more.consumer_blocked_ns;
}

void settle(CopyActivity& copy, const std::string& stage) {
  copy.stage = stage;
  copy.waiting_for.clear();
  copy.stream.clear();
  copy.waiting_seconds = 0;
}

void HostStats::mark_running(int host) {
  idle_[static_cast<std::size_t>(host)] = false;
  final_[static_cast<std::size_t>(host)] = false;
  auto& at = reported_[static_cast<std::size_t>(host)];
  if (at) at = std::chrono::steady_clock::now();
}

void HostStats::mark_idle(int host, std::uint64_t unit) {
  idle_[static_cast<std::size_t>(host)] = true;
  for (CopyActivity& c : activity_[static_cast<std::size_t>(host)]) {
    settle(c, "idle");
    c.unit = unit;
  }
}

void HostStats::store_in_flight(int host, const std::string& name, const std::string& in_flight) {
  in_flight_[static_cast<std::size_t>(host)] = {name, in_flight};
}

std::string HostStats::in_flight() const {
  std::string out;
  for (const auto& [name, text] : in_flight_) {
    if (text.empty()) continue;
    out += "\n  host " + name + ":";
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) out += "\n  " + line;  // under the host
  }
  return out;
}

std::vector<CopyActivity> HostStats::activity() const {
  std::vector<CopyActivity> out;
  for (const auto& host : activity_) out.insert(out.end(), host.begin(), host.end());
  return out;
}

std::vector<StreamStats> HostStats::of_host(int host) const {
  std::vector<StreamStats> out;
  for (const auto& [label, s] : per_host_[static_cast<std::size_t>(host)]) out.push_back(s);
  return out;
}

double HostStats::report_age_seconds(int host) const {
  const auto& at = reported_[static_cast<std::size_t>(host)];
  if (!at) return -1;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - *at).count();
}

HostTraffic traffic_of(const std::string& host, const std::vector<StreamStats>& streams) {
  HostTraffic h;
  h.host = host;
  for (const StreamStats& s : streams) {
    h.buffers_written += s.buffers;
    h.bytes_written += s.bytes;
    h.buffers_read += s.consumed;
    h.producer_blocked_ns += s.producer_blocked_ns;
    h.consumer_blocked_ns += s.consumer_blocked_ns;
  }
  return h;
}

std::vector<StreamStats> HostStats::merged() const {
  std::vector<StreamStats> out;
  for (std::size_t i = 0; i < topology_.streams.size(); ++i) {
    StreamStats s;
    s.label = labels_[i];
    s.producer_copies = topology_.find_filter(topology_.streams[i].from.filter)->copies;
    s.consumer_copies = topology_.copies_of(topology_.streams[i].to.filter);
    for (const auto& host : per_host_) {
      auto it = host.find(labels_[i]);
      if (it != host.end()) add_counters(s, it->second);
    }
    // Each host's report is its own moment (up to 500 ms apart): a consumer's host that
    // reported after its producers' counts reads its producers have not reported writing yet.
    // Read never leads written (each copy reads every buffer of a broadcast), so the sum
    // is held to that instead of going past it mid-run (an outside review saw consumed run
    // ~200 ahead of buffers in one sample of seven).
    const std::uint64_t readable =
        s.buffers * (topology_.streams[i].policy == topo::Policy::kBroadcast
                         ? static_cast<std::uint64_t>(std::max(s.consumer_copies, 1)) : 1);
    s.consumed = std::min(s.consumed, readable);
    out.push_back(s);
  }
  return out;
}

}  // namespace sluice::console
