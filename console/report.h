// What the console prints about a run: the live progress line, the summary table and the
// --metrics JSON file.
#ifndef SLUICE_CONSOLE_REPORT_H_
#define SLUICE_CONSOLE_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "runtime/engine.h"
#include "runtime/failure.h"

namespace sluice::console {

struct UnitRecord {
  std::uint64_t index = 0;
  std::string work;
  double seconds = 0;
  bool finished = false;
  std::string state;  // in RunStatus snapshots: "pending", "running", "finished", "failed", and
                      // "not run" (a run that failed before it; the run's report says so too)
};

struct RunReport {
  std::string topology_name;
  std::string topology_file;
  std::vector<UnitRecord> units;
  std::vector<StreamStats> streams;
  double wall_seconds = 0;
  std::optional<Failure> failure;
  std::vector<std::string> stuck;
  // Across hosts, after a failure: the hosts whose final counts never came (their app daemon
  // or the host itself went first), as "b, last reported 0.4 s before the end": their share of
  // `streams` is what they said last, so the streams carried at least that.
  std::vector<std::string> partial_counts;
  int exit_code = 0;
};

// One line, at most `width` characters:
//   "unit 2/3 [first-pass]  last 3s: up.out -> count.in 1.20M buf/s 75.3 MB/s blk 93%/0% | ... +2 more"
// Rates and blocked shares are over `seconds`, from `previous` to `now` (the caller keeps a
// few seconds of samples: RecentSamples). Streams are ordered most held back first (the share
// of time their producers waited for room or a free buffer, then their consumers' share
// waiting for data), so the bottleneck is shown even when the others do not fit; the streams
// left out are counted ("+2 more").
std::string progress_line(const std::string& unit_label, const std::vector<StreamStats>& now,
                          const std::vector<StreamStats>& previous, double seconds,
                          std::size_t width);

// The progress line's memory: samples of the streams' counters over the last `window`
// seconds, so the line shows recent rates, not whole-run averages. Not thread-safe: one
// owner (the thread that draws the line).
class RecentSamples {
 public:
  explicit RecentSamples(double window_seconds = 3.0) : window_(window_seconds) {}
  // Adds the sample taken at `at` (seconds on any steady clock) and returns the line for it.
  std::string line(const std::string& unit_label, std::vector<StreamStats> now, double at,
                   std::size_t width);

 private:
  struct Sample {
    double at;
    std::vector<StreamStats> streams;
  };
  double window_;
  std::vector<Sample> samples_;  // oldest first, at most `window_` seconds old
};

// The table printed at the end of a run. Without `blocked` (sluice submit, which knows
// what each stream carried but not how long its copies waited), no blocked columns.
std::string summary_table(const RunReport& report, bool blocked = true);

// A failure as a unit's line ends: Failure::str() for a filter's ("filter 'count' copy 1
// on host local failed in process (unit of work 0): ..."), a host's as its message says it
// ("host b: the app daemon ... was killed by SIGKILL during the run; host b ran c#0"), else
// its stage and message ("cancelled: the application was aborted"); control characters but
// newline and tab escaped (text::printable).
std::string failure_text(const Failure& failure);

// The failure as --metrics and /api/status show it: {"filter", "copy", "host", "unit",
// "stage", "message", "crash"} (crash: Failure::crash, "" when no process ended).
nlohmann::json failure_json(const Failure& failure);

// `value` with `decimals` digits after the point: fixed(0.0123, 3) is "0.012".
std::string fixed(double value, int decimals);

// Writes the report as JSON to `path`. Throws sluice::Error when the file cannot be written.
void write_metrics_json(const RunReport& report, const std::string& path);
// Before a run: throws sluice::Error ("cannot write --metrics 'PATH': why; ...") when `path`
// could not be written at its end. Leaves no file behind that was not there.
void check_metrics_writable(const std::string& path);

// The end of a run: prints the summary table, the failure and the stuck copies ("these
// copies did not stop after the failure (`stuck_note`): ...") to stderr, and writes the
// metrics file when `metrics_path` is not empty (a failure to is printed, not thrown), then
// says what stdout refused of the filters' output (console/filter_log.h, filter_output_lost).
// Returns report.exit_code, or kExitRunFailed for a run that went well but whose metrics file
// or output could not be written.
int print_report(const RunReport& report, const std::string& metrics_path, const std::string& stuck_note);

// The width of the terminal on stderr, or 80 when it is not known.
std::size_t terminal_width();

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_REPORT_H_
