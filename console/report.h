// What the console prints about a run: the live progress line, the summary table and the
// --metrics JSON file.
#ifndef SLUICE_CONSOLE_REPORT_H_
#define SLUICE_CONSOLE_REPORT_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine.h"
#include "runtime/failure.h"

namespace sluice::console {

struct UnitRecord {
  std::uint64_t index = 0;
  std::string work;
  double seconds = 0;
  bool finished = false;
  std::string state;  // in RunStatus snapshots: "pending", "running", "finished", "failed"
};

struct RunReport {
  std::string topology_name;
  std::string topology_file;
  std::vector<UnitRecord> units;
  std::vector<StreamStats> streams;
  double wall_seconds = 0;
  std::optional<Failure> failure;
  std::vector<std::string> stuck;
  int exit_code = 0;
};

// One line: "unit 2/3 [first-pass]  read.out -> up.in 1.20M buf/s 75.3 MB/s blk 3%/0% | ..."
// `previous` and `seconds` (since previous) give the rates. At most `width` characters.
std::string progress_line(const std::string& unit_label, const std::vector<StreamStats>& now,
                          const std::vector<StreamStats>& previous, double seconds,
                          std::size_t width);

// The table printed at the end of a run.
std::string summary_table(const RunReport& report);

// Writes the report as JSON to `path`. Throws sluice::Error when the file cannot be written.
void write_metrics_json(const RunReport& report, const std::string& path);

// The end of a run: prints the summary table, the failure and the stuck copies ("these
// copies did not stop after the failure (`stuck_note`): ...") to stderr, and writes the
// metrics file when `metrics_path` is not empty (a failure to is printed, not thrown).
// Returns report.exit_code.
int print_report(const RunReport& report, const std::string& metrics_path, const std::string& stuck_note);

// The width of the terminal on stderr, or 120 when it is not one.
std::size_t terminal_width();

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_REPORT_H_
