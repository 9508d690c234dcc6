#include "sluice/logger.h"

#include "runtime/log_output.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <string>

namespace sluice {

namespace {

LogLevel level_from_env() {
  const char* env = std::getenv("SLUICE_LOG");
  if (env == nullptr) return LogLevel::kInfo;
  if (std::strcmp(env, "debug") == 0) return LogLevel::kDebug;
  if (std::strcmp(env, "warn") == 0) return LogLevel::kWarn;
  if (std::strcmp(env, "error") == 0) return LogLevel::kError;
  return LogLevel::kInfo;
}

std::atomic<bool> clear_first{false};
std::atomic<log_output::Sink*> sink{nullptr};

std::atomic<LogLevel>& current_level() {
  static std::atomic<LogLevel> level{level_from_env()};
  return level;
}

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
  if (level < current_level().load(std::memory_order_relaxed)) return;
  std::string line = log_output::clear_line_first() ? "\r\033[K[" : "[";
  line += prefix_ + "] " + log_output::level_name(level) + ": ";
  line.append(message);
  line.push_back('\n');
  // One write per line: lines from different threads never interleave.
  (void)!::write(STDERR_FILENO, line.data(), line.size());
  if (log_output::Sink* s = sink.load(std::memory_order_acquire)) s->line(level, prefix_, message);
}

void Logger::set_level(LogLevel level) { current_level().store(level); }
LogLevel Logger::level() { return current_level().load(); }

void log_output::set_clear_line_first(bool clear) { clear_first.store(clear); }
bool log_output::clear_line_first() { return clear_first.load(std::memory_order_relaxed); }
void log_output::set_sink(Sink* s) { sink.store(s, std::memory_order_release); }

}  // namespace sluice
