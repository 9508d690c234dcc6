// sluice::Logger (sluice/logger.h): a filter copy's lines, through the process's log backend
// (log/backend.h), then to the forwarding sink when one is installed (log_output.h).
#include "sluice/logger.h"

#include <atomic>

#include "log/backend.h"
#include "log/log_output.h"
#include "text/shortened.h"

namespace sluice {

namespace {

std::atomic<bool> clear_first{false};
std::atomic<log_output::Sink*> sink{nullptr};

// The most of one line a filter's log keeps (its sluiced log's, or the console's stderr
// embedded); forwarding to the console cuts to 4 KiB (daemons/log_forwarder.h).
constexpr std::size_t kMaxLine = std::size_t{64} << 10;

}  // namespace

const char* log_output::level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
  }
  return "?";
}

void Logger::log(LogLevel level, std::string_view message) const {
  if (!logging::enabled(level)) return;
  // A message of several lines is a prefixed line each: every line of a filter's output can be
  // told by its [name#copy@host], by grep and by the console that forwards it.
  for (;;) {
    const std::size_t end = message.find('\n');
    std::string_view line = message.substr(0, end);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    // A filter's line may quote a payload a stranger chose: its control characters (a CR
    // that writes over the prefix, ESC, BEL), C1 controls, bidirectional overrides and bytes
    // outside UTF-8 are written as \xNN, and a line past 64 KiB is cut, saying how long it
    // was, as a failure's message is (an outside review wrote ESC [2J and a 10 MB line into
    // serve's and sluiced's logs through ctx.log()).
    const std::string shown = text::shortened(line, kMaxLine);
    logging::filter_line(level, prefix_, shown);
    if (log_output::Sink* s = sink.load(std::memory_order_acquire)) s->line(level, prefix_, shown);
    if (end == std::string_view::npos || end + 1 == message.size()) return;  // a last newline ends it
    message.remove_prefix(end + 1);
  }
}

void log_output::set_clear_line_first(bool clear) { clear_first.store(clear); }
bool log_output::clear_line_first() { return clear_first.load(std::memory_order_relaxed); }
void log_output::set_sink(Sink* s) { sink.store(s, std::memory_order_release); }

}  // namespace sluice
