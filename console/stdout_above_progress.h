// StdoutAboveProgress: in an embedded run that draws a progress line on a terminal which is
// also its stdout, what the filters print would land glued to that line. So fd 1 points at a
// pipe, and a thread of its own copies what comes to the terminal, clearing the progress line
// first ("\r\033[K"); the next tick draws it again below. The same as a run across hosts,
// whose filters' stdout reaches the console through their app daemons (console/filter_log.h).
//
// Bytes are copied as they come, in order; the terminal's own pace holds the filters back
// (the pipe fills) as it did before. While the last bytes copied do not end a line (a prompt,
// a "\r"-drawn counter of the filter's own), the progress line is not drawn over them.
// A crash drains the pipe before its report (crash::Output::stdout_pipe), so a filter's last
// lines are not lost with the process.
//
// Thread safety: terminal() is the lock the progress line draws under; the rest is called
// from the run's thread.
#ifndef SLUICE_CONSOLE_STDOUT_ABOVE_PROGRESS_H_
#define SLUICE_CONSOLE_STDOUT_ABOVE_PROGRESS_H_

#include <atomic>
#include <mutex>
#include <thread>

#include "runtime/crash_report.h"

namespace sluice::console {

class StdoutAboveProgress {
 public:
  // When `enabled`, points fd 1 at the pipe and starts the copying thread (signals stay as the
  // calling thread blocks them), and sets the crash output to `crash_output` with the pipe
  // drained first; finish() sets `crash_output` itself back. On any failure to do so, leaves
  // stdout as it was (the output then mixes with the line, as it would have). Otherwise
  // does nothing.
  StdoutAboveProgress(bool enabled, const crash::Output& crash_output);
  // finish().
  ~StdoutAboveProgress();
  StdoutAboveProgress(const StdoutAboveProgress&) = delete;
  StdoutAboveProgress& operator=(const StdoutAboveProgress&) = delete;

  // Points fd 1 at the terminal again and copies what the pipe still holds: every line the
  // filters wrote before. Idempotent. Call before the summary, so that it comes last.
  void finish();

  bool active() const { return terminal_fd_ >= 0; }
  // Taken around every write to the terminal: the progress line draws under it too.
  std::mutex& terminal() { return terminal_mu_; }
  // True while the last bytes copied did not end a line. REQUIRES: terminal() held.
  bool mid_line() const { return mid_line_; }

 private:
  void copy_loop();
  // Copies what the pipe holds now; false once no writer is left. REQUIRES: nothing held.
  bool copy_available();

  crash::Output crash_output_;
  int read_fd_ = -1;
  int terminal_fd_ = -1;  // the original fd 1, dup'ed; -1 while inactive
  std::mutex terminal_mu_;
  bool mid_line_ = false;  // guarded by terminal_mu_
  std::atomic<bool> stop_{false};
  std::thread copier_;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_STDOUT_ABOVE_PROGRESS_H_
