// RunStatus: what the console knows about a run, in one place. The topology and where its
// copies run, every stream's counters and rates, what every copy is doing, each host's
// traffic, the units of work, the failure. The run loop feeds it (embedded: from the
// Engine; across hosts: from HostStats); everything that shows a run renders a snapshot of
// it: the progress line, the summary table and the --metrics file (report.h), and the --ui
// server's page, /api/status and /metrics (ui_server.h). Rates are computed here, by
// rate_between() alone, so no two of those can disagree.
//
// Thread-safe: one mutex guards everything; the run loop writes, the UI server's thread
// and the progress line read snapshots.
#ifndef SLUICE_CONSOLE_RUN_STATUS_H_
#define SLUICE_CONSOLE_RUN_STATUS_H_

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "console/host_stats.h"
#include "console/report.h"
#include "runtime/engine.h"
#include "runtime/failure.h"
#include "runtime/placement.h"
#include "topology/topology.h"

namespace sluice::console {

// A stream's pace over a stretch of time.
struct StreamRate {
  double buffers_per_second = 0;
  double bytes_per_second = 0;
  double producer_blocked = 0;  // share of the producer copies' time spent blocked, 0..1
  double consumer_blocked = 0;  // the same for the consumer copies
};

// The one place rates are computed: from `before` to `after`, `seconds` apart. Blocked
// shares divide by the copies (after's) and are capped at 1.
StreamRate rate_between(const StreamStats& before, const StreamStats& after, double seconds);

// How long the finished units of work took, every one of them (sluice serve keeps listing only
// the latest 200), in buckets from 1 ms to 1000 s: sluice_unit_duration_seconds.
struct UnitDurations {
  static const std::vector<double>& bounds();  // upper bounds, seconds, ascending
  std::vector<std::uint64_t> counts = std::vector<std::uint64_t>(bounds().size());  // per bucket
  std::uint64_t over = 0;  // above the last bound
  double sum = 0;
  void add(double seconds);
};

// A run at one moment: everything a view needs, copied out.
struct StatusSnapshot {
  struct Filter {
    std::string name;
    std::string lang;        // "cpp", "java"; "program" for the client (to: client)
    std::string class_name;
    int copies = 1;
    int column = 0;          // topological depth: 0 for sources, 1 + the deepest producer else
  };
  struct Stream {
    StreamStats totals;      // label "a.out -> b.in", counters so far, queue depth now
    std::string from;        // "a.out"
    std::string to;          // "b.in"
    std::string policy;
    std::uint64_t buffer_size = 0;
    std::uint64_t depth = 0;
    StreamRate rate;         // over the last ~second; over the whole run once it ended
    StreamRate average;      // over the whole run so far
  };
  struct Host {
    std::string name;        // "local" when embedded
    std::string address;     // "" when embedded
    int copies = 0;          // copies placed there
    HostTraffic traffic;
  };

  std::string topology_name;
  std::string topology_file;
  std::string status;        // "starting", "running", then "ok" or "failed"
  bool ended = false;
  int exit_code = 0;         // meaningful once ended
  double wall_seconds = 0;   // since the run started (the whole run once it ended)
  double rate_seconds = 0;   // the stretch `rate` covers
  std::vector<Filter> filters;
  std::vector<Stream> streams;
  std::vector<CopyActivity> copies;  // every copy, in topology order, with its host
  std::vector<Host> hosts;
  std::vector<UnitRecord> units;     // every unit of work, in order (sluice serve: the latest)
  std::uint64_t earlier_units = 0;   // sluice serve: units no longer listed in `units`
  std::uint64_t earlier_finished = 0;  // how many of those finished
  std::uint64_t earlier_failed = 0;    // ... and failed
  UnitDurations durations;           // every finished unit's, listed or not
  std::optional<std::uint64_t> current_unit;
  std::optional<std::string> stall;  // the stall report while no buffer moves (RunStatus::stalled)
  std::optional<Failure> failure;
  // sluice serve: deployments that broke between units, and the latest one's cause.
  std::uint64_t deployments_lost = 0;
  std::optional<Failure> deployment_lost;
  std::vector<std::string> stuck;
  // Hosts whose final counts never came (RunReport::partial_counts): the counts are lower bounds.
  std::vector<std::string> partial_counts;
};

class RunStatus {
 public:
  using Clock = std::chrono::steady_clock;

