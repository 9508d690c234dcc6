// LogForwarder: an app daemon's filter log lines on their way to the console. The runtime's
// Logger hands it every line (log/log_output.h) after writing it to stderr, which is
// sluiced's log; the app daemon's control loop takes what it gathered, as one FilterLog, and
// sends it up (sluiced relays it, the console prints it on its stderr).
//
// A filter that logs in a tight loop must not flood the control connection, nor block on
// it: line() only appends to a bounded batch, under a rate limit (a burst of `burst` lines,
// then `per_second`); lines over the rate are counted, not kept, and the next batch says how
// many (FilterLog.not_forwarded). Each line is cut at `max_line` bytes.
//
// Thread safety: line() from any thread (filter copies log from theirs); take() from any
// thread. One mutex guards the batch.
#ifndef SLUICE_DAEMONS_LOG_FORWARDER_H_
#define SLUICE_DAEMONS_LOG_FORWARDER_H_

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "control/codec.h"
#include "daemons/log.h"
#include "log/log_output.h"

namespace sluice::daemon {

class LogForwarder final : public log_output::Sink {
 public:
  using Clock = std::chrono::steady_clock;

  struct Limits {
    double per_second = 50;      // Default: 50 lines a second ...
    double burst = 200;          // ... after a burst of 200.
    std::size_t max_line = 4096;  // Default: a line's text is cut at 4 KiB.
  };

  // `host`: this app daemon's host name, for FilterLog.host.
  explicit LogForwarder(std::string host) : LogForwarder(std::move(host), Limits{}) {}
  LogForwarder(std::string host, Limits limits);

  void line(LogLevel level, std::string_view prefix, std::string_view message) override {
    line_at(Clock::now(), level, prefix, message);
  }
  // line() at a given time (tests).
  void line_at(Clock::time_point now, LogLevel level, std::string_view prefix, std::string_view message);

  // Everything gathered since the last call, as one filter_log message; nullopt when there is
  // nothing to tell (no line, and no line held back).
  std::optional<control::Envelope> take();

 private:
  const std::string host_;
  const std::size_t max_line_;
  std::mutex mu_;  // guards everything below
  RateLimited limit_;
  control::Envelope pending_;
  std::uint64_t not_forwarded_ = 0;
};

}  // namespace sluice::daemon

#endif  // SLUICE_DAEMONS_LOG_FORWARDER_H_
