#include "daemons/host_daemon.h"

#include <signal.h>

#include "daemons/log.h"
#include "sluice/error.h"

namespace asio = boost::asio;
using asio::ip::tcp;
namespace dlog = sluice::daemon;

namespace sluice::sluiced {

namespace {

tcp::endpoint resolve_listen(asio::io_context& io, const std::string& listen) {
  const auto colon = listen.rfind(':');
  if (colon == std::string::npos || colon + 1 == listen.size()) {
    throw sluice::Error("--listen '" + listen + "' is not ADDR:PORT, e.g. 127.0.0.1:7700");
  }
  std::string host = listen.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') host = host.substr(1, host.size() - 2);
  tcp::resolver resolver(io);
  boost::system::error_code ec;
  auto results = resolver.resolve(host, listen.substr(colon + 1), ec);
  if (ec || results.empty()) {
    throw sluice::Error("--listen '" + listen + "': cannot resolve: " + ec.message());
  }
  return results.begin()->endpoint();
}

}  // namespace

HostDaemon::HostDaemon(const std::string& listen, Config config)
    : stop_signals_(io_, SIGINT, SIGTERM),
      child_signals_(io_, SIGCHLD),
      acceptor_(io_),
      config_(std::move(config)) {
  const tcp::endpoint endpoint = resolve_listen(io_, listen);
  boost::system::error_code ec;
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) throw sluice::Error("cannot listen on " + listen + ": " + ec.message());
  const auto bound = acceptor_.local_endpoint();
  dlog::info("listening on " + bound.address().to_string() + ":" + std::to_string(bound.port()) +
             "; app daemon: " + config_.appd_path);
  do_await_stop();
  do_await_child();
  do_accept();
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
    if (!acceptor_.is_open()) return;
    if (!ec) {
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      socket.set_option(asio::socket_base::keep_alive(true), ignored);
      auto session = std::make_shared<ConsoleSession>(std::move(socket), *this, next_id_++);
      sessions_.insert(session);
      session->start();
    } else if (ec != asio::error::operation_aborted) {
      dlog::warn("accept failed: " + ec.message());
    }
    do_accept();
  });
}

void HostDaemon::do_await_stop() {
  stop_signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    dlog::info("received " + dlog::signal_name(sig) + "; killing every app daemon and exiting");
    boost::system::error_code ignored;
    acceptor_.close(ignored);
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
