#include "console/serve_client.h"

#include <unistd.h>

#include "text/shortened.h"

namespace sluice::console {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
constexpr auto kServeSilence = std::chrono::milliseconds(3000);
constexpr control::ServerNames kServe = {"sluice serve", "a sluice serve", "; is sluice serve running there?"};

}  // namespace

ServeClient::~ServeClient() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  if (heartbeats_.joinable()) heartbeats_.join();
  if (channel_) channel_->shutdown();
}

std::string ServeClient::error() const {
  return channel_ ? control::channel_error(*channel_, credentials_) : "not connected";
}

std::optional<std::string> ServeClient::connect(const Credentials& credentials, std::chrono::milliseconds timeout) {
  credentials_ = credentials;
  const auto deadline = Clock::now() + timeout;
  control::AuthResult answer;
  if (auto why = open_control(address_, credentials, "sluice pid " + std::to_string(::getpid()), kServe, deadline,
                              &channel_, &answer)) {
    return why;
  }
  // A host daemon answers the same opening (same TLS, same token); it would drop the submit
  // as a malformed message, which looked like serve closing the connection mid-unit.
  if (answer.host() != control::kServeAuthHost) {
    channel_.reset();
    return "this address is a host daemon (sluiced on " + text::shortened(answer.host(), 64) +
           "), not a sluice serve: point it at the address sluice serve printed ('serving ... at ADDR')";
  }
  heartbeats_ = std::thread([this] { beat(); });
  return std::nullopt;
}

void ServeClient::beat() {
  std::uint64_t sequence = 0;
  std::unique_lock<std::mutex> lock(mu_);
  while (!wake_.wait_for(lock, kHeartbeatEvery, [this] { return stop_; })) {
    control::Envelope h;
    h.mutable_heartbeat()->set_sequence(++sequence);
    lock.unlock();
    const bool sent = channel_->send(h);
    lock.lock();
    if (!sent) return;  // the connection is gone: receive() says so
  }
}

ServeClient::Status ServeClient::receive(control::Envelope* out) {
  for (;;) {
    switch (channel_->receive(out, kServeSilence)) {
      case control::TlsChannel::Status::kMessage:
        if (out->has_heartbeat()) continue;
        return Status::kMessage;
      case control::TlsChannel::Status::kTimeout: return Status::kSilent;
      case control::TlsChannel::Status::kClosed: return Status::kClosed;
      case control::TlsChannel::Status::kError: return Status::kError;
    }
  }
}

bool ServeClient::send(const control::Envelope& message) { return channel_ && channel_->send(message); }

void ServeClient::shutdown() {
  if (channel_) channel_->shutdown();
}

}  // namespace sluice::console
