#include "control/tls_session.h"

#include <sys/ioctl.h>

#include <algorithm>
#include <cstdio>

#include "control/own_pause.h"
#include "control/tls_server.h"
#include "tls/tls_errors.h"

namespace asio = boost::asio;
using asio::ip::tcp;
namespace dlog = sluice::daemon;

namespace sluice::control {

namespace {

constexpr unsigned char kTlsHandshakeRecord = 0x16;  // the first byte of every ClientHello

// "0x47 ('G': plain text, an HTTP request?)", or just "0x00".
std::string first_byte_text(unsigned char c) {
  char text[48];
  if (c >= 'A' && c <= 'Z') {
    std::snprintf(text, sizeof text, "0x%02x ('%c': plain text, an HTTP request?)", c, c);
  } else {
    std::snprintf(text, sizeof text, "0x%02x", c);
  }
  return text;
}

}  // namespace

TlsSession::TlsSession(tcp::socket socket, TlsServer& server, std::uint64_t id, Admission::Ticket ticket,
                       const Style& style)
    : server_(server),
      style_(style),
      ticket_(std::move(ticket)),
      stream_(std::move(socket), server.ssl()),
      deadline_(server.io()),
      heartbeat_(server.io()),
      write_watch_(server.io()) {
  boost::system::error_code ec;
  const auto ep = stream_.lowest_layer().remote_endpoint(ec);
  if (!ec) peer_address_ = ep.address().to_string();
  label_ = style_.peer + " #" + std::to_string(id) + " (" +
           (ec ? std::string("unknown peer") : peer_address_ + ":" + std::to_string(ep.port())) + ")";
  tls::TlsContext::attach(stream_.native_handle(), &notes_);
}

void TlsSession::start() {
  arm_deadline(kAuthTimeout, "did not authenticate within 5 s");
  begin();
}

void TlsSession::stop(const std::string& why) {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  if (!opened_ && !evicted_) {
    server_.strangers_log().log(dlog::Level::kWarn, label_ + ": closing before authentication: " + why);
  }
  ending(why);
  boost::system::error_code ec;
  stream_.lowest_layer().shutdown(tcp::socket::shutdown_both, ec);
  stream_.lowest_layer().close(ec);
  deadline_.cancel();
  heartbeat_.cancel();
  write_watch_.cancel();
  ticket_.release();
  // The front frame may be under an async_write still: it goes with the session.
  if (const std::size_t results = writes_.drop_all_but_front(); results > 0) written(results);
  server_.forget(shared_from_this());
}

void TlsSession::evict(const std::string& why) {
  evicted_ = true;
  stop(why);
}

void TlsSession::finish(const std::string& why, bool linger) {
  if (phase_ == Phase::kClosed || phase_ == Phase::kClosing) return;
  if (linger) linger_once_ = true;
  close_after_queue(why);
}

void TlsSession::close_after_queue(const std::string& why) {
  if (phase_ == Phase::kClosed) return;
  closing_reason_ = why;
  phase_ = Phase::kClosing;
  if (!writes_.empty()) return;  // do_write() goes on when they are out
  if (style_.linger || linger_once_) return linger();
  stop(why);
}

// Everything is written: end our side (FIN) and wait for the peer to close its own. Closing
// at once could lose the end of what was sent: a socket closed with unread bytes (the
// peer's last heartbeat) sends a reset, and the peer's kernel then discards what it has
// received but not yet read.
void TlsSession::linger() {
  if (lingering_) return;
  lingering_ = true;
  boost::system::error_code ec;
  stream_.lowest_layer().shutdown(tcp::socket::shutdown_send, ec);
  linger_look(unsent(), std::chrono::steady_clock::now() + kLinger);
}

int TlsSession::unsent() {
  int bytes = 0;
  if (::ioctl(stream_.lowest_layer().native_handle(), TIOCOUTQ, &bytes) != 0) return 0;
  return bytes;
}

// The peer gets kLinger to close its end, counted from the last time it took some of what
// was sent: what the kernel still holds for it (not sent, or not acknowledged) shrank. A
// slow link still carrying the end of a large result is not a peer that does not close.
void TlsSession::linger_look(int last_unsent, std::chrono::steady_clock::time_point until) {
  const auto now = std::chrono::steady_clock::now();
  const int left = unsent();
  if (left < last_unsent) until = now + kLinger;
  if (now >= until) return stop(closing_reason_ + " (the " + style_.peer + " did not close its end within 5 s)");
  deadline_.expires_after(std::min<std::chrono::steady_clock::duration>(std::chrono::seconds(1), until - now));
  deadline_.async_wait([self = shared_from_this(), left, until](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || self->phase_ == Phase::kClosed) return;
    self->linger_look(left, until);
  });
}

