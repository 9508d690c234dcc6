#include "net/listener.h"

#include <algorithm>
#include <cerrno>

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

Listener::Listener(asio::io_context& io, const std::string& listen, RateLimitedLog& log)
    : acceptor_(io), pause_(io), log_(log) {
  // An IP address (the data plane does not resolve names to listen on); port 0: any free port.
  text::AddressRules rules;
  rules.names = false;
  rules.any_port = true;
  const text::HostPort where = text::parse_host_port_or_throw(listen, rules, "data plane: listen address");
  boost::system::error_code ec;
  const tcp::endpoint endpoint(asio::ip::make_address(where.host), where.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
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
