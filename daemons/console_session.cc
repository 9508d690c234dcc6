#include "daemons/console_session.h"

#include <limits.h>
#include <unistd.h>

#include <cstdio>

#include "tls/tls_errors.h"
#include "daemons/host_daemon.h"
#include "daemons/log.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using sluice::control::Envelope;
namespace dlog = sluice::daemon;

namespace sluice::sluiced {

namespace {

constexpr auto kAuthTimeout = std::chrono::seconds(5);
constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
constexpr auto kConsoleSilence = std::chrono::milliseconds(3000);
constexpr unsigned char kTlsHandshakeRecord = 0x16;  // the first byte of every ClientHello

std::string hex_byte(unsigned char c) {
  char text[8];
  std::snprintf(text, sizeof text, "0x%02x", c);
  return text;
}

}  // namespace

ConsoleSession::ConsoleSession(tcp::socket socket, HostDaemon& daemon, std::uint64_t id, Admission::Ticket ticket)
    : daemon_(daemon),
      id_(id),
      ticket_(std::move(ticket)),
      stream_([this](const boost::system::error_code& ec) { on_written(ec); }, std::move(socket), daemon.ssl()),
      protocol_(*this),
      deadline_(daemon.io()),
      heartbeat_(daemon.io()) {
  boost::system::error_code ec;
  auto ep = stream_.socket().lowest_layer().remote_endpoint(ec);
  peer_ = ec ? std::string("unknown peer") : ep.address().to_string() + ":" + std::to_string(ep.port());
  peer_ = "console #" + std::to_string(id_) + " (" + peer_ + ")";
  tls::TlsContext::attach(stream_.socket().native_handle(), &notes_);
}

void ConsoleSession::start() {
  dlog::debug(peer_ + ": connected");
  arm_deadline(kAuthTimeout, "did not authenticate within 5 s");
  await_first_byte();
}

void ConsoleSession::fail(const std::string& why, const std::string& short_why) {
  if (!opened_) return stop(why);
  dlog::warn(peer_ + ": " + why + "; dropping the connection");
  stop(short_why);
}

void ConsoleSession::arm_deadline(std::chrono::steady_clock::duration after, std::string what) {
  deadline_.expires_after(after);
  deadline_.async_wait([self = shared_from_this(), what](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || self->phase_ == Phase::kClosed) return;
    if (!self->opened_) self->daemon_.count_refusal("auth_timeout");
    self->stop(what);
  });
}

void ConsoleSession::stop(const std::string& why) {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  if (opened_) {
    dlog::info(peer_ + ": closing: " + why);
  } else {
    daemon_.strangers_log().log(dlog::Level::kWarn, peer_ + ": closing before authentication: " + why);
  }
  boost::system::error_code ec;
  stream_.socket().lowest_layer().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().lowest_layer().close(ec);
  deadline_.cancel();
  heartbeat_.cancel();
  ticket_.release();
  if (app_) app_->console_gone();
  daemon_.forget(shared_from_this());
}

// --- Before TLS: is it a TLS client at all? ---------------------------------------------

void ConsoleSession::await_first_byte() {
  stream_.socket().next_layer().async_wait(tcp::socket::wait_read, [self = shared_from_this()](boost::system::error_code ec) {
    if (self->phase_ == Phase::kClosed) return;
    if (ec) return self->stop("wait failed: " + ec.message());
    self->on_first_byte();
  });
}