void TlsSession::fail(const std::string& why, const std::string& short_why) {
  if (!opened_) return stop(why);
  dlog::warn(label_ + ": " + why + "; dropping the connection");
  stop(style_.short_reasons ? short_why : why);
}

void TlsSession::arm_deadline(std::chrono::steady_clock::duration after, std::string what) {
  const auto due = std::chrono::steady_clock::now() + after;
  deadline_.expires_at(due);
  deadline_.async_wait([self = shared_from_this(), after, what, due](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || self->phase_ == Phase::kClosed) return;
    // Re-armed after this wait had completed (the peer spoke as it expired): stale.
    if (self->deadline_.expiry() != due) return;
    // This process was out (stopped, starved): the peer's silence was ours. A fresh window;
    // what it sent meanwhile waits in the socket and re-arms this as it is read.
    if (own_pause_since(due) > std::chrono::steady_clock::duration::zero()) return self->arm_deadline(after, what);
    if (!self->opened_) self->server_.count_refusal("auth_timeout");
    self->stop(what);
  });
}

// --- Before TLS: is it a TLS client at all? -------------------------------------------------

void TlsSession::await_first_byte() {
  stream_.next_layer().async_wait(tcp::socket::wait_read, [self = shared_from_this()](boost::system::error_code ec) {
    if (self->phase_ == Phase::kClosed) return;
    if (ec) return self->stop("wait failed: " + ec.message());
    self->on_first_byte();
  });
}

void TlsSession::on_first_byte() {
  unsigned char first = 0;
  boost::system::error_code ec;
  const std::size_t n = stream_.next_layer().receive(asio::buffer(&first, 1), tcp::socket::message_peek, ec);
  if (ec == asio::error::would_block || ec == asio::error::try_again) return await_first_byte();
  if (ec || n == 0) return stop("connection closed before the TLS handshake");
  if (first == kTlsHandshakeRecord) return handshake();
  server_.count_refusal("not_tls");
  not_tls(first);
}

void TlsSession::not_tls(unsigned char first) {
  stop("not a TLS client (first byte " + first_byte_text(first) + "); " + style_.tls_speakers);
}

// --- TLS ------------------------------------------------------------------------------------

void TlsSession::handshake() {
  phase_ = Phase::kHandshake;
  stream_.async_handshake(asio::ssl::stream_base::server,
                          [self = shared_from_this()](const boost::system::error_code& ec) { self->on_handshake(ec); });
}

std::string TlsSession::tls_failure(const boost::system::error_code& ec, bool established) {
  tls::TlsFailure f;
  f.established = established;
  if (ec.category() == asio::error::get_ssl_category()) {
    f.error = static_cast<unsigned int>(ec.value());
  } else if (ec == asio::ssl::error::stream_truncated || ec == asio::error::eof || ec == asio::error::connection_reset) {
    f.eof = true;
  } else {
    return "TLS: " + ec.message();
  }
  f.collect(stream_.native_handle());
  return tls::explain_server_failure(f, server_.tls_options(), server_.roles());
}

void TlsSession::on_handshake(const boost::system::error_code& ec) {
  if (phase_ == Phase::kClosed) return;
  if (ec) {
    server_.count_refusal("tls_handshake");
    return stop(tls_failure(ec, false));
  }
  if (phase_ == Phase::kClosing) return stop(closing_reason_);  // the server finished meanwhile
  phase_ = Phase::kTls;
  read_next();
}

void TlsSession::read_next() {
  stream_.async_read_some(asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                            self->on_read(ec, n);
                          });
}

void TlsSession::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (phase_ == Phase::kClosed) return;
  const bool eof = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated ||
                   ec == asio::error::connection_reset;
  if (eof) return stop(phase_ == Phase::kClosing ? closing_reason_ : protocol().end_of_input());
  if (ec == asio::error::operation_aborted) return;
  if (ec.category() == asio::error::get_ssl_category()) return fail(tls_failure(ec, true), "TLS failure");
  if (ec) return stop("read failed: " + ec.message());
  // Any bytes from an open peer count against its silence, not only whole frames: a large
  // frame on a slow link (a 16 MiB payload) is not a silent peer. Before the hello, the
  // whole handshake must fit in kAuthTimeout, however the bytes trickle in.
  if (opened_ && n > 0) heard();
  // Closing: nothing the peer says matters any more; read on (and drop) until it closes.
  if (phase_ == Phase::kTls && !protocol().closed()) protocol().feed(read_buffer_.data(), n);
  if (phase_ == Phase::kTls || phase_ == Phase::kClosing) read_next();
}

