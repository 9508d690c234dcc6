#include "console/serve_client.h"

#include <unistd.h>

#include "text/address.h"
#include "tls/tls_errors.h"

namespace sluice::console {

namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
constexpr auto kServeSilence = std::chrono::milliseconds(3000);

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
  if (!channel_) return "not connected";
  const auto& failure = channel_->failure();
  if (!failure || (failure->eof && failure->established)) return channel_->error();
  return tls::explain_client_failure(*failure, credentials_.tls->options(), credentials_.token_file);
}

std::optional<std::string> ServeClient::connect(const Credentials& credentials, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  credentials_ = credentials;
  std::string why;
  const int fd = connect_tcp(address_, deadline, &why);
  if (fd < 0) return why + (why.find("refused") != std::string::npos ? "; is sluice serve running there?" : "");
  channel_ = std::make_unique<control::TlsChannel>(fd, credentials.tls);
  if (!channel_->handshake(text::parse_host_port(address_, text::AddressRules{}, nullptr)->host, deadline)) return error();
  control::Envelope hello;
  hello.mutable_hello()->set_protocol_version(control::kProtocolVersion);
  hello.mutable_hello()->set_client("sluice pid " + std::to_string(::getpid()));
  if (!channel_->send(hello)) return std::string("sluice serve closed the connection after the TLS handshake");
  control::Envelope m;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) left = std::chrono::milliseconds(1);
  switch (channel_->receive(&m, left)) {
    case control::TlsChannel::Status::kMessage: break;
    case control::TlsChannel::Status::kTimeout:
      return std::string("no answer to the hello within the timeout; is it a sluice serve of this version?");
    case control::TlsChannel::Status::kClosed:
      return std::string("sluice serve closed the connection after the TLS handshake; its log says why");
    case control::TlsChannel::Status::kError:
      return error();
  }
  if (!m.has_auth_result()) {
    return std::string("unexpected ") + control::kind(m) +
           " instead of the answer to the hello; is it a sluice serve of this version?";
  }
  if (!m.auth_result().ok()) return "refused: " + m.auth_result().message();
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
