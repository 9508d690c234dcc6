#include "control/client_opening.h"

#include "tls/tls_errors.h"

namespace sluice::control {

using Clock = std::chrono::steady_clock;

std::string channel_error(const TlsChannel& channel, const Credentials& credentials, bool* explained,
                          const char* kind) {
  if (explained != nullptr) *explained = false;
  const auto& failure = channel.failure();
  if (!failure || (failure->eof && failure->established)) return channel.error();
  if (explained != nullptr) *explained = true;
  return tls::explain_client_failure(*failure, credentials.tls->options(), credentials.token_file, kind);
}

std::optional<std::string> open_client(TlsChannel& channel, const std::string& host, const std::string& client,
                                       const Credentials& credentials, const ServerNames& names,
                                       Clock::time_point deadline, AuthResult* answer, bool* closed_unanswered) {
  bool ignored = false;
  bool& closed_early = closed_unanswered != nullptr ? *closed_unanswered : ignored;
  closed_early = false;
  if (!channel.handshake(host, deadline)) {
    const std::optional<tls::TlsFailure>& f = channel.failure();
    closed_early = f && f->eof && !f->established;
    return channel_error(channel, credentials, nullptr, names.kind);
  }
  // TLS has authenticated both sides; the hello opens the session (and, in certificate
  // mode, is where the server's refusal of our certificate shows: TLS 1.3 sends it after
  // the client has finished its handshake).
  Envelope hello;
  hello.mutable_hello()->set_protocol_version(kProtocolVersion);
  hello.mutable_hello()->set_client(client);
  const std::string closed = std::string(names.server) + " closed the connection after the TLS handshake";
  if (!channel.send(hello)) {
    closed_early = true;
    return closed;
  }
  const std::string which = std::string("; is it ") + names.kind + " of this version?";
  Envelope m;
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  if (left.count() <= 0) left = std::chrono::milliseconds(1);
  switch (channel.receive(&m, left)) {
    case TlsChannel::Status::kMessage: break;
    case TlsChannel::Status::kTimeout: return "no answer to the hello within the timeout" + which;
    case TlsChannel::Status::kClosed:
      closed_early = true;
      return closed + "; its log says why";
    case TlsChannel::Status::kError: return channel_error(channel, credentials);
  }
  if (!m.has_auth_result()) return std::string("unexpected ") + kind(m) + " instead of the answer to the hello" + which;
  if (!m.auth_result().ok()) return "refused: " + m.auth_result().message();
  *answer = m.auth_result();
  return std::nullopt;
}

}  // namespace sluice::control
