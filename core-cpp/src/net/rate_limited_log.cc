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
      newest_held_back_ = text;
      return false;
    }
    written_ = true;
    last_ = now;
    held_back = held_back_;
    held_back_ = 0;
  }
  write(text, held_back);
  return true;
}

bool RateLimitedLog::flush(bool at_end) {
  std::string text;
  std::uint64_t more = 0;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const auto now = std::chrono::steady_clock::now();
    if (held_back_ == 0 || (!at_end && now - last_ < period_)) return false;
    last_ = now;
    text = std::move(newest_held_back_);
    newest_held_back_.clear();
    more = held_back_ - 1;  // the newest is written
    held_back_ = 0;
  }
  write(text, more);
  return true;
}

void RateLimitedLog::write(const std::string& text, std::uint64_t held_back) const {
  std::string out = prefix_ + text;
  if (held_back > 0) out += " (and " + std::to_string(held_back) + " more like it, not shown)";
  logging::process_line(LogLevel::kWarn, out);
}

std::uint64_t RateLimitedLog::suppressed_total() const {
  std::lock_guard<std::mutex> lock(mu_);
  return suppressed_total_;
}

}  // namespace sluice::net
