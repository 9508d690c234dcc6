#include "console/serve_session.h"

#include "console/serve_server.h"
#include "tls/tls_errors.h"
#include "daemons/log.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using sluice::control::Envelope;
namespace dlog = sluice::daemon;

namespace sluice::console {

namespace {

constexpr auto kAuthTimeout = std::chrono::seconds(5);
constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
constexpr auto kClientSilence = std::chrono::milliseconds(3000);
constexpr auto kLinger = std::chrono::seconds(5);

}  // namespace

ServeSession::ServeSession(tcp::socket socket, ServeServer& server, std::uint64_t id,
                           sluiced::Admission::Ticket ticket)
    : server_(server),
      id_(id),
      ticket_(std::move(ticket)),
      stream_(std::move(socket), server.ssl()),
      protocol_(*this),
      deadline_(server.io()),
      heartbeat_(server.io()) {
  boost::system::error_code ec;
  const auto ep = stream_.lowest_layer().remote_endpoint(ec);
  label_ = "client #" + std::to_string(id_) + " (" +
           (ec ? std::string("unknown peer") : ep.address().to_string() + ":" + std::to_string(ep.port())) + ")";
  tls::TlsContext::attach(stream_.native_handle(), &notes_);
}

void ServeSession::start() {
  arm_deadline(kAuthTimeout, "did not authenticate within 5 s");
  stream_.async_handshake(asio::ssl::stream_base::server,
                          [self = shared_from_this()](const boost::system::error_code& ec) { self->on_handshake(ec); });
}

void ServeSession::stop(const std::string& why) {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  if (!opened_) {
    server_.strangers_log().log(dlog::Level::kWarn, label_ + ": closing before authentication: " + why);
  } else if (job_ && !unit_ended_) {
    dlog::warn(label_ + ": " + why + " before unit " + std::to_string(job_->index()) + " ended; cancelling it");
  } else {
    dlog::debug(label_ + ": closing: " + why);
  }
  if (job_ && !unit_ended_) job_->abandon();
  boost::system::error_code ec;
  stream_.lowest_layer().shutdown(tcp::socket::shutdown_both, ec);
  stream_.lowest_layer().close(ec);
  deadline_.cancel();
  heartbeat_.cancel();
  ticket_.release();
  for (Outgoing& out : writes_) {
    if (out.results > 0 && job_) job_->written(out.results);
    out.results = 0;
  }
  // The front frame may be under an async_write still: it goes with the session.
  if (writes_.size() > 1) writes_.erase(writes_.begin() + 1, writes_.end());
  server_.forget(shared_from_this());
}

void ServeSession::finish() {
  if (phase_ == Phase::kClosed || phase_ == Phase::kClosing) return;
  closing_after("the server stopped");
}

void ServeSession::closing_after(const std::string& why) {
  closing_reason_ = why;
  phase_ = Phase::kClosing;
  if (writes_.empty()) linger();
}

// Everything is written: end our side (FIN) and wait for the client to close its own. Closing
// at once could lose the end of what was sent: a socket closed with unread bytes (the
// client's last heartbeat) sends a reset, and the client's kernel then discards what it
// has received but not yet read.
void ServeSession::linger() {
  if (lingering_) return;
  lingering_ = true;
  boost::system::error_code ec;
  stream_.lowest_layer().shutdown(tcp::socket::shutdown_send, ec);
  arm_deadline(kLinger, closing_reason_ + " (the client did not close its end within 5 s)");
}

void ServeSession::fail(const std::string& why) {
  if (opened_) dlog::warn(label_ + ": " + why + "; dropping the connection");
  stop(why);
}

void ServeSession::arm_deadline(std::chrono::steady_clock::duration after, std::string what) {
  deadline_.expires_after(after);
  deadline_.async_wait([self = shared_from_this(), what](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || self->phase_ == Phase::kClosed) return;
    self->stop(what);
  });
}

// --- TLS ------------------------------------------------------------------------------------

std::string ServeSession::tls_failure(const boost::system::error_code& ec, bool established) {
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
  return tls::explain_server_failure(f, server_.tls_options());
}

void ServeSession::on_handshake(const boost::system::error_code& ec) {
  if (phase_ == Phase::kClosed) return;
  if (ec) return stop(tls_failure(ec, false));
  if (phase_ == Phase::kClosing) return stop(closing_reason_);  // the server finished meanwhile
  phase_ = Phase::kTls;
  read_next();
}

void ServeSession::read_next() {
  stream_.async_read_some(asio::buffer(read_buffer_),
                          [self = shared_from_this()](const boost::system::error_code& ec, std::size_t n) {
                            self->on_read(ec, n);
                          });
}

void ServeSession::on_read(const boost::system::error_code& ec, std::size_t n) {
  if (phase_ == Phase::kClosed) return;
  const bool eof = ec == asio::error::eof || ec == asio::ssl::error::stream_truncated ||
                   ec == asio::error::connection_reset;
  if (eof) return stop(phase_ == Phase::kClosing ? closing_reason_ : protocol_.end_of_input());
  if (ec == asio::error::operation_aborted) return;
  if (ec.category() == asio::error::get_ssl_category()) return fail(tls_failure(ec, true));
  if (ec) return stop("read failed: " + ec.message());
  // Closing: nothing the client says matters any more; read on (and drop) until it closes.
  if (phase_ == Phase::kTls && !protocol_.closed()) protocol_.feed(read_buffer_.data(), n);
  if (phase_ == Phase::kTls || phase_ == Phase::kClosing) read_next();
}

