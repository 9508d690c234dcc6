#include "daemons/log_forwarder.h"

namespace sluice::daemon {

LogForwarder::LogForwarder(std::string host, Limits limits)
    : host_(std::move(host)), max_line_(limits.max_line), limit_(limits.per_second, limits.burst) {}

void LogForwarder::line_at(Clock::time_point now, LogLevel level, std::string_view prefix, std::string_view message) {
  std::lock_guard<std::mutex> lock(mu_);
  std::uint64_t unused = 0;
  if (!limit_.allow(now, &unused)) {
    ++not_forwarded_;
    return;
  }
  control::LogLine* l = pending_.mutable_filter_log()->add_lines();
  l->set_prefix(std::string(prefix));
  l->set_level(log_output::level_name(level));
  if (message.size() <= max_line_) {
    l->set_text(std::string(message));
  } else {
    l->set_text(std::string(message.substr(0, max_line_)) + "... (" + std::to_string(message.size() - max_line_) +
                " bytes more in host " + host_ + "'s sluiced log)");
  }
}

std::optional<control::Envelope> LogForwarder::take() {
  std::lock_guard<std::mutex> lock(mu_);
  if (pending_.filter_log().lines_size() == 0 && not_forwarded_ == 0) return std::nullopt;
  control::Envelope out;
  out.Swap(&pending_);
  out.mutable_filter_log()->set_host(host_);
  out.mutable_filter_log()->set_not_forwarded(not_forwarded_);
  not_forwarded_ = 0;
  return out;
}

}  // namespace sluice::daemon
