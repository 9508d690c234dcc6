// HostDaemon: sluiced's server, after the Asio examples (http/server). It owns the
// io_context, the listening socket, the TLS context, the signal sets, the console
// sessions and the table of the app daemons they launched.
//
// The accept loop holds up under a flood: connections that have not authenticated are
// capped in total and per source address (admission.h); when the process runs out of
// descriptors or memory (EMFILE, ENFILE, ENOBUFS, ENOMEM; any accept error that is not one
// connection's own) it stops accepting for 100 ms, doubling up to 1 s while that lasts,
// instead of spinning; and what strangers can cause is logged at a bounded rate (log.h's
// RateLimited).
//
// Single-threaded: everything runs on the io_context's thread, in run().
#ifndef SLUICE_DAEMONS_HOST_DAEMON_H_
#define SLUICE_DAEMONS_HOST_DAEMON_H_

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "tls/tls.h"
#include "daemons/admission.h"
#include "daemons/app_supervisor.h"
#include "daemons/console_session.h"
#include "daemons/log.h"
#include "http/http_server.h"

namespace sluice::sluiced {

struct Config {
  tls::TlsOptions tls;  // the token (TLS-PSK), or --cert/--key/--ca
  std::string appd_path;    // the sluice-appd executable
  // --metrics ADDR:PORT: serve /metrics (Prometheus text) there; "" = no. Loopback
  // unless metrics_public (--metrics-public).
  std::string metrics_listen;
  bool metrics_public = false;
};

// Why sluiced turned a connection away, as /metrics labels them (sluiced_refusals_total).
inline constexpr const char* kRefusalReasons[] = {
    "too_many_pending",       // Admission: the cap on connections authenticating at once
    "too_many_from_address",  // Admission: the cap per source address
    "not_tls",                // the first byte was not a TLS handshake (an old console, a stranger)
    "tls_handshake",          // the handshake failed: wrong token, untrusted certificate...
    "auth_timeout",           // no hello within 5 s
    "hello_refused",          // the hello was refused (another protocol version...)
    "request_refused",        // a request after the hello was refused (a second launch...)
    "protocol_error",         // the console broke the protocol after authenticating
};

class HostDaemon {
 public:
  // Resolves `listen` ("ADDR:PORT"), sets up TLS, binds and listens. Throws sluice::Error
  // when it cannot (a certificate that cannot be used, an address in use...).
  HostDaemon(const std::string& listen, Config config);
  HostDaemon(const HostDaemon&) = delete;
  HostDaemon& operator=(const HostDaemon&) = delete;

  // The address it listens on, "ADDR:PORT" (the port chosen when --listen said 0).
  std::string bound_address() const;

  // Runs until SIGINT/SIGTERM, which kills every app daemon. A handler that throws (it
  // should not) is logged, and the daemon goes on serving.
  void run();

  // For the sessions.
  boost::asio::io_context& io() { return io_; }
  const Config& config() const { return config_; }
  AppTable& apps() { return apps_; }
  void forget(const std::shared_ptr<ConsoleSession>& session) { sessions_.erase(session); }
  boost::asio::ssl::context& ssl() { return ssl_; }
  // Where the sessions log what happens before a console is authenticated.
  daemon::RateLimited& strangers_log() { return strangers_log_; }
  // Counts a refusal; `reason` is one of kRefusalReasons.
  void count_refusal(const std::string& reason) { ++refusals_[reason]; }
  // What /metrics says: sessions, app daemons, refusals by reason.
  std::string metrics_text() const;

 private:
  void do_accept();
  void on_accept_error(const boost::system::error_code& ec);
  void admit(boost::asio::ip::tcp::socket socket);
  void do_await_stop();
  void do_await_child();

  Admission admission_;  // before io_: outlives the sessions its handlers hold
  boost::asio::io_context io_;
  boost::asio::signal_set stop_signals_;
  boost::asio::signal_set child_signals_;
  boost::asio::ip::tcp::acceptor acceptor_;
  Config config_;
  std::shared_ptr<tls::TlsContext> tls_;
  boost::asio::ssl::context ssl_;  // over tls_'s SSL_CTX (a reference of its own)
  boost::asio::steady_timer accept_pause_;
  std::chrono::milliseconds accept_backoff_{0};
  daemon::RateLimited accept_log_{1.0};    // failed accepts: at most one line a second
  daemon::RateLimited capped_log_{1.0, 5.0};      // connections over the caps: 5, then 1/s
  daemon::RateLimited strangers_log_{5.0, 20.0};  // unauthenticated connections: 20, then 5/s
  std::set<std::shared_ptr<ConsoleSession>> sessions_;
  AppTable apps_;
  std::uint64_t next_id_ = 1;
  std::map<std::string, std::uint64_t> refusals_;  // reason -> count
  std::unique_ptr<http::HttpServer> metrics_;      // --metrics; last: stops first
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_HOST_DAEMON_H_
