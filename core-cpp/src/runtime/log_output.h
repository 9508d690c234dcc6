// Where filter log lines (sluice::Logger) go: stderr, one write per line. The console, when
// it draws a live progress line on a terminal, asks for every log line to clear that line
// first ("\r\033[K"), so log text never lands glued onto the progress text.
//
// Thread safety: safe from any thread (an atomic flag read on every log line).
#ifndef SLUICE_RUNTIME_LOG_OUTPUT_H_
#define SLUICE_RUNTIME_LOG_OUTPUT_H_

namespace sluice::log_output {

// true: each log line starts with "\r\033[K" (carriage return, erase to end of line).
void set_clear_line_first(bool clear);
bool clear_line_first();

}  // namespace sluice::log_output

#endif  // SLUICE_RUNTIME_LOG_OUTPUT_H_
