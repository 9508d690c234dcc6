#include "http/http_server.h"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

namespace sluice::http {
namespace {

namespace asio = boost::asio;
using asio::ip::tcp;

const std::string kHello = "GET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n";

// A server on a loopback port of its own, its io_context on a thread of its own.
class HttpServerTest : public ::testing::Test {
 protected:
  void SetUp() override { start(HttpServer::Limits{}); }
  void TearDown() override { stop(); }

  void start(HttpServer::Limits limits) {
    server_ = std::make_unique<HttpServer>(
        io_, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0),
        [this](const Request& r) -> Response {
          ++handled_;
          if (r.path == "/hello") return {200, "text/plain", "hello " + r.target + "\n", {{"X-Test", "1"}}};
          if (r.path == "/throw") throw std::runtime_error("boom");
          if (r.path == "/big") return {200, "text/plain", std::string(4 << 20, 'x'), {}};
          return {404, "text/plain", "no " + r.path + "\n", {}};
        },
        "test", limits);
    server_->start();
    io_.restart();
    thread_ = std::thread([this] { io_.run(); });
  }
  void restart(HttpServer::Limits limits) {
    stop();
    start(limits);
  }
  void stop() {
    if (!thread_.joinable()) return;
    io_.stop();
    thread_.join();
    server_.reset();  // stops it (the io_context does not run)
  }

