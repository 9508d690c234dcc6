#include "http/http_server.h"

#include <array>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <vector>

#include <boost/asio/ip/address.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

#include "http/listen_address.h"
#include "sluice/error.h"

namespace sluice::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using asio::ip::tcp;

namespace {
class Session;
}  // namespace

struct HttpServer::State {
  State(asio::io_context& io, Handler h, Limits l) : acceptor(io), handler(std::move(h)), limits(l) {}
  tcp::acceptor acceptor;
  Handler handler;
  Limits limits;
  bool loopback = true;   // bound to a loopback address: check Host headers
  std::size_t open = 0;   // sessions alive
  std::map<asio::ip::address, std::size_t> open_from;  // sessions alive, by client address
  std::vector<std::weak_ptr<Session>> sessions;        // to make room (accept_next); expired ones pruned there
  bool stopped = false;
  asio::steady_timer pause{acceptor.get_executor()};  // after an accept error
};

namespace {


const std::string kAllow = "GET, HEAD";

bool is_parse_error(const boost::system::error_code& ec) {
  return ec.category() == bhttp::make_error_code(bhttp::error::bad_method).category();
}

// A Host header (or its absence, which HTTP/1.0 clients may do) that a page served from a
// loopback address can legitimately carry: "localhost", a loopback IP, with or without port.
bool loopback_host(std::string_view host) {
  if (host.empty()) return true;
  std::string name(host);
  if (name.front() == '[') {
    const auto close = name.find(']');
    if (close == std::string::npos) return false;
    name = name.substr(1, close - 1);
  } else if (const auto colon = name.rfind(':'); colon != std::string::npos) {
    name = name.substr(0, colon);
  }
  // What follows the name is a port, or nothing ("localhost:80@evil.com" is neither).
  const std::string_view rest = host.substr(std::min(host.size(), name.size() + (host.front() == '[' ? 2 : 0)));
  if (!rest.empty() && (rest.front() != ':' || rest.find_first_not_of("0123456789", 1) != std::string_view::npos)) {
    return false;
  }
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));  // names ignore case
  if (name == "localhost" || name.ends_with(".localhost")) return true;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(name, ec);
  return !ec && address.is_loopback();
}

