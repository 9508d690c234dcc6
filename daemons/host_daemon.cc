#include "daemons/host_daemon.h"

#include "http/listen_address.h"
#include "http/metrics_text.h"

#include <signal.h>
#include <unistd.h>

#include <cstdio>

#include "control/own_pause.h"
#include "daemons/console_session.h"
#include "daemons/log.h"
#include "sluice/error.h"
#include "text/address.h"

namespace asio = boost::asio;
using asio::ip::tcp;
namespace dlog = sluice::daemon;

namespace sluice::sluiced {

namespace {

tcp::endpoint resolve_listen(const std::string& listen) {
  asio::io_context io;
  text::AddressRules rules;
  rules.any_port = true;  // 0: any free port (written to --ready-file)
  const text::HostPort where = text::parse_host_port_or_throw(listen, rules, "--listen");
  tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(where.host, std::to_string(where.port), ec);
  if (ec || results.empty()) {
    throw sluice::Error("--listen '" + listen + "': cannot resolve: " + ec.message());
  }
  return results.begin()->endpoint();
}

}  // namespace

HostDaemon::HostDaemon(const std::string& listen, Config config)
    : config_(std::move(config)),
      server_(resolve_listen(listen), listen, tls::TlsContext::create(tls::TlsContext::Role::kServer, config_.tls)),
      stop_signals_(server_.io(), SIGINT, SIGTERM),
      child_signals_(server_.io(), SIGCHLD),
      stop_timer_(server_.io()),
      pause_timer_(server_.io()) {
  // The metrics port first: a daemon that cannot have it stops before saying it listens.
  if (!config_.metrics_listen.empty()) {
    metrics_ = std::make_unique<http::HttpServer>(
        server_.io(),
        http::parse_listen_address(config_.metrics_listen, "--metrics", config_.metrics_public, "--metrics-public"),
        [this](const http::Request& request) {
          http::Response r;
          if (request.path != "/metrics") {
            r.status = 404;
            r.body = "sluiced serves /metrics only\n";
            return r;
          }
          r.content_type = http::MetricsText::kContentType;
          r.body = metrics_text();
          return r;
        },
        "--metrics");
    metrics_->start();
  }
  do_await_stop();
  do_await_child();
  do_watch_own_pause();
  server_.start([this](tcp::socket socket, std::uint64_t id, control::Admission::Ticket ticket) {
    return std::make_shared<ConsoleSession>(std::move(socket), *this, id, std::move(ticket));
  });
}

std::string HostDaemon::bound_address() const { return server_.bound_address(); }

std::string HostDaemon::metrics_text() const {
  http::MetricsText m;
  std::uint64_t authenticated = 0;
  const auto& sessions = server_.sessions();
  for (const auto& s : sessions) authenticated += s->authenticated() ? 1 : 0;
  m.family("sluiced_sessions", "gauge", "Console connections open now, by whether they have authenticated.");
  m.sample("sluiced_sessions", {{"state", "authenticating"}}, static_cast<std::uint64_t>(sessions.size() - authenticated));
  m.sample("sluiced_sessions", {{"state", "authenticated"}}, authenticated);
  m.family("sluiced_sessions_total", "counter", "Console connections admitted since sluiced started.");
  m.sample("sluiced_sessions_total", {}, server_.admitted());
  m.family("sluiced_app_daemons", "gauge", "App daemons (sluice-appd) running now.");
  m.sample("sluiced_app_daemons", {}, static_cast<std::uint64_t>(apps_.running()));
  m.family("sluiced_app_daemons_started_total", "counter", "App daemons started since sluiced started.");
  m.sample("sluiced_app_daemons_started_total", {}, apps_.started());
  m.family("sluiced_app_daemons_ended_total", "counter", "App daemons that ended (and were reaped).");
  m.sample("sluiced_app_daemons_ended_total", {}, apps_.ended());
  m.family("sluiced_log_lines_dropped_total", "counter",
           "sluiced's own log lines not written: its stderr took nothing for a while (a stuck log reader) "
           "or refused them (a full disk).");
  m.sample("sluiced_log_lines_dropped_total", {}, logging::lines_dropped());
  m.family("sluiced_refusals_total", "counter", "Connections and requests turned away, by reason.");
  for (const auto& [reason, count] : server_.refusals()) m.sample("sluiced_refusals_total", {{"reason", reason}}, count);
  return m.str();
}

void HostDaemon::run() {
  // Said here, not when the ports open: a daemon whose start fails after (its --ready-file)
  // never says it listens.
  dlog::info("listening on " + server_.bound_address() + "; " + server_.security() + "; app daemon: " +
             config_.appd_path + "; data ports: " + config_.data_ports.text());
  if (metrics_) dlog::info("metrics at http://" + http::endpoint_text(metrics_->local_endpoint()) + "/metrics");
  if (::geteuid() == 0) {
    dlog::warn("sluiced runs as root: every filter a console sends runs as root, so whoever holds the token "
               "(or a certificate --ca accepts) has root on this machine; run sluiced as an unprivileged user "
               "of its own (docs/operations.md, \"Running it as a service\")");
  }
  server_.run();
}

void HostDaemon::do_await_stop() {
  stop_signals_.add(SIGHUP);  // a closed terminal: as SIGTERM (it killed sluiced without a word)
  // What the console's Slurm launcher sends to a step's srun, which passes it on: srun
  // answers SIGTERM itself by killing the step (SIGKILL, the step CANCELLED), so a step
  // that ends after a good run would read as cancelled in Slurm's logs.
  stop_signals_.add(SIGUSR2);
  stop_signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    const std::string signal = dlog::signal_name(sig);
    dlog::info("received " + signal + "; killing every app daemon and exiting");
    server_.close();
    if (metrics_) metrics_->stop();  // a scrape now finds nothing, as the control port
    // Said before the app daemons die, so that the console names this as the reason, not
    // the killed app daemon or the lost connection that follow.
    const std::string why = "sluiced is shutting down (it received " + signal + ") and stops its app daemons";
    const auto sessions = server_.sessions();  // a session that stops leaves the set
    for (const auto& s : sessions) {
      if (auto console = std::dynamic_pointer_cast<ConsoleSession>(s)) console->daemon_stopping(why);
    }
    apps_.kill_all();
    finish_stop(std::chrono::steady_clock::now() + std::chrono::seconds(1));
  });
}