// --- Writing: one frame at a time, the rest queued behind it ----------------------------------

void ServeSession::write(Outgoing out) {
  if (phase_ == Phase::kClosed) {
    if (out.results > 0 && job_) job_->written(out.results);
    return;
  }
  writes_.push_back(std::move(out));
  if (writes_.size() == 1) do_write();
}

void ServeSession::do_write() {
  asio::async_write(stream_, asio::buffer(writes_.front().frame),
                    [self = shared_from_this()](const boost::system::error_code& ec, std::size_t) {
                      if (self->phase_ == Phase::kClosed) return;
                      if (ec) return self->stop("write failed: " + ec.message());
                      const std::size_t results = self->writes_.front().results;
                      self->writes_.pop_front();
                      if (results > 0 && self->job_) self->job_->written(results);
                      if (!self->writes_.empty()) return self->do_write();
                      if (self->phase_ == Phase::kClosing) self->linger();
                    });
}

void ServeSession::send(const Envelope& message) { write(Outgoing{control::encode(message), 0}); }

void ServeSession::deliver(std::string frame) {
  asio::post(server_.io(), [self = shared_from_this(), frame = std::move(frame)]() mutable {
    const std::size_t size = frame.size();
    self->write(Outgoing{std::move(frame), size});
  });
}

void ServeSession::ended(const UnitReport& report) {
  asio::post(server_.io(), [self = shared_from_this(), report] {
    self->unit_ended_ = true;
    if (self->phase_ == Phase::kClosed) return;
    Envelope e;
    control::UnitEnded* m = e.mutable_unit_ended();
    m->set_index(report.index);
    m->set_work(report.work);
    m->set_finished(report.finished);
    m->set_seconds(report.seconds);
    if (!report.finished) {
      control::Failure* f = m->mutable_failure();
      f->set_filter(report.filter);
      f->set_copy(report.copy);
      f->set_host(report.host);
      f->set_unit(report.index);
      f->set_stage(report.stage);
      f->set_message(report.message);
    }
    for (const UnitStreamCount& s : report.streams) {
      control::UnitStream* stream = m->add_streams();
      stream->set_stream(s.stream);
      stream->set_buffers(s.buffers);
      stream->set_bytes(s.bytes);
    }
    self->send(e);
    self->closing_after("unit " + std::to_string(report.index) + " ended");
  });
}

void ServeSession::stopping(std::uint32_t units_left, bool stopped) {
  Envelope e;
  e.mutable_stopping()->set_units_left(units_left);
  e.mutable_stopping()->set_stopped(stopped);
  send(e);
}

// --- ServeProtocol::Session -----------------------------------------------------------------

void ServeSession::opened(const std::string& client) {
  opened_ = true;
  ticket_.release();
  const SSL* ssl = stream_.native_handle();
  const SSL_CIPHER* cipher = SSL_get_current_cipher(ssl);
  std::string how = std::string(SSL_get_version(ssl)) + ", " + (cipher != nullptr ? SSL_CIPHER_get_name(cipher) : "?");
  how += server_.tls_options().certificates() ? ", certificate " + tls::peer_subject(stream_.native_handle())
                                              : ", token (PSK)";
  dlog::debug(label_ + ": authenticated (" + how + ")" + (client.empty() ? "" : ": " + client));
  Envelope r;
  r.mutable_auth_result()->set_ok(true);
  r.mutable_auth_result()->set_host("sluice serve");
  send(r);
  arm_deadline(kClientSilence, "no word from the client for 3 s");
  heartbeat();
}

void ServeSession::heard() {
  if (phase_ == Phase::kTls) arm_deadline(kClientSilence, "no word from the client for 3 s");
}

std::optional<std::string> ServeSession::submit(const std::string& work) {
  std::uint64_t ahead = 0;
  std::string refusal;
  job_ = server_.submit(shared_from_this(), work, &ahead, &refusal);
  if (!job_) return refusal;
  Envelope e;
  e.mutable_accepted()->set_index(job_->index());
  e.mutable_accepted()->set_ahead(static_cast<std::uint32_t>(ahead));
  send(e);
  return std::nullopt;
}

void ServeSession::stop() { server_.stop_requested(shared_from_this()); }

void ServeSession::close(const std::string& why, bool after_reply) {
  if (!after_reply) return fail("protocol error: " + why);
  closing_after(why);
}

void ServeSession::heartbeat() {
  if (phase_ != Phase::kTls) return;  // closing: nothing more than what is queued
  Envelope h;
  h.mutable_heartbeat()->set_sequence(++heartbeat_sequence_);
  send(h);
  heartbeat_.expires_after(kHeartbeatEvery);
  heartbeat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->heartbeat();
  });
}

}  // namespace sluice::console
