// TlsServer: what sluiced (daemons/host_daemon.h) and `sluice serve`
// (console/serve_server.h) share as control servers, after the Asio examples (http/server):
// the io_context everything of the server runs on, the listening socket, the TLS context
// (tls/tls.h: the token's PSK, or certificates), the caps on connections that have not
// authenticated (admission.h) and the sessions (tls_session.h). The server that owns it
// adds its signal sets, timers and what its sessions do.
//
// The accept loop holds up under a flood: connections that have not authenticated are
// capped in total and per source address. When a cap is full, room is made by closing,
// among those older than 100 ms (kStalledAfter: a console or client finishes its handshake
// in a few milliseconds, and sends its first bytes at once), the oldest that has sent nothing
// (from the same address, when its share is what is full), else the oldest still in its
// handshake; only when every one is younger is the new connection closed (its client tries
// again: console/host_client.h, open_control). So neither idle sockets nor stalled handshakes from any local user keep
// consoles out (they all come from 127.0.0.1 on loopback): that takes renewing more than 80
// stalled handshakes a second from that address, a flood. (It was 1 s, and 9 a second did.) When the process runs out of descriptors or
// memory (EMFILE, ENFILE, ENOBUFS, ENOMEM; any accept error that is not one connection's
// own) it stops accepting for 100 ms, doubling up to 1 s while that lasts, instead of
// spinning; and what strangers can cause is logged at a bounded rate (daemons/log.h's
// RateLimited).
//
// Single-threaded: everything runs on the io_context's thread, in run(); construct and
// start() before it.
#ifndef SLUICE_CONTROL_TLS_SERVER_H_
#define SLUICE_CONTROL_TLS_SERVER_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "control/admission.h"
#include "daemons/log.h"
#include "tls/tls.h"
#include "tls/tls_errors.h"

namespace sluice::control {

class TlsSession;

// Why a server turned a connection away, as sluiced's /metrics labels them
// (sluiced_refusals_total): counted by TlsServer and its sessions.
inline constexpr const char* kRefusalReasons[] = {
    "too_many_pending",       // Admission: the cap on connections authenticating at once
    "too_many_from_address",  // Admission: the cap per source address
    "not_tls",                // the first byte was not a TLS handshake (an old console, a stranger)
    "tls_handshake",          // the handshake failed: wrong token, untrusted certificate...
    "auth_timeout",           // no hello within 5 s
    "hello_refused",          // the hello was refused (another protocol version...)
    "request_refused",        // a request after the hello was refused (a second launch...)
    "protocol_error",         // the peer broke the protocol after authenticating
};

class TlsServer {
 public:
  // A connection that has been in its handshake (or hello) this long may be closed to make
  // room for a new one when the caps are full.
  static constexpr auto kStalledAfter = std::chrono::milliseconds(100);

  // Makes the session for an admitted connection, numbered `id` (1, 2, ...) and holding
  // `ticket` until it has authenticated.
  using MakeSession =
      std::function<std::shared_ptr<TlsSession>(boost::asio::ip::tcp::socket, std::uint64_t id, Admission::Ticket)>;
  // Called after a session ended and was let go of.
  using Forgotten = std::function<void(const std::shared_ptr<TlsSession>&)>;

  // Binds `listen` and listens, with `tls` (a server context). Throws sluice::Error naming
  // `listen_text` (the address as the user gave it) when it cannot. `roles` name the server
  // and its peers in what the log says of a failed handshake.
  TlsServer(const boost::asio::ip::tcp::endpoint& listen, const std::string& listen_text,
            std::shared_ptr<tls::TlsContext> tls, tls::ServerRoles roles = tls::kDaemonRoles);
  TlsServer(const TlsServer&) = delete;
  TlsServer& operator=(const TlsServer&) = delete;

  // Starts accepting: each connection admitted becomes make()'s session, started; when it
  // ends, `forgotten` (may be empty) hears of it.
  void start(MakeSession make, Forgotten forgotten = {});
  // Runs the io_context until it stops. A handler that throws (it should not) is logged,
  // and the server goes on serving.
  void run();
  // Stops accepting (the port closes); the sessions go on.
  void close();
  // Stops every session now, with `why`.
  void stop_all(const std::string& why);

  // The address it listens on, "ADDR:PORT" ("[::1]:7700"; the port chosen when it was 0),
  // or "" once closed.
  std::string bound_address() const;
  // "TLS 1.3 with token (PSK)", for the first log line.
  std::string security() const;

  boost::asio::io_context& io() { return io_; }
  const std::set<std::shared_ptr<TlsSession>>& sessions() const { return sessions_; }
  // Connections admitted so far.
  std::uint64_t admitted() const { return next_id_ - 1; }
  // Refusals by reason (every one of kRefusalReasons, 0 included).
  const std::map<std::string, std::uint64_t>& refusals() const { return refusals_; }

  // For the sessions.
  boost::asio::ssl::context& ssl() { return ssl_; }
  const tls::TlsOptions& tls_options() const { return tls_->options(); }
  const tls::ServerRoles& roles() const { return roles_; }
  // Where the sessions log what happens before their peer is authenticated.
  daemon::RateLimited& strangers_log() { return strangers_log_; }
  // Counts a refusal; `reason` is one of kRefusalReasons.
  void count_refusal(const std::string& reason) { ++refusals_[reason]; }
  // The session ended: lets go of it.
  void forget(const std::shared_ptr<TlsSession>& session);

 private:
  void do_accept();
  void on_accept_error(const boost::system::error_code& ec);
  void admit(boost::asio::ip::tcp::socket socket);
  // Closes the connection that makes room for a new one from `address` (cap: `full`), if
  // one may go (see above); false when none.
  bool make_room(const std::string& address, bool per_address, const std::string& full);

  Admission admission_;  // before io_: outlives the sessions its handlers hold
  boost::asio::io_context io_;
  boost::asio::ip::tcp::acceptor acceptor_;
  std::shared_ptr<tls::TlsContext> tls_;
  tls::ServerRoles roles_;
  boost::asio::ssl::context ssl_;  // over tls_'s SSL_CTX (a reference of its own)
  boost::asio::steady_timer accept_pause_;
  std::chrono::milliseconds accept_backoff_{0};
  daemon::RateLimited accept_log_{1.0};           // failed accepts: at most one line a second
  daemon::RateLimited capped_log_{1.0, 5.0};      // connections over the caps: 5, then 1/s
  daemon::RateLimited strangers_log_{5.0, 20.0};  // unauthenticated connections: 20, then 5/s
  MakeSession make_;
  Forgotten forgotten_;
  std::set<std::shared_ptr<TlsSession>> sessions_;
  std::uint64_t next_id_ = 1;
  std::map<std::string, std::uint64_t> refusals_;  // reason -> count
};

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_TLS_SERVER_H_
