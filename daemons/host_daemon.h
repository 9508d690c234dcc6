// HostDaemon: sluiced's server. It owns a control::TlsServer (control/tls_server.h: the
// io_context, the listening socket, the TLS context, the caps on connections that have not
// authenticated, the console sessions), the signal sets, the table of the app daemons the
// sessions launched, and the --metrics HTTP server.
//
// Single-threaded: everything runs on the io_context's thread, in run().
#ifndef SLUICE_DAEMONS_HOST_DAEMON_H_
#define SLUICE_DAEMONS_HOST_DAEMON_H_

#include <chrono>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "control/tls_server.h"
#include "daemons/app_supervisor.h"
#include "http/http_server.h"
#include "text/port_range.h"
#include "tls/tls.h"

namespace sluice::sluiced {

struct Config {
  tls::TlsOptions tls;  // the token (TLS-PSK), or --cert/--key/--ca
  std::string appd_path;    // the sluice-appd executable
  // --metrics ADDR:PORT: serve /metrics (Prometheus text) there; "" = no. Loopback
  // unless metrics_public (--metrics-public).
  std::string metrics_listen;
  bool metrics_public = false;
  // --data-ports LO-HI: the ports its app daemons' data planes listen on (a firewall's
  // opening). Default: any free port.
  text::PortRange data_ports;
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

  // Says "listening on ADDR:PORT" in the log, then runs until SIGINT/SIGTERM/SIGHUP, which
  // closes the control and --metrics ports at once, tells each console why (a DaemonError),
  // kills every app daemon, and gives the consoles up to 1 s to read it before closing. A handler that
  // throws (it should not) is logged, and the daemon goes on serving.
  void run();

  // For the sessions.
  boost::asio::io_context& io() { return server_.io(); }
  control::TlsServer& server() { return server_; }
  const Config& config() const { return config_; }
  AppTable& apps() { return apps_; }
  // What /metrics says: sessions, app daemons, refusals by reason.
  std::string metrics_text() const;

 private:
  void do_await_stop();
  void do_await_child();
  // Every 500 ms: a tick that came late says sluiced itself did not run (stopped, starved),
  // and the log says so before what its peers did meanwhile is read.
  void do_watch_own_pause();
  // Once every console session has closed (or `deadline` passed): the rest of the stop.
  void finish_stop(std::chrono::steady_clock::time_point deadline);

  Config config_;
  control::TlsServer server_;  // before what runs on its io_context
  boost::asio::signal_set stop_signals_;
  boost::asio::signal_set child_signals_;
  boost::asio::steady_timer stop_timer_;  // finish_stop's next look
  boost::asio::steady_timer pause_timer_;  // do_watch_own_pause's tick
  AppTable apps_;
  std::unique_ptr<http::HttpServer> metrics_;  // --metrics; last: stops first
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_HOST_DAEMON_H_