void HostDaemon::finish_stop(std::chrono::steady_clock::time_point deadline) {
  if (!server_.sessions().empty() && std::chrono::steady_clock::now() < deadline) {
    stop_timer_.expires_after(std::chrono::milliseconds(10));
    stop_timer_.async_wait([this, deadline](boost::system::error_code) { finish_stop(deadline); });
    return;
  }
  server_.stop_all("the daemon is shutting down");
  apps_.wait_all();
  server_.io().stop();
}

void HostDaemon::do_watch_own_pause() {
  pause_timer_.expires_after(std::chrono::milliseconds(500));
  pause_timer_.async_wait([this](boost::system::error_code ec) {
    if (ec) return;
    if (const auto pause = control::own_pause_since(pause_timer_.expiry()); pause.count() > 0) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(pause).count());
      dlog::warn(std::string("sluiced did not run for ") + seconds +
                 " s (stopped, by SIGSTOP or Ctrl-Z, or starved of CPU): a console gives a host daemon up after 2.5 s "
                 "without a word, and an app daemon exits after 4 s without one from sluiced");
    }
    do_watch_own_pause();
  });
}

void HostDaemon::do_await_child() {
  child_signals_.async_wait([this](boost::system::error_code ec, int) {
    if (ec) return;
    apps_.reap();
    do_await_child();
  });
}

}  // namespace sluice::sluiced
