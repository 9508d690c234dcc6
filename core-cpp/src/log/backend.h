// The one log backend of every sluice process: spdlog (Debian's libspdlog), behind
// sluice::Logger (the filters' lines), daemons/log.h (the daemons' and `sluice serve`'s own
// lines) and the runtime's and data plane's lines. One process-wide level, one writer: each
// line is formatted by spdlog and written to stderr with one write(2), so lines from threads,
// and from processes sharing a log file (sluiced and its app daemons), never interleave.
// Three line shapes, kept as docs/operations.md quotes them:
//   filter_line   "[count#1@b] info: message"
//   process_line  "2026-11-21T12:57:12.397Z sluiced[27273] [warn] message"   (UTC, ms)
//   plain_line    "message" as given ("sluice data plane (b): ...")
// A process or plain line is always one line (and its indented continuations): a newline in
// the message is followed by four spaces, other control characters (but tab) are written as
// \xNN, so text a peer chose (a name it offered) cannot forge lines or send terminal
// escapes. A filter's own lines are written as the filter logged them.
// Each line starts with "\r\033[K" while the console draws a progress line (log_output.h), and
// with its syslog priority ("<4>" for a warning) when stderr is the systemd journal's stream
// (JOURNAL_STREAM names it), so that journald files it at its level.
//
// The level: the environment variable SLUICE_LOG (debug, info, warn, error; default info),
// read once; SLUICE_LOG_LEVEL, its older name, is still read when SLUICE_LOG is not set, with
// a warning. Logger::set_level changes it (the daemons' --verbose).
//
// A long-lived daemon (sluiced, sluice-appd, `sluice serve`) has its lines written by a thread
// of its own (write_in_background): a log reader that stops reading cannot stop the daemon.
//
// Thread safety: every function is safe from any thread. spdlog is a private dependency:
// no public header includes it.
#ifndef SLUICE_LOG_BACKEND_H_
#define SLUICE_LOG_BACKEND_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "sluice/logger.h"

namespace sluice::logging {

// Whether a line at `level` is written (the process-wide level, sluice::Logger::level()).
bool enabled(LogLevel level);
// "debug", "info", "warn", "error" into *level; false (and *level untouched) otherwise.
bool parse_level(std::string_view text, LogLevel* level);

void filter_line(LogLevel level, std::string_view prefix, std::string_view message);
void process_line(LogLevel level, std::string_view message);
void plain_line(LogLevel level, std::string_view text);

// While at least one MuteStderr lives, the lines above reach no stderr: a program that embeds
// an application and asked for quiet (ApplicationOptions::log_to_stderr = false). Process-wide,
// as the log is. Thread-safe.
class MuteStderr {
 public:
  MuteStderr();
  ~MuteStderr();
  MuteStderr(const MuteStderr&) = delete;
  MuteStderr& operator=(const MuteStderr&) = delete;
};
bool stderr_muted();

// The name process_line writes before "[pid]": "sluiced", "sluice-appd(b)". Default: "sluice".
void set_process_name(std::string name);
std::string process_name();

// From now on, lines go to stderr from a thread of their own (log/background_writer.h): up to
// `max_queued` bytes wait while stderr takes nothing (a paused `| less`, a stuck collector);
// lines beyond are dropped, and once stderr takes lines again a process line says how many
// (and that the process went on). Waiting lines are written at exit (1 s at most). For a
// daemon, early in main(), before any other thread. A child of fork() writes directly again.
// Idempotent.
void write_in_background(std::size_t max_queued = std::size_t{1} << 20);
// Waits until the lines logged so far are written, `timeout` at most (before _exit).
void flush_background(std::chrono::milliseconds timeout);
// Lines dropped because stderr did not take them (write_in_background), since the start.
std::uint64_t lines_dropped();

}  // namespace sluice::logging

#endif  // SLUICE_LOG_BACKEND_H_
