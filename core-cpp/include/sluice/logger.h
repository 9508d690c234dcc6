// Logger: a filter copy's log, prefixed with filter name, copy and host.
//
// Thread safety: safe from any thread; each call writes whole lines to stderr: one, or one per
// line of a message that has several, each with the prefix.
#ifndef SLUICE_LOGGER_H_
#define SLUICE_LOGGER_H_

#include <string>
#include <string_view>

namespace sluice {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3 };

class Logger {
 public:
  // prefix: written in brackets before every message, e.g. "count#1@a".
  explicit Logger(std::string prefix) : prefix_(std::move(prefix)) {}

  void log(LogLevel level, std::string_view message) const;
  void debug(std::string_view message) const { log(LogLevel::kDebug, message); }
  void info(std::string_view message) const { log(LogLevel::kInfo, message); }
  void warn(std::string_view message) const { log(LogLevel::kWarn, message); }
  void error(std::string_view message) const { log(LogLevel::kError, message); }

  // Messages below this level are dropped, process-wide. Default: kInfo, or the level
  // named by the SLUICE_LOG environment variable (debug, info, warn, error).
  static void set_level(LogLevel level);
  static LogLevel level();

 private:
  std::string prefix_;
};

}  // namespace sluice

#endif  // SLUICE_LOGGER_H_