class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, asio::ip::address from, std::shared_ptr<HttpServer::State> state)
      : stream_(std::move(socket)), buffer_(state->limits.header_bytes + 512), state_(std::move(state)),
        from_(from) {
    ++state_->open;
    ++state_->open_from[from_];
  }
  ~Session() {
    --state_->open;
    if (--state_->open_from[from_] == 0) state_->open_from.erase(from_);
  }

  void start() { read_head(); }

  // Since when it has waited on its client (nullopt: it is reading a request, or working on
  // one): for a request's head, for the client to take an answer, or to close once answered.
  // A client that never reads its answers holds a slot as surely as one that never asks.
  const std::optional<std::chrono::steady_clock::time_point>& waiting_since() const { return waiting_since_; }
  const asio::ip::address& from() const { return from_; }
  std::chrono::steady_clock::time_point opened_at() const { return opened_at_; }
  bool evicted() const { return evicted_; }
  // Closes the connection now: a cap is full and it is the oldest waiting, or holding its
  // place (make_room).
  void evict() {
    evicted_ = true;
    waiting_since_.reset();
    stream_.close();
  }

 private:
  void read_head() {
    // Bytes of a next request already here (pipelined): it is not waiting idle.
    if (buffer_.size() == 0) waiting_since_ = std::chrono::steady_clock::now();
    parser_.emplace();
    parser_->header_limit(static_cast<std::uint32_t>(state_->limits.header_bytes));
    parser_->body_limit(0);
    stream_.expires_after(state_->limits.timeout);
    bhttp::async_read_header(stream_, buffer_, *parser_,
                             [self = shared_from_this()](beast::error_code ec, std::size_t) { self->on_head(ec); });
  }

  void on_head(beast::error_code ec) {
    waiting_since_.reset();
    if (ec == asio::error::operation_aborted) return;
    if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message || ec == asio::error::eof ||
        ec == beast::error::timeout) {
      return close();  // gone, or silent: nobody to answer
    }
    if (ec == bhttp::error::body_limit) return refuse(413, "a GET or HEAD request carries no body here\n");
    if (ec == bhttp::error::header_limit || ec == bhttp::error::buffer_overflow) {
      return refuse(431, "the request's head is over " + std::to_string(state_->limits.header_bytes) + " bytes\n");
    }
    if (ec && is_parse_error(ec)) return refuse(400, "not an HTTP/1.x request: " + ec.message() + "\n");
    if (ec) return close();  // a network error: the connection is gone
    const auto& head = parser_->get();
    if (head.method() != bhttp::verb::get && head.method() != bhttp::verb::head) {
      Response r{405, "text/plain; charset=utf-8",
                 std::string(head.method_string()) + " is not served here: this server only answers GET and HEAD\n",
                 {{"Allow", kAllow}}};
      return answer(std::move(r), false, false);
    }
    if (!parser_->is_done()) return refuse(413, "a GET or HEAD request carries no body here\n");
    const std::string target(head.target());
    if (target.empty() || target.front() != '/') {
      return refuse(400, "the request target must be a path such as /metrics\n");
    }
    if (head.count(bhttp::field::host) > 1) {
      return refuse(400, "a request carries one Host header, not several\n");
    }
    if (head.version() >= 11 && head[bhttp::field::host].empty()) {
      // RFC 9112, 3.2: a server answers an HTTP/1.1 request without Host with 400; an empty
      // one is for a target without an authority, which no request here has (no browser
      // sends one either: an outside review found it let through as if it named localhost).
      return refuse(400, "an HTTP/1.1 request carries a Host header (Host: 127.0.0.1:PORT); browsers, curl and "
                         "Prometheus send one\n");
    }
    if (state_->loopback && !loopback_host(std::string(head[bhttp::field::host]))) {
      return refuse(403, "this server answers requests for localhost only (Host: " +
                             std::string(head[bhttp::field::host]) + "); open it as http://127.0.0.1:" +
                             std::to_string(stream_.socket().local_endpoint(ec).port()) + "/\n");
    }
    Request request{std::string(head.method_string()), target.substr(0, target.find('?')), target};
    Response response;
    try {
      response = state_->handler(request);
    } catch (const std::exception& e) {
      response = Response{500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n", {}};
    }
    answer(std::move(response), head.method() == bhttp::verb::head, head.keep_alive());
  }

  // Answers a request that cannot be served, and closes the connection.
  void refuse(int status, std::string why) { answer(Response{status, "text/plain; charset=utf-8", std::move(why), {}}, false, false); }

  void answer(Response r, bool head_only, bool keep_alive) {
    response_ = {};
    response_.result(static_cast<unsigned>(r.status));
    response_.version(parser_ && parser_->is_header_done() && parser_->get().version() == 10 ? 10 : 11);
    response_.set(bhttp::field::server, "sluice");
    response_.set(bhttp::field::content_type, r.content_type);
    response_.set(bhttp::field::cache_control, "no-store");
    response_.set("X-Content-Type-Options", "nosniff");
    response_.set("Content-Security-Policy", "default-src 'self'; frame-ancestors 'none'");
    for (const auto& [name, value] : r.headers) response_.set(name, value);
    response_.keep_alive(keep_alive && r.status < 400);
    response_.content_length(r.body.size());
    if (!head_only) response_.body() = std::move(r.body);
    waiting_since_ = std::chrono::steady_clock::now();  // for the client to take it
    stream_.expires_after(state_->limits.timeout);
    bhttp::async_write(stream_, response_, [self = shared_from_this()](beast::error_code ec, std::size_t) {
      self->on_written(ec);
    });
  }

  void on_written(beast::error_code ec) {
    waiting_since_.reset();
    if (ec) return close();
    if (!response_.keep_alive() || state_->stopped) return close();
    read_head();
  }

  // Says we are done, then reads (and drops) what the client still sends for a moment
  // before closing: closing with unread bytes would reset the connection, and the client
  // could lose the answer it has not read yet.
  void close() {
    beast::error_code ignored;
    stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
    waiting_since_ = std::chrono::steady_clock::now();  // for the client to close
    stream_.expires_after(std::chrono::seconds(2));
    drain();
  }

  void drain() {
    stream_.async_read_some(asio::buffer(scratch_), [self = shared_from_this()](beast::error_code ec, std::size_t n) {
      self->drained_ += n;
      if (ec || self->drained_ > kMaxDrain) return self->stream_.close();
      self->drain();
    });
  }

  static constexpr std::size_t kMaxDrain = 1 << 20;
  std::array<char, 4096> scratch_{};
  std::size_t drained_ = 0;

  beast::tcp_stream stream_;
  beast::flat_buffer buffer_;
  std::shared_ptr<HttpServer::State> state_;
  std::optional<bhttp::request_parser<bhttp::empty_body>> parser_;
  bhttp::response<bhttp::string_body> response_;
  const asio::ip::address from_;
  const std::chrono::steady_clock::time_point opened_at_ = std::chrono::steady_clock::now();
  std::optional<std::chrono::steady_clock::time_point> waiting_since_;
  bool evicted_ = false;  // closed to make room: not a candidate again
};

