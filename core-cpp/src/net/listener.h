// Listener: the data plane's listening socket and accept loop (internal to the data plane).
//
// When the process runs out of descriptors (EMFILE, ENFILE) or memory, accept fails until
// something closes; retrying at once would spin a core and log without end. The listener
// pauses instead, on a timer (10 ms, doubling to 1 s while the error lasts), and logs
// through a rate-limited log.
//
// Thread safety: start and close on any thread before the I/O thread runs or on it.
#ifndef SLUICE_NET_LISTENER_H_
#define SLUICE_NET_LISTENER_H_

#include <chrono>
#include <functional>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "net/rate_limited_log.h"
#include "text/port_range.h"

namespace sluice::net {

class Listener {
 public:
  using OnAccept = std::function<void(boost::asio::ip::tcp::socket socket, const std::string& remote)>;

  // Binds `listen` ("addr:port", port 0 picks a free one). With a range in `ports`, a free
  // port of the range, whatever port `listen` names (the range is a firewall's opening).
  // Throws sluice::Error when it cannot (every port of the range taken, say).
  // `log` outlives the listener.
  Listener(boost::asio::io_context& io, const std::string& listen, RateLimitedLog& log,
           const text::PortRange& ports = {});

  // The bound "addr:port".
  const std::string& address() const { return address_; }
  // Starts accepting; `on_accept` runs on the I/O thread for each new connection.
  void start(OnAccept on_accept);
  // I/O thread: stops accepting and closes the socket.
  void close();

 private:
  // Opens, binds and listens (closing what an earlier try left open); `ec` says what failed.
  void bind(const boost::asio::ip::tcp::endpoint& endpoint, boost::system::error_code& ec);
  void do_accept();

  boost::asio::ip::tcp::acceptor acceptor_;
  boost::asio::steady_timer pause_;
  RateLimitedLog& log_;
  std::string address_;
  OnAccept on_accept_;
  std::chrono::milliseconds backoff_{0};
  bool closed_ = false;
};

// "addr:port" of an endpoint ("[::1]:7700" for IPv6).
std::string format_endpoint(const boost::asio::ip::tcp::endpoint& endpoint);

}  // namespace sluice::net

#endif  // SLUICE_NET_LISTENER_H_
