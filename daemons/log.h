// Logging for the daemons (and `sluice serve`): one line per event on stderr,
// "2026-11-21T12:00:00.123Z sluiced[pid] [warn] message", written by the process's log
// backend (log/backend.h: spdlog, one write per line, the level of SLUICE_LOG). Levels: debug
// (with --verbose or SLUICE_LOG=debug), info, warn, error.
#ifndef SLUICE_DAEMONS_LOG_H_
#define SLUICE_DAEMONS_LOG_H_

#include <string.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "log/backend.h"
#include "sluice/logger.h"

namespace sluice::daemon {

using Level = sluice::LogLevel;

// The name before "[pid]" on every line ("sluiced", "sluice-appd(b)").
inline void set_name(std::string name) { logging::set_process_name(std::move(name)); }
inline std::string name() { return logging::process_name(); }
// The lowest level written, process-wide (filters' lines too). Default: SLUICE_LOG, or info.
inline void set_level(Level level) { sluice::Logger::set_level(level); }

inline void log(Level level, const std::string& message) { logging::process_line(level, message); }
inline void debug(const std::string& m) { log(Level::kDebug, m); }
inline void info(const std::string& m) { log(Level::kInfo, m); }
inline void warn(const std::string& m) { log(Level::kWarn, m); }
inline void error(const std::string& m) { log(Level::kError, m); }

// At most `per_second` lines per second after a burst of `burst` (default: as many): for
// events a stranger can cause at will (refused connections, failed accepts), so a flood
// cannot fill the disk. Lines held back are counted, and the next line that passes says how
// many: "... (37 similar lines not logged)". Not thread-safe: one thread (sluiced's).
class RateLimited {
 public:
  using Clock = std::chrono::steady_clock;
  explicit RateLimited(double per_second, double burst = 0)
      : per_second_(per_second), burst_(burst > 0 ? burst : per_second), tokens_(burst_) {}

  // Whether a line may be written at `now`; when it may, `*held_back` is the number of
  // lines dropped since the last one that passed.
  bool allow(Clock::time_point now, std::uint64_t* held_back) {
    if (last_ != Clock::time_point{}) {
      tokens_ += std::chrono::duration<double>(now - last_).count() * per_second_;
      if (tokens_ > burst_) tokens_ = burst_;
    }
    last_ = now;
    if (tokens_ < 1.0) {
      ++dropped_;
      return false;
    }
    tokens_ -= 1.0;
    *held_back = dropped_;
    dropped_ = 0;
    return true;
  }

  void log(Level level, const std::string& message) {
    std::uint64_t held_back = 0;
    if (!logging::enabled(level) || !allow(Clock::now(), &held_back)) return;
    sluice::daemon::log(level, held_back == 0 ? message
                                              : message + " (" + std::to_string(held_back) +
                                                    " similar lines not logged)");
  }
  std::uint64_t dropped() const { return dropped_; }

 private:
  const double per_second_;
  const double burst_;
  double tokens_;
  Clock::time_point last_{};
  std::uint64_t dropped_ = 0;
};

// "SIGTERM", or "signal 64" for one without a name.
inline std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

}  // namespace sluice::daemon

#endif  // SLUICE_DAEMONS_LOG_H_
