#include "net/listener.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <random>

#include "sluice/error.h"
#include "text/address.h"

namespace sluice::net {

namespace asio = boost::asio;
using asio::ip::tcp;

namespace {

constexpr auto kFirstPause = std::chrono::milliseconds(10);
constexpr auto kLongestPause = std::chrono::milliseconds(1000);

// Errors that last until something else frees resources: pause before the next accept.
bool resource_exhausted(const boost::system::error_code& ec) {
  const int e = ec.value();
  return ec.category() == boost::system::system_category() &&
         (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM);
}

}  // namespace

std::string format_endpoint(const tcp::endpoint& endpoint) {
  return text::host_port_text(endpoint.address().to_string(), endpoint.port());
}

Listener::Listener(asio::io_context& io, const std::string& listen, RateLimitedLog& log, const text::PortRange& ports)
    : acceptor_(io), pause_(io), log_(log) {
  // An IP address (the data plane does not resolve names to listen on); port 0: any free port.
  text::AddressRules rules;
  rules.names = false;
  rules.any_port = true;
  const text::HostPort where = text::parse_host_port_or_throw(listen, rules, "data plane: listen address");
  const asio::ip::address address = asio::ip::make_address(where.host);
  boost::system::error_code ec;
  if (ports.any()) {
    bind(tcp::endpoint(address, where.port), ec);
  } else {
    // The range wins over a port in `listen`: it is the host's firewall opening (sluiced
    // --data-ports), which no launch message may widen.
    // Each port of the range from a random one on, so that app daemons starting together
    // do not all try the same port first; a port in use is skipped.
    const int count = ports.size();
    const int start = static_cast<int>(std::random_device{}() % static_cast<unsigned>(count));
    for (int i = 0; i < count; ++i) {
      const auto port = static_cast<std::uint16_t>(ports.first + (start + i) % count);
      bind(tcp::endpoint(address, port), ec);
      if (ec != asio::error::address_in_use) break;
    }
    if (ec == asio::error::address_in_use) {
      throw Error("data plane: no free port on " + text::host_text(where.host) + " in --data-ports " + ports.text() +
                  ": all " + std::to_string(count) + " are in use (each application across hosts holds one for " +
                  "each of its logical hosts here while it runs, a sluice serve for its whole life; ss -ltnp shows " +
                  "what holds them); widen --data-ports");
    }
  }
  if (ec) {
    // The advice depends on what failed: the port (taken), or the address (not this machine's).
    const std::string advice = ec == asio::error::address_in_use
                                   ? "; pick a free port (or 0: any free one)"
                                   : ec == boost::system::errc::address_not_available
                                         ? "; give an address of this machine (ip -brief address lists them)"
                                         : "";
    throw Error("data plane: cannot listen on " + listen + ": " + ec.message() + advice);
  }
  address_ = format_endpoint(acceptor_.local_endpoint());
}

void Listener::bind(const tcp::endpoint& endpoint, boost::system::error_code& ec) {
  boost::system::error_code ignored;
  if (acceptor_.is_open()) acceptor_.close(ignored);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
}

void Listener::start(OnAccept on_accept) {
  on_accept_ = std::move(on_accept);
  do_accept();
}

void Listener::close() {
  closed_ = true;
  boost::system::error_code ignored;
  pause_.cancel();
  acceptor_.close(ignored);
}

void Listener::do_accept() {
  acceptor_.async_accept([this](const boost::system::error_code& ec, tcp::socket socket) {
    if (closed_ || ec == asio::error::operation_aborted) return;
    if (!ec) {
      backoff_ = std::chrono::milliseconds(0);
      boost::system::error_code ignored;
      const tcp::endpoint remote = socket.remote_endpoint(ignored);
      on_accept_(std::move(socket), format_endpoint(remote));
      do_accept();
      return;
    }
    if (!resource_exhausted(ec)) {  // the connection went away before we took it, say
      log_.line("accept failed: " + ec.message());
      do_accept();
      return;
    }
    backoff_ = backoff_.count() == 0 ? kFirstPause : std::min(backoff_ * 2, kLongestPause);
    log_.line("cannot accept data connections: " + ec.message() + "; pausing accepts for " +
              std::to_string(backoff_.count()) + " ms");
    pause_.expires_after(backoff_);
    pause_.async_wait([this](const boost::system::error_code& e) {
      if (!e && !closed_) do_accept();
    });
  });
}

}  // namespace sluice::net
