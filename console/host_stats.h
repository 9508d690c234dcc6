// HostStats: the stream metrics of a run across hosts. Each host reports its own copies'
// share (progress, unit_done, and failure: its counts when it failed); the console keeps the
// latest from each, also once the host is gone, and sums them into one row per stream.
//
// Not thread-safe: the console's run loop only.
#ifndef SLUICE_CONSOLE_HOST_STATS_H_
#define SLUICE_CONSOLE_HOST_STATS_H_

#include <chrono>
#include <cstddef>
#include <optional>
#include <map>
#include <string>
#include <vector>

#include "control/codec.h"
#include "runtime/engine.h"
#include "topology/topology.h"

namespace sluice::console {

// One host's part of the traffic: what its copies wrote and read, over every stream.
struct HostTraffic {
  std::string host;
  std::uint64_t buffers_written = 0;
  std::uint64_t bytes_written = 0;
  std::uint64_t buffers_read = 0;
  std::uint64_t producer_blocked_ns = 0;
  std::uint64_t consumer_blocked_ns = 0;
  double report_age_seconds = -1;  // since its last report; -1: none yet (0 embedded)
};

// Host `host`'s traffic from its share of every stream (`streams`, one per stream).
HostTraffic traffic_of(const std::string& host, const std::vector<StreamStats>& streams);
// Adds `more`'s counters (not its report age) to `into`'s.
void add_traffic(HostTraffic& into, const HostTraffic& more);
// `copy` runs nothing now: in `stage` ("idle", "not deployed"), waiting on no stream.
void settle(CopyActivity& copy, const std::string& stage);

class HostStats {
 public:
  // `topology` must outlive the HostStats; `hosts` is the number of hosts.
  HostStats(const topo::Topology& topology, std::size_t hosts);

  // Host `host`'s latest metrics, replacing what it said before, stream by stream.
  void store(int host, const google::protobuf::RepeatedPtrField<control::StreamMetrics>& streams);

  // Host `name`'s latest word on what its copies are doing.
  void store_activity(int host, const std::string& name,
                      const google::protobuf::RepeatedPtrField<control::CopyActivity>& copies);

  // One row per stream, in the topology's order, summed over the hosts; the copy counts
  // are the topology's.
  std::vector<StreamStats> merged() const;
  // Host `host` ended unit `unit`: its copies are idle now, whatever its last progress said
  // (a short unit ends before its next report).
  void mark_idle(int host, std::uint64_t unit);
  // Host `host` was sent a unit: what it reported last is exact as of now, and it reports
  // again while the unit runs.
  void mark_running(int host);
  // Between its units (after unit_done, before the next start): its counters cannot change.
  bool idle(int host) const { return idle_[static_cast<std::size_t>(host)]; }
  // Host `host` reported its failure with its counts as of then: they are its last word.
  void mark_final(int host) { final_[static_cast<std::size_t>(host)] = true; }
  // Whether what host `host` said last is its final count: it ended its unit (idle) or
  // reported its failure with its counts. Not so for a host whose app daemon died.
  bool counts_final(int host) const {
    return idle_[static_cast<std::size_t>(host)] || final_[static_cast<std::size_t>(host)];
  }
  // Every host's copies, as last reported.
  std::vector<CopyActivity> activity() const;
  // Host `name`'s latest word on what its data plane holds ("" when it was moving).
  void store_in_flight(int host, const std::string& name, const std::string& in_flight);
  // "\n  host a:\n    to host 'b': ..." for every host that said what its data plane holds;
  // "" when none did.
  std::string in_flight() const;
  // What host `host`'s copies alone said (its share of each stream), and how long ago it
  // last reported (-1 when it has not yet).
  std::vector<StreamStats> of_host(int host) const;
  double report_age_seconds(int host) const;

 private:
  const topo::Topology& topology_;
  std::vector<std::string> labels_;                       // [stream]
  std::vector<std::map<std::string, StreamStats>> per_host_;  // [host]: label -> stats
  std::vector<std::vector<CopyActivity>> activity_;           // [host]
  std::vector<std::pair<std::string, std::string>> in_flight_;  // [host]: name, its report
  std::vector<std::optional<std::chrono::steady_clock::time_point>> reported_;  // [host]
  std::vector<bool> idle_;                                                      // [host]
  std::vector<bool> final_;  // [host]: mark_final since its last mark_running
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_HOST_STATS_H_
