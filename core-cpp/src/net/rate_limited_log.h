// RateLimitedLog: at most one line per period to the log (log/backend.h, a warning), so that a flood of bad
// connections costs a line a second, not a line per connection. Lines that are held back
// are counted and the count is told with the next line that gets through, or by flush()
// (called on a timer and at the end) when no line follows, with the newest held back.
//
// Thread safety: line() from any thread.
#ifndef SLUICE_NET_RATE_LIMITED_LOG_H_
#define SLUICE_NET_RATE_LIMITED_LOG_H_

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>
#include <utility>

namespace sluice::net {

class RateLimitedLog {
 public:
  explicit RateLimitedLog(std::string prefix, std::chrono::milliseconds period = std::chrono::seconds(1))
      : prefix_(std::move(prefix)), period_(period) {}

  // Writes "<prefix><text>" unless a line was written less than a period ago. Returns
  // whether it was written.
  bool line(const std::string& text);
  // When lines were held back and a period passed since the last line written: writes the
  // newest of them, with how many more there were, so that the count is not lost when the
  // flood stops. Returns whether it wrote. `at_end`: whether or not a period passed.
  bool flush(bool at_end = false);
  // Lines held back since the process started.
  std::uint64_t suppressed_total() const;

 private:
  void write(const std::string& text, std::uint64_t held_back) const;

  const std::string prefix_;
  const std::chrono::milliseconds period_;
  mutable std::mutex mu_;  // guards the members below
  std::chrono::steady_clock::time_point last_{};
  bool written_ = false;
  std::uint64_t held_back_ = 0;  // since the last line written
  std::string newest_held_back_;
  std::uint64_t suppressed_total_ = 0;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_RATE_LIMITED_LOG_H_