void ConsoleSession::on_first_byte() {
  unsigned char first = 0;
  boost::system::error_code ec;
  const std::size_t n = stream_.socket().next_layer().receive(asio::buffer(&first, 1), tcp::socket::message_peek, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return await_first_byte();
  if (ec || n == 0) return stop("connection closed before the TLS handshake");
  if (first == kTlsHandshakeRecord) return handshake();
  daemon_.count_refusal("not_tls");
  if (first == 0x00) return answer_plain_console();
  stop("not a TLS client (first byte " + hex_byte(first) + "); consoles speak TLS 1.3 since sluice control protocol 2");
}

// A console of protocol version 1 sends a plain frame (a 4-byte length, then protobuf):
// say why, in the framing it reads, before closing.
void ConsoleSession::answer_plain_console() {
  Envelope r;
  r.mutable_auth_result()->set_ok(false);
  r.mutable_auth_result()->set_message(
      "this daemon speaks the control protocol over TLS 1.3 (version " + std::to_string(control::kProtocolVersion) +
      "); this console speaks plain text (version 1): run a console of the same sluice version as the daemon");
  plain_reply_ = control::encode(r);
  phase_ = Phase::kClosing;
  asio::async_write(stream_.socket().next_layer(), asio::buffer(plain_reply_),
                    [self = shared_from_this()](boost::system::error_code, std::size_t) {
                      self->stop("not a TLS client: a console of protocol version 1 (plain text); told it to upgrade");
                    });
}

// --- TLS ------------------------------------------------------------------------------------

void ConsoleSession::handshake() {
  phase_ = Phase::kHandshake;
  stream_.socket().async_handshake(asio::ssl::stream_base::server,
                                   [self = shared_from_this()](const boost::system::error_code& ec) {
                                     self->on_handshake(ec);
                                   });
}

std::string ConsoleSession::tls_failure(const boost::system::error_code& ec, bool established) {
  tls::TlsFailure f;
  f.established = established;
  if (ec.category() == asio::error::get_ssl_category()) {
    f.error = static_cast<unsigned int>(ec.value());
  } else if (ec == asio::ssl::error::stream_truncated || ec == asio::error::eof ||
             ec == asio::error::connection_reset) {
    f.eof = true;
  } else {
    return "TLS: " + ec.message();
  }
  f.collect(stream_.socket().native_handle());
  return tls::explain_server_failure(f, daemon_.config().tls);
}

void ConsoleSession::on_handshake(const boost::system::error_code& ec) {
  if (phase_ == Phase::kClosed) return;
  if (ec) {
    daemon_.count_refusal("tls_handshake");
    return stop(tls_failure(ec, false));
  }
  phase_ = Phase::kTls;
  read_next();
}

void ConsoleSession::read_next() {
  stream_.socket().async_read_some(asio::buffer(read_buffer_),
                                   [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                                     self->on_read(ec, n);
                                   });
}

void ConsoleSession::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (phase_ == Phase::kClosed) return;
  if (ec == asio::error::eof || ec == asio::ssl::error::stream_truncated) return stop(protocol_.end_of_input());
  if (ec == asio::error::operation_aborted) return;
  if (ec.category() == asio::error::get_ssl_category()) return fail(tls_failure(ec, true), "TLS failure");
  if (ec) return stop("read failed: " + ec.message());
  protocol_.feed(read_buffer_.data(), n);
  if (phase_ == Phase::kTls) read_next();
}

void ConsoleSession::on_written(const boost::system::error_code& ec) {
  if (phase_ == Phase::kClosed) return;
  if (ec) {
    if (ec != asio::error::operation_aborted) stop("write failed: " + ec.message());
    return;
  }
  // Every frame is out: a refusal has been said.
  if (phase_ == Phase::kClosing) stop(closing_reason_);
}

// --- ConsoleProtocol::Session -----------------------------------------------------------------

void ConsoleSession::send(const Envelope& message) { stream_.send(shared_from_this(), message); }

void ConsoleSession::opened(const std::string& client) {
  opened_ = true;
  ticket_.release();
  const SSL* ssl = stream_.socket().native_handle();
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl);
  std::string how = std::string(SSL_get_version(ssl)) + ", " + (cipher != nullptr ? SSL_CIPHER_get_name(cipher) : "?");
  if (daemon_.config().tls.certificates()) {
    how += ", certificate " + tls::peer_subject(stream_.socket().native_handle());
  } else {
    how += ", token (PSK)";
  }
  dlog::info(peer_ + ": authenticated (" + how + ")" + (client.empty() ? "" : ": " + client));
  Envelope r;
  r.mutable_auth_result()->set_ok(true);
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof name - 1);
  r.mutable_auth_result()->set_host(name);
  send(r);
  arm_deadline(kConsoleSilence, "no heartbeat from the console for 3 s");
  heartbeat();
}

void ConsoleSession::heard() { arm_deadline(kConsoleSilence, "no heartbeat from the console for 3 s"); }

std::optional<std::string> ConsoleSession::launch(const Envelope& m) {
  auto app = std::make_shared<AppSupervisor>(daemon_.io(), peer_, m.launch(),
                                             [weak = weak_from_this()](const Envelope& message) {
                                               if (auto self = weak.lock()) self->send(message);
                                             });
  if (auto problem = app->start(daemon_.config().appd_path, m, daemon_.apps())) return problem;
  app_ = std::move(app);
  return std::nullopt;
}

bool ConsoleSession::app_running() { return app_ != nullptr && app_->running(); }

void ConsoleSession::relay(const Envelope& message) { app_->send(message); }

void ConsoleSession::abort(const std::string& reason) { app_->abort(reason); }

void ConsoleSession::shutdown(const Envelope& message) { app_->shutdown(message); }

void ConsoleSession::close(const std::string& why, bool after_reply) {
  daemon_.count_refusal(!opened_ ? "hello_refused" : after_reply ? "request_refused" : "protocol_error");
  if (!after_reply) return fail(why, "protocol error");
  // Let the reply go out, then close (the deadline closes it if the peer stalls).
  closing_reason_ = "refused: " + why;
  phase_ = Phase::kClosing;
}

void ConsoleSession::heartbeat() {
  if (phase_ == Phase::kClosed) return;
  Envelope h;
  h.mutable_heartbeat()->set_sequence(++heartbeat_sequence_);
  send(h);
  heartbeat_.expires_after(kHeartbeatEvery);
  heartbeat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->heartbeat();
  });
}

}  // namespace sluice::sluiced