// When a cap is full (`per_address`: the one of `from`): closes the session that has waited
// longest on its client (for a request, to take an answer, to close), for over
// Limits::idle_after (of `from`, for its cap: a browser sends its request as soon as it
// connects, and reads the answer as it comes); else the one that has held its place
// longest, for over Limits::hold_after, busy or not. False when none may go.
bool make_room(HttpServer::State& state, const asio::ip::address& from, bool per_address) {
  const auto now = std::chrono::steady_clock::now();
  std::shared_ptr<Session> waited_longest, held_longest;
  std::erase_if(state.sessions, [](const std::weak_ptr<Session>& w) { return w.expired(); });
  for (const auto& w : state.sessions) {
    std::shared_ptr<Session> s = w.lock();
    if (!s || s->evicted() || (per_address && s->from() != from)) continue;
    if (s->waiting_since() && now - *s->waiting_since() >= state.limits.idle_after &&
        (!waited_longest || *s->waiting_since() < *waited_longest->waiting_since())) {
      waited_longest = s;
    }
    if (now - s->opened_at() >= state.limits.hold_after && (!held_longest || s->opened_at() < held_longest->opened_at())) {
      held_longest = s;
    }
  }
  std::shared_ptr<Session> victim = waited_longest ? waited_longest : held_longest;
  if (!victim) return false;
  victim->evict();
  return true;
}

void accept_next(const std::shared_ptr<HttpServer::State>& state) {
  state->acceptor.async_accept([state](boost::system::error_code ec, tcp::socket socket) {
    if (state->stopped || ec == asio::error::operation_aborted) return;
    if (ec) {
      // Out of descriptors or memory, most likely: accepting again at once would spin.
      state->pause.expires_after(std::chrono::milliseconds(100));
      state->pause.async_wait([state](boost::system::error_code wait_ec) {
        if (!wait_ec && !state->stopped) accept_next(state);
      });
      return;
    }
    boost::system::error_code peer_ec;
    const tcp::endpoint peer = socket.remote_endpoint(peer_ec);
    const auto from = state->open_from.find(peer.address());
    const bool address_full = from != state->open_from.end() && from->second >= state->limits.per_address;
    const bool full = address_full || state->open >= state->limits.connections;
    // Over a cap, a connection that only waits makes room (its session ends once its
    // handler has run: the count is over the cap by one until then); else no room.
    if (peer_ec || (full && !make_room(*state, peer.address(), address_full))) {
      boost::system::error_code ignored;
      socket.close(ignored);
    } else {
      auto session = std::make_shared<Session>(std::move(socket), peer.address(), state);
      state->sessions.push_back(session);
      session->start();
    }
    accept_next(state);
  });
}

}  // namespace

HttpServer::HttpServer(asio::io_context& io, const tcp::endpoint& at, Handler handler, const std::string& what,
                       Limits limits)
    : state_(std::make_shared<State>(io, std::move(handler), limits)) {
  boost::system::error_code ec;
  tcp::acceptor& a = state_->acceptor;
  a.open(at.protocol(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) a.bind(at, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    throw Error(what + ": cannot listen on " + endpoint_text(at) + ": " + ec.message() +
                (ec == asio::error::address_in_use ? "; pick another port (0: any free one)" : ""));
  }
  bound_ = a.local_endpoint();
  state_->loopback = bound_.address().is_loopback();
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::start() { accept_next(state_); }

void HttpServer::stop() {
  state_->stopped = true;
  boost::system::error_code ignored;
  state_->acceptor.close(ignored);
  state_->pause.cancel();
}

}  // namespace sluice::http