  // A connected client socket that gives up reading after 10 s (a guard, not a timing).
  tcp::socket connect() {
    tcp::socket s(client_io_);
    s.connect(server_->local_endpoint());
    timeval tv{10, 0};
    setsockopt(s.native_handle(), SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    return s;
  }
  // Reads one response: the head, then Content-Length bytes (none after HEAD). What
  // follows it stays in `pending` for the next call.
  static std::string read_response(tcp::socket& s, bool head_request = false) {
    static std::string pending;
    std::string data = std::move(pending);
    pending.clear();
    char chunk[4096];
    boost::system::error_code ec;
    std::size_t end = std::string::npos;
    while ((end = data.find("\r\n\r\n")) == std::string::npos) {
      const std::size_t n = s.read_some(asio::buffer(chunk), ec);
      if (ec) return data;
      data.append(chunk, n);
    }
    std::size_t length = 0;
    if (auto at = data.find("Content-Length: "); at != std::string::npos) length = std::stoul(data.substr(at + 16));
    if (head_request) length = 0;
    while (data.size() < end + 4 + length) {
      const std::size_t n = s.read_some(asio::buffer(chunk), ec);
      if (ec) break;
      data.append(chunk, n);
    }
    if (data.size() > end + 4 + length) {
      pending = data.substr(end + 4 + length);
      data.resize(end + 4 + length);
    }
    return data;
  }
  std::string exchange(const std::string& request, bool head_request = false) {
    tcp::socket s = connect();
    asio::write(s, asio::buffer(request));
    return read_response(s, head_request);
  }
  // True when the server closes the connection (EOF, not a timeout).
  static bool closed_by_server(tcp::socket& s) {
    char c;
    boost::system::error_code ec;
    for (;;) {
      s.read_some(asio::buffer(&c, 1), ec);
      if (ec) return ec == asio::error::eof || ec == asio::error::connection_reset;
    }
  }
  static int status_of(const std::string& response) {
    if (response.size() < 12 || response.compare(0, 5, "HTTP/") != 0) return -1;
    return std::stoi(response.substr(9, 3));
  }
  // With `limits` allowing two sessions (in all, or from this address): two are served, a
  // third is closed at once, and once one of the two leaves there is room again (the server
  // notices the close first: retried for up to 30 s).
  void expect_a_third_closed_until_one_leaves(HttpServer::Limits limits) {
    restart(limits);
    tcp::socket a = connect();
    tcp::socket b = connect();
    // Both are sessions once they have been served once.
    asio::write(a, asio::buffer(kHello));
    EXPECT_EQ(status_of(read_response(a)), 200);
    asio::write(b, asio::buffer(kHello));
    EXPECT_EQ(status_of(read_response(b)), 200);
    tcp::socket c = connect();
    EXPECT_TRUE(closed_by_server(c));
    a.close();
    int status = -1;
    for (int attempt = 0; attempt < 3000 && status != 200; ++attempt) {
      status = status_of(exchange(kHello));
      if (status != 200) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(status, 200);
  }
  void expect_still_serving() { EXPECT_EQ(status_of(exchange(kHello)), 200); }

  asio::io_context io_;
  asio::io_context client_io_;
  std::unique_ptr<HttpServer> server_;
  std::thread thread_;
  std::atomic<int> handled_{0};
};

TEST_F(HttpServerTest, GetAnswersWithTheHandlersBodyAndHeaders) {
  const std::string r = exchange("GET /hello?x=1 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
  EXPECT_EQ(status_of(r), 200) << r;
  EXPECT_NE(r.find("X-Test: 1\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("Cache-Control: no-store\r\n"), std::string::npos) << r;
  EXPECT_NE(r.find("\r\n\r\nhello /hello?x=1\n"), std::string::npos) << r;
}

TEST_F(HttpServerTest, HeadHasTheLengthButNoBody) {
  tcp::socket s = connect();
  asio::write(s, asio::buffer(std::string("HEAD /hello HTTP/1.1\r\nHost: localhost\r\n\r\nGET /hello HTTP/1.1\r\nHost: localhost\r\n\r\n")));
  const std::string head = read_response(s, true);
  EXPECT_EQ(status_of(head), 200) << head;
  EXPECT_NE(head.find("Content-Length: 13\r\n"), std::string::npos) << head;
  EXPECT_EQ(head.substr(head.find("\r\n\r\n") + 4), "");
  // The next response on the same connection starts right after the head: no body came.
  const std::string get = read_response(s);
  EXPECT_EQ(status_of(get), 200) << get;
}

TEST_F(HttpServerTest, KeepsTheConnectionForSeveralRequests) {
  tcp::socket s = connect();
  for (int i = 0; i < 3; ++i) {
    asio::write(s, asio::buffer(kHello));
    EXPECT_EQ(status_of(read_response(s)), 200);
  }
  EXPECT_EQ(handled_, 3);
}

TEST_F(HttpServerTest, OtherMethodsGet405WithAllow) {
  for (const std::string& method : {std::string("POST"), std::string("PUT"), std::string("DELETE"),
                                    std::string("OPTIONS"), std::string("FOO")}) {
    const std::string r = exchange(method + " /hello HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n\r\n");
    EXPECT_EQ(status_of(r), 405) << method << ": " << r;
    EXPECT_NE(r.find("Allow: GET, HEAD\r\n"), std::string::npos) << r;
  }
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpServerTest, ABodyGets413) {
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nhello")), 413);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")), 413);
  // A huge announced body is refused without reading it.
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nContent-Length: 99999999999\r\n\r\n")), 413);
  EXPECT_EQ(handled_, 0);
  expect_still_serving();
}

TEST_F(HttpServerTest, AnOversizedHeadGets431AndTheConnectionCloses) {
  tcp::socket s = connect();
  asio::write(s, asio::buffer("GET /hello HTTP/1.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n"));
  const std::string r = read_response(s);
  EXPECT_EQ(status_of(r), 431) << r.substr(0, 100);
  EXPECT_TRUE(closed_by_server(s));
  EXPECT_EQ(status_of(exchange("GET /" + std::string(9000, 'x') + " HTTP/1.1\r\n\r\n")), 431);
  expect_still_serving();
}

TEST_F(HttpServerTest, WhatDoesNotParseGets400) {
  for (const std::string& bad : {std::string("\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n", 16),
                                std::string("GET\r\n\r\n"), std::string("GET / HTTP/9.9\r\n\r\n"),
                                std::string("GET / HTTP/1.1\r\nNo colon here\r\n\r\n"),
                                std::string("GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n"),
                                std::string("G\x01T / HTTP/1.1\r\n\r\n", 18), std::string("GET http://evil/ HTTP/1.1\r\n\r\n"),
                                std::string("GET * HTTP/1.1\r\n\r\n")}) {
    tcp::socket s = connect();
    asio::write(s, asio::buffer(bad));
    const std::string r = read_response(s);
    EXPECT_EQ(status_of(r), 400) << "request: " << bad << "\nresponse: " << r;
    EXPECT_TRUE(closed_by_server(s));
  }
  EXPECT_EQ(handled_, 0);
  expect_still_serving();
}

TEST_F(HttpServerTest, AnHttp11RequestWithoutHostGets400AndAnHttp10OneIsServed) {
  tcp::socket s = connect();
  asio::write(s, asio::buffer(std::string("GET /hello HTTP/1.1\r\n\r\n")));
  const std::string r = read_response(s);
  EXPECT_EQ(status_of(r), 400) << r;
  EXPECT_NE(r.find("an HTTP/1.1 request carries a Host header"), std::string::npos) << r;
  EXPECT_TRUE(closed_by_server(s));
  EXPECT_EQ(handled_, 0);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.0\r\n\r\n")), 200);  // HTTP/1.0 has no Host to send
}

TEST_F(HttpServerTest, AForeignHostHeaderGets403OnLoopback) {
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: evil.example\r\n\r\n")), 403);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: evil.example:80\r\n\r\n")), 403);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: localhost:8080\r\n\r\n")), 200);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n")), 200);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.0\r\n\r\n")), 200);  // HTTP/1.0: no Host
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: LocalHost:8080\r\n\r\n")), 200);  // names ignore case
  // After the name, a port or nothing: not a loopback name in front of another one.
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: localhost:80@evil.example\r\n\r\n")), 403);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: [::1]x.evil.example\r\n\r\n")), 403);
  // Two Host headers: which one a check read and which one a proxy used could differ.
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost: localhost\r\nHost: evil.example\r\n\r\n")), 400);
  EXPECT_EQ(status_of(exchange("GET /hello HTTP/1.1\r\nHost:\r\n\r\n")), 400);  // empty: no authority named
}

