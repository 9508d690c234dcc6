// Filter log lines from other hosts (FilterLog, forwarded by each app daemon through its
// sluiced), as the console prints them on its stderr: the same shape as an embedded run's,
// "[count#1@b] info: message", so a line reads the same wherever its copy ran.
//
// Thread-compatible: plain functions.
#ifndef SLUICE_CONSOLE_FILTER_LOG_H_
#define SLUICE_CONSOLE_FILTER_LOG_H_

#include <optional>
#include <string>

#include "control/codec.h"

namespace sluice::console {

// The text to print for `log`, which came from host `host` (the console's name for it):
// one "[prefix] level: text" line per line (a prefix without "@host", from the runtime rather
// than a filter copy, gets "@host"), then, when lines were held back, a line saying how many
// and where they are. Control characters other than newline and tab become '?': a remote
// host does not get to move the cursor or recolour the console's terminal. Empty for nothing.
std::string format_filter_log(const std::string& host, const control::FilterLog& log);

// Writes format_filter_log(...) to stderr in one write, clearing the progress line first
// when it is drawn (log/log_output.h, clear_line_first); then what the filters wrote to
// stdout (log.output()) to this process's stdout, as written (it is the filters' own output,
// as an embedded run's is), as far as stdout takes it without waiting: the rest is held
// (up to 64 MiB) for write_filter_output.
void print_filter_log(const std::string& host, const control::FilterLog& log);

// Writes the filters' output still held: what stdout takes now, or with `wait` all of it
// (at the end of a run; also at exit). Thread-safe.
void write_filter_output(bool wait);

// What the run lost of the filters' output because stdout refused it (a full disk, an I/O
// error, a closed descriptor): the forwarded output write_filter_output could not write, and
// an embedded filter's writes through stdio (the console flushes stdout and asks it). Nullopt
// when nothing was lost, or when stdout is a pipe whose reader has gone (`sluice run | head`:
// the reader chose to stop). Call after write_filter_output(true). Thread-safe.
std::optional<std::string> filter_output_lost();

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_FILTER_LOG_H_