  // `topology` must outlive the RunStatus. `placements`: host name -> its copies, for a
  // run across hosts; empty when embedded (every copy on host "local"). The run starts now.
  RunStatus(const topo::Topology& topology, const std::map<std::string, Placement>& placements = {});
  RunStatus(const RunStatus&) = delete;
  RunStatus& operator=(const RunStatus&) = delete;

  // Every copy exists; units of work begin.
  void started();
  void unit_started(std::uint64_t index);
  void unit_ended(const UnitRecord& unit);
  // sluice serve: the run's units are not known in advance (the topology's work: list is
  // not what runs); they come with unit_queued, numbered from 0.
  void serving();
  // sluice serve: unit `index` (the next one) was submitted. The oldest ended units are
  // forgotten beyond kUnitsListed (only counted).
  void unit_queued(std::uint64_t index, const std::string& work);
  static constexpr std::size_t kUnitsListed = 200;
  // A unit's payload is kept (and shown) up to this many bytes, then "... (N bytes)": the
  // view shows names and numbers, and a payload may be megabytes.
  static constexpr std::size_t kPayloadShown = 200;
  // sluice serve: a unit failed, the application goes on: shown as the latest failure.
  void unit_failed(const Failure& failure);
  // No buffer has moved for a while (console/stall_watch.h): `report` says what each copy
  // waits on; shown until buffers move again (moving()) or the unit ends.
  void stalled(const std::string& report);
  void moving();
  // sluice serve: the deployment broke between units (`why`); the next unit deploys again.
  // Counted, and the latest shown apart from the units' failures.
  void deployment_lost(const Failure& why);
  // The latest counters: `streams` one per topology stream, in order; `copies` what each
  // copy does (those not listed keep what they said last); `hosts` each host's traffic
  // (ignored when embedded: the streams are all of it).
  // `deployed` false: no deployment runs (sluice serve between a broken one and the next):
  // every copy shows "not deployed", every host has no recent report.
  void sample(std::vector<StreamStats> streams, const std::vector<CopyActivity>& copies,
              const std::vector<HostTraffic>& hosts = {}, bool deployed = true);
  // The run is over: its final counters, units, failure and exit status.
  void finish(const RunReport& report);

  StatusSnapshot snapshot() const;
  // finish() was called (what snapshot().ended says, without the copy).
  bool ended() const;

 private:
  void record_end(const UnitRecord& unit);  // REQUIRES: mu_ held

  struct Sample {
    Clock::time_point at;
    std::vector<StreamStats> streams;
  };

  const topo::Topology& topology_;
  const bool embedded_;
  const Clock::time_point start_ = Clock::now();
  StatusSnapshot base_;  // topology, placement: what does not change

  mutable std::mutex mu_;  // guards everything below
  bool started_ = false;
  bool ended_ = false;
  double final_wall_ = 0;
  int exit_code_ = 0;
  std::deque<Sample> history_;  // the last ~second of samples, oldest first (never empty)
  std::vector<CopyActivity> copies_;
  std::map<std::string, HostTraffic> traffic_;  // host -> its latest
  std::deque<UnitRecord> units_;     // units first_unit_, first_unit_ + 1, ...
  std::deque<bool> unit_ended_;
  std::uint64_t first_unit_ = 0;
  bool open_ended_ = false;  // units come as they are submitted (sluice serve)
  std::uint64_t earlier_finished_ = 0;
  std::uint64_t earlier_failed_ = 0;
  UnitDurations durations_;
  std::optional<std::uint64_t> current_unit_;
  std::optional<std::string> stall_;
  Clock::time_point unit_start_;
  std::optional<Failure> failure_;
  std::uint64_t deployments_lost_ = 0;
  std::optional<Failure> deployment_lost_;  // the latest
  std::vector<std::string> stuck_;
  std::vector<std::string> partial_counts_;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_RUN_STATUS_H_
