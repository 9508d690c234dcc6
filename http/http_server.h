// HttpServer: a small, read-only HTTP/1.1 server (Boost.Beast over Asio) for what sluice
// shows about itself: the console's --ui page and API, sluiced's --metrics.
//
// It answers GET and HEAD only, with whatever the handler returns for the path (the query
// string is dropped), and holds up against what a stranger's bytes can do:
//   - a request head over 8 KiB                   -> 431, and the connection is closed;
//   - a request with a body (Content-Length > 0, chunked) -> 413, closed;
//   - another method (POST, PUT, FOO...)          -> 405 with Allow: GET, HEAD, closed;
//   - anything that does not parse as HTTP/1.x, a target that is not a path -> 400, closed;
//   - bound to loopback, a Host header that names something else (DNS rebinding) -> 403;
//   - at most 64 connections at once, 16 from one address; beyond that one is closed to
//     make room for the newcomer (Limits); 10 s to send a request head, and the same to take
//     a response, or the connection is closed.
// A handler that throws gets the client a 500; the server goes on.
//
// An Asio server in the style of the Asio examples: the server owns the acceptor and the
// sessions' count; a session is enable_shared_from_this and its handlers hold `self`.
// Everything runs on the io_context given to it: the caller decides on which thread (the
// console runs one of its own; sluiced its only one). The handler runs there too.
#ifndef SLUICE_HTTP_HTTP_SERVER_H_
#define SLUICE_HTTP_HTTP_SERVER_H_

#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange
#include <vector>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace sluice::http {

struct Request {
  std::string method;  // "GET" or "HEAD" (the handler sees no other)
  std::string path;    // "/metrics": the target without its query string
  std::string target;  // as sent: "/metrics?x=1"
};

struct Response {
  int status = 200;
  std::string content_type = "text/plain; charset=utf-8";
  std::string body;  // left out of the answer to HEAD (its Content-Length stays)
  std::vector<std::pair<std::string, std::string>> headers;  // extra headers
};

class HttpServer {
 public:
  using Handler = std::function<Response(const Request&)>;

  struct Limits {
    std::size_t header_bytes = 8 * 1024;  // request line and headers. Default: 8 KiB
    std::size_t connections = 64;         // open at once. Default: 64
    std::chrono::seconds timeout{10};     // to read a request head or write a response. Default: 10 s
    // Open at once from one client address, so that one client cannot take every slot
    // (as the control and data ports cap each address). Default: 16
    std::size_t per_address = 16;
    // When a cap is full, the connection that has waited longest on its client, for over
    // this, is closed to make room for the new one: for a request (a new connection, or a
    // kept-alive one between requests), for the client to take an answer, or to close. Idle
    // sockets, and clients that do not read, cannot keep browsers out. Default: 100 ms
    std::chrono::milliseconds idle_after{100};
    // When none has waited that long, the one that has held its place longest, for over
    // this, is closed instead, busy or not: clients that keep their connections busy (a
    // request every 80 ms, or back to back) cannot keep browsers out either; holding every
    // place takes opening connections faster than a request is answered. Default: 0 (the
    // newcomer always gets in)
    std::chrono::milliseconds hold_after{0};
  };

  // Binds and listens on `at` (port 0: a free port) on `io`. `io` and whatever `handler`
  // uses must outlive the server and its sessions (stop(), then let `io` finish). Throws
  // sluice::Error, naming `what` ("--ui") and the address, when it cannot listen.
  HttpServer(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& at, Handler handler,
             const std::string& what, Limits limits);
  HttpServer(boost::asio::io_context& io, const boost::asio::ip::tcp::endpoint& at, Handler handler,
             const std::string& what)
      : HttpServer(io, at, std::move(handler), what, Limits{}) {}
  // Stops (see stop()). REQUIRES: on the io_context's thread, or when it does not run.
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Starts accepting. REQUIRES: called once.
  void start();
  // Stops accepting; open connections end when their current exchange does (or at
  // their timeout). Call on the io_context's thread, or when it does not run.
  void stop();

  // Where it listens (the port chosen when `at` had port 0).
  boost::asio::ip::tcp::endpoint local_endpoint() const { return bound_; }

  struct State;  // shared with the sessions

 private:
  void do_accept();

  std::shared_ptr<State> state_;
  boost::asio::ip::tcp::endpoint bound_;
};

}  // namespace sluice::http

#endif  // SLUICE_HTTP_HTTP_SERVER_H_
