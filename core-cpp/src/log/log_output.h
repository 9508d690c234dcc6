// Where filter log lines (sluice::Logger) go: stderr, one write per line (log/backend.h). The console, when
// it draws a live progress line on a terminal, asks for every log line to clear that line
// first ("\r\033[K"), so log text never lands glued onto the progress text. An app daemon
// also hands every line to a sink, which forwards it to the console (daemons/log_forwarder.h).
//
// Thread safety: safe from any thread (atomics read on every log line).
#ifndef SLUICE_LOG_LOG_OUTPUT_H_
#define SLUICE_LOG_LOG_OUTPUT_H_

#include <string_view>

#include "sluice/logger.h"

namespace sluice::log_output {

// true: each log line starts with "\r\033[K" (carriage return, erase to end of line).
void set_clear_line_first(bool clear);
bool clear_line_first();

// Receives every log line that passed the level, after it was written to stderr, on the
// logging thread. `prefix` is the logger's ("count#1@b"), `message` the text as logged.
// Implementations must be thread-safe and must not block (a filter's thread waits on them).
class Sink {
 public:
  virtual ~Sink() = default;
  virtual void line(LogLevel level, std::string_view prefix, std::string_view message) = 0;
};

// Installs `sink` (not owned; nullptr: none). REQUIRES: `sink` outlives every thread that may
// still log through it (in an app daemon: the process).
void set_sink(Sink* sink);

// "debug", "info", "warn", "error".
const char* level_name(LogLevel level);

}  // namespace sluice::log_output

#endif  // SLUICE_LOG_LOG_OUTPUT_H_
