#include "daemons/host_daemon.h"

#include "http/listen_address.h"
#include "http/metrics_text.h"

#include <signal.h>

#include "daemons/log.h"
#include "sluice/error.h"
#include "text/address.h"

namespace asio = boost::asio;
using asio::ip::tcp;
namespace dlog = sluice::daemon;

namespace sluice::sluiced {

namespace {

tcp::endpoint resolve_listen(asio::io_context& io, const std::string& listen) {
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

HostDaemon::HostDaemon(const std::string& listen, Config config)
    : stop_signals_(io_, SIGINT, SIGTERM),
      child_signals_(io_, SIGCHLD),
      acceptor_(io_),
      config_(std::move(config)),
      tls_(tls::TlsContext::create(tls::TlsContext::Role::kServer, config_.tls)),
      ssl_(shared(tls_)),
      accept_pause_(io_) {
  const tcp::endpoint endpoint = resolve_listen(io_, listen);
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw sluice::Error("cannot listen on " + listen + ": " + ec.message());
  const auto bound = acceptor_.local_endpoint();
  dlog::info("listening on " + bound.address().to_string() + ":" + std::to_string(bound.port()) +
             "; TLS 1.3 with " + config_.tls.mode_name() + "; app daemon: " + config_.appd_path);
  if (const std::string problem = tls_->certificate_problem(); !problem.empty()) dlog::warn(problem);
  for (const char* reason : kRefusalReasons) refusals_[reason] = 0;
  if (!config_.metrics_listen.empty()) {
    metrics_ = std::make_unique<http::HttpServer>(
        io_,
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
    dlog::info("metrics at http://" + http::endpoint_text(metrics_->local_endpoint()) + "/metrics");
  }
  do_await_stop();
  do_await_child();
  do_accept();
}

std::string HostDaemon::bound_address() const {
  boost::system::error_code ec;
  const auto bound = acceptor_.local_endpoint(ec);
  if (ec) return "";
  const std::string ip = bound.address().to_string();
  return (bound.address().is_v6() ? "[" + ip + "]" : ip) + ":" + std::to_string(bound.port());
}

std::string HostDaemon::metrics_text() const {
  http::MetricsText m;
  std::uint64_t authenticated = 0;
  for (const auto& s : sessions_) authenticated += s->authenticated() ? 1 : 0;
  m.family("sluiced_sessions", "gauge", "Console connections open now, by whether they have authenticated.");
  m.sample("sluiced_sessions", {{"state", "authenticating"}}, static_cast<std::uint64_t>(sessions_.size() - authenticated));
  m.sample("sluiced_sessions", {{"state", "authenticated"}}, authenticated);
  m.family("sluiced_sessions_total", "counter", "Console connections admitted since sluiced started.");
  m.sample("sluiced_sessions_total", {}, next_id_ - 1);
  m.family("sluiced_app_daemons", "gauge", "App daemons (sluice-appd) running now.");
  m.sample("sluiced_app_daemons", {}, static_cast<std::uint64_t>(apps_.running()));
  m.family("sluiced_app_daemons_started_total", "counter", "App daemons started since sluiced started.");
  m.sample("sluiced_app_daemons_started_total", {}, apps_.started());
  m.family("sluiced_app_daemons_ended_total", "counter", "App daemons that ended (and were reaped).");
  m.sample("sluiced_app_daemons_ended_total", {}, apps_.ended());
  m.family("sluiced_refusals_total", "counter", "Connections and requests turned away, by reason.");
  for (const auto& [reason, count] : refusals_) m.sample("sluiced_refusals_total", {{"reason", reason}}, count);
  return m.str();
}

void HostDaemon::run() {
  for (;;) {
    try {
      io_.run();
      return;
    } catch (const std::exception& e) {
      dlog::error(std::string("unexpected error, still serving: ") + e.what());
    }
  }
}

void HostDaemon::do_accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open() || ec == asio::error::operation_aborted) return;
    if (ec) return on_accept_error(ec);
    accept_backoff_ = std::chrono::milliseconds(0);
    admit(std::move(socket));
    do_accept();
  });
}

void HostDaemon::on_accept_error(const boost::system::error_code& ec) {
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

void HostDaemon::admit(tcp::socket socket) {
  boost::system::error_code ec;
  const auto peer = socket.remote_endpoint(ec);
  if (ec) return;  // already gone
  const std::string address = peer.address().to_string();
  std::string why;
  std::optional<Admission::Ticket> ticket = admission_.admit(address, &why);
  if (!ticket) {
    count_refusal(admission_.pending() >= Admission::kTotal ? "too_many_pending" : "too_many_from_address");
    capped_log_.log(dlog::Level::kWarn, "refused a connection from " + address + ":" + std::to_string(peer.port()) +
                                            ": " + why + "; " + std::to_string(admission_.refused()) + " refused so far");
    socket.close(ec);
    return;
  }
  socket.set_option(tcp::no_delay(true), ec);
  socket.set_option(asio::socket_base::keep_alive(true), ec);
  auto session = std::make_shared<ConsoleSession>(std::move(socket), *this, next_id_++, std::move(*ticket));
  sessions_.insert(session);
  session->start();
}

void HostDaemon::do_await_stop() {
  stop_signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    dlog::info("received " + dlog::signal_name(sig) + "; killing every app daemon and exiting");
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    accept_pause_.cancel();
    apps_.kill_all();
    auto sessions = sessions_;
    for (auto& s : sessions) s->stop("the daemon is shutting down");
    apps_.wait_all();
    io_.stop();
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
