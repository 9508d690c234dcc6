// Logging for the daemons: one line per event on stderr, "2026-11-21T12:00:00.123Z sluiced
// [warn] message". Levels: debug (only with --verbose), info, warn, error.
#ifndef SLUICE_DAEMONS_LOG_H_
#define SLUICE_DAEMONS_LOG_H_

#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>

namespace sluice::daemon {

enum class Level { kDebug, kInfo, kWarn, kError };

inline Level& min_level() {
  static Level level = Level::kInfo;
  return level;
}
inline std::string& log_name() {
  static std::string name = "sluice";
  return name;
}

inline void log(Level level, const std::string& message) {
  if (level < min_level()) return;
  static const char* names[] = {"debug", "info", "warn", "error"};
  timeval tv;
  gettimeofday(&tv, nullptr);
  tm utc;
  gmtime_r(&tv.tv_sec, &utc);
  char when[32];
  std::strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &utc);
  std::string line = std::string(when) + "." + std::to_string(tv.tv_usec / 100000) +
                     std::to_string(tv.tv_usec / 10000 % 10) + std::to_string(tv.tv_usec / 1000 % 10) +
                     "Z " + log_name() + "[" + std::to_string(::getpid()) + "] [" +
                     names[static_cast<int>(level)] + "] " + message + "\n";
  // One write per line so lines from several processes do not interleave.
  (void)!::write(STDERR_FILENO, line.data(), line.size());
}

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
    if (level < min_level() || !allow(Clock::now(), &held_back)) return;
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
