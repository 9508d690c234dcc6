#include "control/tls_server.h"

#include "control/tls_session.h"
#include "http/listen_address.h"
#include "sluice/error.h"

namespace asio = boost::asio;
using asio::ip::tcp;
namespace dlog = sluice::daemon;

namespace sluice::control {

namespace {

// Asio's context frees its SSL_CTX: give it a reference of its own.
SSL_CTX* shared(const std::shared_ptr<tls::TlsContext>& tls) {
  SSL_CTX_up_ref(tls->native());
  return tls->native();
}

// Out of descriptors or memory: accepting again at once would fail again at once.
bool exhausted(const boost::system::error_code& ec) {
  return ec == asio::error::no_descriptors || ec == boost::system::errc::too_many_files_open_in_system ||
         ec == asio::error::no_buffer_space || ec == asio::error::no_memory;
}

// Errors of one connection (it went away while queued): the next accept may well succeed.
bool one_connection(const boost::system::error_code& ec) {
  return ec == asio::error::connection_aborted || ec == asio::error::connection_reset ||
         ec == asio::error::interrupted || ec == asio::error::try_again || ec == boost::system::errc::protocol_error;
}

constexpr std::chrono::milliseconds kFirstPause{100};
constexpr std::chrono::milliseconds kLongestPause{1000};

}  // namespace

TlsServer::TlsServer(const tcp::endpoint& listen, const std::string& listen_text, std::shared_ptr<tls::TlsContext> tls,
                     tls::ServerRoles roles)
    : acceptor_(io_), tls_(std::move(tls)), roles_(std::move(roles)), ssl_(shared(tls_)), accept_pause_(io_) {
  boost::system::error_code ec;
  acceptor_.open(listen.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(listen, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw Error("cannot listen on " + listen_text + ": " + ec.message());
  if (const std::string problem = tls_->certificate_problem(); !problem.empty()) dlog::warn(problem);
  for (const char* reason : kRefusalReasons) refusals_[reason] = 0;
}

void TlsServer::start(MakeSession make, Forgotten forgotten) {
  make_ = std::move(make);
  forgotten_ = std::move(forgotten);
  do_accept();
}

void TlsServer::run() {
  for (;;) {
    try {
      io_.run();
      return;
    } catch (const std::exception& e) {
      dlog::error(std::string("unexpected error, still serving: ") + e.what());
    }
  }
}

void TlsServer::close() {
  boost::system::error_code ignored;
  acceptor_.close(ignored);
  accept_pause_.cancel();
}

void TlsServer::stop_all(const std::string& why) {
  auto sessions = sessions_;  // stop() forgets the session
  for (const auto& s : sessions) s->stop(why);
}

std::string TlsServer::bound_address() const {
  boost::system::error_code ec;
  const auto bound = acceptor_.local_endpoint(ec);
  return ec ? std::string() : http::endpoint_text(bound);
}

std::string TlsServer::security() const { return "TLS 1.3 with " + tls_->options().mode_name(); }

void TlsServer::forget(const std::shared_ptr<TlsSession>& session) {
  sessions_.erase(session);
  if (forgotten_) forgotten_(session);
}

void TlsServer::do_accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open() || ec == asio::error::operation_aborted) return;
    if (ec) return on_accept_error(ec);
    accept_backoff_ = std::chrono::milliseconds(0);
    admit(std::move(socket));
    do_accept();
  });
}

void TlsServer::on_accept_error(const boost::system::error_code& ec) {
  if (one_connection(ec)) {
    accept_log_.log(dlog::Level::kWarn, "accept failed: " + ec.message());
    return do_accept();
  }
  // Anything else (above all: out of descriptors) would fail again at once, and the
  // connection stays in the listen queue: retrying now would spin. Pause instead.
  accept_backoff_ = accept_backoff_.count() == 0 ? kFirstPause : std::min(accept_backoff_ * 2, kLongestPause);
  accept_log_.log(dlog::Level::kWarn,
                  "accept failed: " + ec.message() + "; not accepting for " + std::to_string(accept_backoff_.count()) +
                      " ms" + (exhausted(ec) ? " (if this lasts, raise the descriptor limit: ulimit -n, LimitNOFILE=)" : ""));
  accept_pause_.expires_after(accept_backoff_);
  accept_pause_.async_wait([this](boost::system::error_code wait_ec) {
    if (!wait_ec && acceptor_.is_open()) do_accept();
  });
}

bool TlsServer::make_room(const std::string& address, bool per_address, const std::string& full) {
  const auto now = std::chrono::steady_clock::now();
  std::shared_ptr<TlsSession> idle, stalled;  // the oldest of each
  auto keep_oldest = [](std::shared_ptr<TlsSession>& oldest, const std::shared_ptr<TlsSession>& s) {
    if (!oldest || s->admitted_at() < oldest->admitted_at()) oldest = s;
  };
  for (const auto& s : sessions_) {
    if (!s->authenticating() || (per_address && s->peer_address() != address)) continue;
    // Younger than kStalledAfter, a connection that has sent nothing may be a client whose
    // first bytes this busy server has not read yet (a burst of 50 `sluice submit`: an outside
    // review saw one closed at 0 ms): the newcomer is turned away instead, and tries again.
    if (now - s->admitted_at() <= kStalledAfter) continue;
    if (s->sent_nothing()) {
      keep_oldest(idle, s);
    } else {
      keep_oldest(stalled, s);
    }
  }
  std::shared_ptr<TlsSession> victim = idle ? idle : stalled;
  if (!victim) return false;
  count_refusal(per_address ? "too_many_from_address" : "too_many_pending");
  const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now - victim->admitted_at()).count();
  const std::string why = "closed to make room for a newer connection from " + address + " (" + full + "; " +
                          (victim == idle ? "it had sent nothing in " : "it had been authenticating for ") +
                          std::to_string(ms) + " ms)";
  capped_log_.log(dlog::Level::kWarn, victim->label() + ": " + why);
  victim->evict(why);
  return true;
}

void TlsServer::admit(tcp::socket socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;  // already gone
  const std::string address = peer.address().to_string();
  std::string why;
  std::optional<Admission::Ticket> ticket = admission_.admit(address, &why);
  if (!ticket && make_room(address, admission_.pending() < Admission::kTotal, why)) {
    ticket = admission_.admit(address, &why);
  }
  if (!ticket) {
    count_refusal(admission_.pending() >= Admission::kTotal ? "too_many_pending" : "too_many_from_address");
    capped_log_.log(dlog::Level::kWarn, "refused a connection from " + address + ":" + std::to_string(peer.port()) +
                                            ": " + why + "; " + std::to_string(admission_.refused()) + " refused so far");
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  auto session = make_(std::move(socket), next_id_++, std::move(*ticket));
  sessions_.insert(session);
  session->start();
}

}  // namespace sluice::control