// --- Writing: one frame at a time, the rest queued behind it ----------------------------------

void TlsSession::write(std::string frame, std::size_t results) {
  if (phase_ == Phase::kClosed) {
    if (results > 0) written(results);
    return;
  }
  writes_.push_back(Outgoing{std::move(frame), results});
  if (writes_.size() == 1) do_write();
}

void TlsSession::write_heartbeat() {
  Envelope h;
  h.mutable_heartbeat()->set_sequence(++heartbeat_sequence_);
  if (writes_.empty()) return write(encode(h));
  // Right behind the frames under way, unless the last heartbeat still waits there.
  writes_.push_heartbeat(encode(h));
}

void TlsSession::do_write() {
  writes_.join_front();
  asio::async_write(stream_, asio::buffer(writes_.front().frame),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      if (self->phase_ == Phase::kClosed) return;
                      if (ec) return self->stop("write failed: " + ec.message());
                      ++self->writes_done_;
                      if (const std::size_t results = self->writes_.pop_front(); results > 0) self->written(results);
                      self->queue_shrank();
                      if (self->phase_ == Phase::kClosed) return;
                      if (!self->writes_.empty()) return self->do_write();
                      if (self->phase_ == Phase::kClosing) {
                        if (self->style_.linger || self->linger_once_) return self->linger();
                        self->stop(self->closing_reason_);
                      }
                    });
}

// --- ServerProtocol::Session ------------------------------------------------------------------

void TlsSession::send(const Envelope& message) { write(encode(message)); }

void TlsSession::opened(const std::string& client) {
  opened_ = true;
  ticket_.release();
  const SSL* ssl = stream_.native_handle();
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl);
  std::string how = std::string(SSL_get_version(ssl)) + ", " + (cipher != nullptr ? SSL_CIPHER_get_name(cipher) : "?");
  how += server_.tls_options().certificates() ? ", certificate " + tls::peer_subject(stream_.native_handle())
                                              : ", token (PSK)";
  dlog::log(style_.authenticated_log, label_ + ": authenticated (" + how + ")" + (client.empty() ? "" : ": " + client));
  Envelope r;
  r.mutable_auth_result()->set_ok(true);
  r.mutable_auth_result()->set_host(style_.host);
  send(r);
  arm_deadline(kSilence, style_.silence);
  heartbeat();
  if (const auto limit = write_stall_limit(); limit > std::chrono::steady_clock::duration::zero()) {
    looked_at_ = taken_at_ = std::chrono::steady_clock::now();
    watch_writes(limit);
  }
}

void TlsSession::watch_writes(std::chrono::steady_clock::duration limit) {
  constexpr auto kEvery = std::chrono::seconds(1);
  if (phase_ == Phase::kClosed) return;
  const auto now = std::chrono::steady_clock::now();
  const int left = unsent();
  if (writes_.empty() || left < looked_unsent_ || writes_done_ != looked_writes_done_ ||
      own_pause_since(looked_at_ + kEvery) > std::chrono::steady_clock::duration::zero()) {
    // Took some, or had nothing to take; or this process was out (own_pause.h), and the
    // peer's time without taking anything was ours.
    taken_at_ = now;
  }
  looked_unsent_ = left;
  looked_writes_done_ = writes_done_;
  looked_at_ = now;
  if (now - taken_at_ >= limit) {
    const double seconds = std::chrono::duration<double>(limit).count();
    char text[32];
    std::snprintf(text, sizeof text, "%g", seconds);
    return fail("the " + style_.peer + " took none of what waits for it for " + text + " s (" +
                    std::to_string(writes_.bytes()) + " bytes): it stopped reading",
                "stopped reading");
  }
  write_watch_.expires_after(kEvery);
  write_watch_.async_wait([self = shared_from_this(), limit](boost::system::error_code ec) {
    if (!ec) self->watch_writes(limit);
  });
}

// Also while closing with frames still to write (a unit's results, queued when the unit
// ended before the client read them): the peer's heartbeats keep it from being dropped mid-way
// however long those take to leave (200 submitters at once each with 1 MiB of results took
// over 3 s, and three quarters of them were dropped as silent). Lingering has its own clock.
void TlsSession::heard() {
  if (phase_ == Phase::kTls || (phase_ == Phase::kClosing && !lingering_)) arm_deadline(kSilence, style_.silence);
}

void TlsSession::heartbeat() {
  if (phase_ != Phase::kTls) return;  // closing: nothing more than what is queued
  write_heartbeat();
  heartbeat_.expires_after(kHeartbeatEvery);
  heartbeat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->heartbeat();
  });
}

}  // namespace sluice::control
