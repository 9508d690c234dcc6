#include "net/rate_limited_log.h"

#include "log/backend.h"

namespace sluice::net {

bool RateLimitedLog::line(const std::string& text) {
  std::uint64_t held_back = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (written_ && now - last_ < period_) {
      ++held_back_;
      ++suppressed_total_;
      return false;
    }
    written_ = true;
    last_ = now;
    held_back = held_back_;
    held_back_ = 0;
  }
  std::string out = prefix_ + text;
  if (held_back > 0) out += " (and " + std::to_string(held_back) + " more like it, not shown)";
  logging::process_line(LogLevel::kWarn, out);
  return true;
}

std::uint64_t RateLimitedLog::suppressed_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return suppressed_total_;
}

}  // namespace sluice::net