TEST_F(HttpServerTest, AThrowingHandlerGets500AndTheServerGoesOn) {
  const std::string r = exchange("GET /throw HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(status_of(r), 500);
  EXPECT_NE(r.find("internal error: boom"), std::string::npos) << r;
  expect_still_serving();
}

TEST_F(HttpServerTest, UnknownPathsAreTheHandlers404) {
  const std::string r = exchange("GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(status_of(r), 404);
  EXPECT_NE(r.find("no /nope"), std::string::npos);
}

// (idle_after and hold_after: an hour, so that the connections there do not make room.)
TEST_F(HttpServerTest, ConnectionsOverTheCapAreClosedAtOnce) {
  expect_a_third_closed_until_one_leaves(HttpServer::Limits{8 * 1024, 2, std::chrono::seconds(10), 16,
                                                            std::chrono::hours(1), std::chrono::hours(1)});
}

// One client address cannot hold every slot: past its own cap its connections are closed,
// though the server has room for others.
TEST_F(HttpServerTest, OneAddressHasACapOfItsOwn) {
  HttpServer::Limits limits;
  limits.per_address = 2;
  limits.idle_after = std::chrono::hours(1);
  limits.hold_after = std::chrono::hours(1);
  expect_a_third_closed_until_one_leaves(limits);
}

// Nor can clients that keep their connections busy (kept alive, a request every few ms, so
// that none ever waits as long as idle_after: here never): the one that has held its place
// longest is closed for the newcomer. (An outside review kept the live view and /metrics
// dark with 16 connections from one address, each asking every 80 ms.)
TEST_F(HttpServerTest, ConnectionsKeptBusyMakeRoomForANewOne) {
  HttpServer::Limits limits;
  limits.per_address = 2;
  limits.idle_after = std::chrono::hours(1);
  restart(limits);
  tcp::socket oldest = connect();
  tcp::socket busy = connect();
  for (tcp::socket* s : {&oldest, &busy}) {
    asio::write(*s, asio::buffer(kHello));
    EXPECT_EQ(status_of(read_response(*s)), 200);
  }
  tcp::socket newcomer = connect();
  asio::write(newcomer, asio::buffer(kHello));
  EXPECT_EQ(status_of(read_response(newcomer)), 200);
  EXPECT_TRUE(closed_by_server(oldest));
  // The other one is still served.
  asio::write(busy, asio::buffer(kHello));
  EXPECT_EQ(status_of(read_response(busy)), 200);
}

// Connections that only wait (idle sockets, kept-alive ones between requests) do not keep a
// new client out: the one that has waited longest is closed to make room.
TEST_F(HttpServerTest, ConnectionsThatOnlyWaitMakeRoomForANewOne) {
  HttpServer::Limits limits;
  limits.per_address = 2;
  limits.idle_after = std::chrono::milliseconds(0);
  restart(limits);
  tcp::socket oldest = connect();
  tcp::socket idle = connect();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // both sessions are waiting
  tcp::socket newcomer = connect();
  asio::write(newcomer, asio::buffer(kHello));
  EXPECT_EQ(status_of(read_response(newcomer)), 200);
  EXPECT_TRUE(closed_by_server(oldest));
  // The next one makes room in turn (the other idle one, or the newcomer, kept alive).
  EXPECT_EQ(status_of(exchange(kHello)), 200);
}

// Nor do clients that ask and never read the answers (an answer larger than the sockets
// hold: the server's write waits on them): they make room as idle ones do.
TEST_F(HttpServerTest, ClientsThatDoNotReadTheirAnswersMakeRoomForANewOne) {
  HttpServer::Limits limits;
  limits.connections = 2;
  limits.idle_after = std::chrono::milliseconds(50);
  restart(limits);
  std::vector<tcp::socket> stalled;
  for (int i = 0; i < 2; ++i) {
    stalled.push_back(connect());
    const int small = 1024;
    setsockopt(stalled.back().native_handle(), SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
    asio::write(stalled.back(), asio::buffer(std::string("GET /big HTTP/1.1\r\nHost: localhost\r\n\r\n")));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both writes wait on their client
  EXPECT_EQ(status_of(exchange(kHello)), 200);
}

TEST(HttpServer, AnAddressInUseIsAClearError) {
  asio::io_context io;
  HttpServer first(io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0), [](const Request&) { return Response{}; },
                   "--ui");
  try {
    HttpServer second(io, first.local_endpoint(), [](const Request&) { return Response{}; }, "--ui");
    FAIL() << "expected an error";
  } catch (const std::exception& e) {
    EXPECT_NE(std::string(e.what()).find("--ui: cannot listen on 127.0.0.1:"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("pick another port"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace sluice::http
