// sluiced: the host daemon. One per host, long-lived.
//
//   sluiced --listen ADDR:PORT --token-file FILE [--appd PATH] [--verbose]
//
// Serves consoles over TCP (control protocol, core-cpp/proto/control.proto). Every console
// proves it knows the shared token (control/auth.h) before it can do anything; then it may
// launch one application, for which sluiced starts one sluice-appd in its own process group,
// connected by a socketpair (fd 3 in the child). sluiced relays control messages between the
// console and that app daemon, heartbeats the console, and kills the app daemon's group when
// the console asks (abort), disappears (closed connection or 3 s without a heartbeat) or
// sends garbage, and when the app daemon itself stops heartbeating for 4 s after it
// started (hung). It reports how the app daemon ended (exit status or signal).
//
// Structure after the Asio examples (http/server): Server owns the io_context, the
// acceptor, the signal sets and the sessions; a Session (enable_shared_from_this) is one
// console connection and the app daemon it launched. Single-threaded: everything runs on
// the io_context's thread.
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <deque>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <set>
#include <string>

#include <utility>

#include <boost/asio.hpp>

#include "control/auth.h"
#include "sluice/error.h"
#include "control/codec.h"
#include "daemons/log.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using sluice::control::Envelope;
namespace dlog = sluice::daemon;

namespace {

constexpr auto kAuthTimeout = std::chrono::seconds(5);
constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
constexpr auto kConsoleSilence = std::chrono::milliseconds(3000);
constexpr auto kKillGrace = std::chrono::milliseconds(1000);
constexpr auto kShutdownGrace = std::chrono::milliseconds(3000);
// An app daemon heartbeats every 500 ms once started; this long without a word and it is
// taken for hung (stopped, deadlocked) and killed.
constexpr auto kAppSilence = std::chrono::milliseconds(4000);

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

struct Config {
  std::string token;
  std::string appd_path;
};

class Server;

// One console connection, and the app daemon it launched (if any).
class Session : public std::enable_shared_from_this<Session> {
 public:
  Session(tcp::socket socket, Server& server, const Config& config, std::uint64_t id);
  void start();
  void stop(const std::string& why);
  // The app daemon ended (from the server's SIGCHLD handler).
  void app_exited(int status);
  pid_t app_pid() const { return app_pid_; }

 private:
  enum class State { kHello, kResponse, kAuthenticated, kRefused, kClosed };

  void do_read_header();
  void do_read_body(std::uint32_t length);
  void handle(const Envelope& message);
  void send(const Envelope& message);
  void do_write();
  void arm_deadline(std::chrono::steady_clock::duration after, std::string what);
  void heartbeat();
  void launch(const sluice::control::Launch& launch, const Envelope& whole);
  void send_error(const std::string& message);

  void app_read_header();
  void app_read_body(std::uint32_t length);
  void app_send(const Envelope& message);
  void app_do_write();
  void kill_app(int sig, const std::string& why);
  void maybe_report_exit();
  void watch_app();

  tcp::socket socket_;
  Server& server_;
  const Config& config_;
  const std::uint64_t id_;
  std::string peer_;
  State state_ = State::kHello;
  std::string client_nonce_;
  std::string server_nonce_;
  std::array<unsigned char, sluice::control::kHeaderSize> header_{};
  std::vector<char> body_;
  std::deque<std::string> writes_;
  asio::steady_timer deadline_;
  asio::steady_timer heartbeat_;
  std::uint64_t heartbeat_sequence_ = 0;

  // The app daemon.
  std::string app_id_;
  std::string host_;
  pid_t app_pid_ = -1;
  bool app_expected_end_ = false;  // after Shutdown or Abort
  bool app_eof_ = false;
  std::optional<int> app_status_;
  asio::local::stream_protocol::socket app_socket_;
  std::array<unsigned char, sluice::control::kHeaderSize> app_header_{};
  std::vector<char> app_body_;
  std::deque<std::string> app_writes_;
  asio::steady_timer kill_timer_;
  asio::steady_timer app_watch_;
  bool app_started_ = false;
  std::chrono::steady_clock::time_point app_last_heard_;
};

class Server {
 public:
  Server(const std::string& listen, Config config);
  // Runs until SIGINT/SIGTERM. A handler that throws (it should not) is logged, and the
  // daemon goes on serving.
  void run() {
    for (;;) {
      try {
        io_.run();
        return;
      } catch (const std::exception& e) {
        dlog::error(std::string("unexpected error, still serving: ") + e.what());
      }
    }
  }
  asio::io_context& io() { return io_; }
  void forget(const std::shared_ptr<Session>& session) { sessions_.erase(session); }
  void watch(pid_t pid, const std::shared_ptr<Session>& session) { children_[pid] = session; }

 private:
  void do_accept();
  void do_await_stop();
  void do_await_child();

  asio::io_context io_;
  asio::signal_set stop_signals_;
  asio::signal_set child_signals_;
  tcp::acceptor acceptor_;
  Config config_;
  std::set<std::shared_ptr<Session>> sessions_;
  std::map<pid_t, std::weak_ptr<Session>> children_;
  std::uint64_t next_id_ = 1;
};

// ---- Session ---------------------------------------------------------------------------

Session::Session(tcp::socket socket, Server& server, const Config& config, std::uint64_t id)
    : socket_(std::move(socket)),
      server_(server),
      config_(config),
      id_(id),
      deadline_(server.io()),
      heartbeat_(server.io()),
      app_socket_(server.io()),
      kill_timer_(server.io()),
      app_watch_(server.io()) {
  boost::system::error_code ec;
  auto ep = socket_.remote_endpoint(ec);
  peer_ = ec ? std::string("unknown peer") : ep.address().to_string() + ":" + std::to_string(ep.port());
  peer_ = "console #" + std::to_string(id_) + " (" + peer_ + ")";
}

void Session::start() {
  dlog::info(peer_ + ": connected");
  arm_deadline(kAuthTimeout, "did not authenticate within 5 s");
  do_read_header();
}

void Session::arm_deadline(std::chrono::steady_clock::duration after, std::string what) {
  deadline_.expires_after(after);
  deadline_.async_wait([self = shared_from_this(), what](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || self->state_ == State::kClosed) return;
    self->stop(what);
  });
}

void Session::stop(const std::string& why) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  dlog::info(peer_ + ": closing: " + why);
  boost::system::error_code ec;
  socket_.shutdown(tcp::socket::shutdown_both, ec);
  socket_.close(ec);
  deadline_.cancel();
  heartbeat_.cancel();
  app_watch_.cancel();
  if (app_pid_ > 0 && !app_status_) kill_app(SIGKILL, "its console is gone");
  app_socket_.close(ec);
  server_.forget(shared_from_this());
}

void Session::do_read_header() {
  asio::async_read(socket_, asio::buffer(header_),
                   [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                     if (self->state_ == State::kClosed) return;
                     if (ec) {
                       self->stop(ec == asio::error::eof ? "connection closed by the console"
                                                         : "read failed: " + ec.message());
                       return;
                     }
                     const std::uint32_t length = sluice::control::decode_length(self->header_.data());
                     if (auto problem = sluice::control::check_length(length)) {
                       dlog::warn(self->peer_ + ": " + *problem + "; dropping the connection");
                       self->stop("malformed frame");
                       return;
                     }
                     self->do_read_body(length);
                   });
}

void Session::do_read_body(std::uint32_t length) {
  // Before authentication, no message is larger than a few hundred bytes: do not let an
  // unauthenticated peer make us allocate 16 MiB.
  if (state_ != State::kAuthenticated && length > 4096) {
    dlog::warn(peer_ + ": frame of " + std::to_string(length) +
              " bytes before authentication (limit 4096); dropping the connection");
    stop("oversized frame before authentication");
    return;
  }
  body_.resize(length);
  asio::async_read(socket_, asio::buffer(body_),
                   [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                     if (self->state_ == State::kClosed) return;
                     if (ec) {
                       self->stop(ec == asio::error::eof ? "connection closed in the middle of a frame"
                                                         : "read failed: " + ec.message());
                       return;
                     }
                     Envelope message;
                     if (auto problem = sluice::control::decode_body(self->body_.data(), self->body_.size(), &message)) {
                       dlog::warn(self->peer_ + ": " + *problem + "; dropping the connection");
                       self->stop("malformed message");
                       return;
                     }
                     self->handle(message);
                     if (self->state_ != State::kClosed) self->do_read_header();
                   });
}

void Session::send_error(const std::string& message) {
  Envelope e;
  e.mutable_error()->set_message(message);
  send(e);
}

void Session::handle(const Envelope& m) {
  dlog::debug(peer_ + ": received " + sluice::control::kind(m));
  switch (state_) {
    case State::kHello: {
      if (!m.has_hello() || m.hello().client_nonce().size() != sluice::control::kNonceSize) {
        dlog::warn(peer_ + ": expected hello with a " + std::to_string(sluice::control::kNonceSize) +
                  "-byte nonce, got " + sluice::control::kind(m) + "; dropping the connection");
        stop("protocol error before authentication");
        return;
      }
      if (m.hello().protocol_version() != sluice::control::kProtocolVersion) {
        dlog::warn(peer_ + ": protocol version " + std::to_string(m.hello().protocol_version()) +
                  ", this daemon speaks " + std::to_string(sluice::control::kProtocolVersion));
        Envelope r;
        r.mutable_auth_result()->set_ok(false);
        r.mutable_auth_result()->set_message("protocol version mismatch: daemon speaks version " +
                                             std::to_string(sluice::control::kProtocolVersion));
        state_ = State::kRefused;  // closed once the refusal is written
        send(r);
        return;
      }
      client_nonce_ = m.hello().client_nonce();
      server_nonce_ = sluice::control::random_bytes(sluice::control::kNonceSize);
      Envelope c;
      c.mutable_challenge()->set_protocol_version(sluice::control::kProtocolVersion);
      c.mutable_challenge()->set_server_nonce(server_nonce_);
      send(c);
      state_ = State::kResponse;
      return;
    }
    case State::kResponse: {
      const std::string expected = sluice::control::client_proof(config_.token, server_nonce_, client_nonce_);
      if (!m.has_auth_response() || !sluice::control::equal_macs(m.auth_response().mac(), expected)) {
        dlog::warn(peer_ + ": authentication failed (" +
                  (m.has_auth_response() ? std::string("wrong token") : std::string("expected auth_response, got ") +
                                                                             sluice::control::kind(m)) +
                  "); refusing it");
        Envelope r;
        r.mutable_auth_result()->set_ok(false);
        r.mutable_auth_result()->set_message("authentication failed: the console's token does not match this daemon's");
        // Let the refusal go out, then close (the deadline closes it if the peer stalls).
        state_ = State::kRefused;
        send(r);
        return;
      }
      Envelope r;
      r.mutable_auth_result()->set_ok(true);
      r.mutable_auth_result()->set_server_proof(
          sluice::control::server_proof(config_.token, client_nonce_, server_nonce_));
      char name[HOST_NAME_MAX + 1] = {};
      gethostname(name, sizeof name - 1);
      r.mutable_auth_result()->set_host(name);
      send(r);
      state_ = State::kAuthenticated;
      dlog::info(peer_ + ": authenticated");
      arm_deadline(kConsoleSilence, "no heartbeat from the console for 3 s");
      heartbeat();
      return;
    }
    case State::kAuthenticated:
      break;
    case State::kRefused:
    case State::kClosed:
      return;
  }
  arm_deadline(kConsoleSilence, "no heartbeat from the console for 3 s");
  switch (m.body_case()) {
    case Envelope::kHeartbeat:
      return;
    case Envelope::kLaunch:
      launch(m.launch(), m);
      return;
    case Envelope::kAbort:
      if (app_pid_ > 0 && !app_status_) {
        app_expected_end_ = true;
        kill_app(SIGTERM, "the console aborted the run: " + m.abort().reason());
      }
      return;
    case Envelope::kShutdown:
      if (app_pid_ > 0 && !app_status_) {
        app_expected_end_ = true;
        app_send(m);
        kill_timer_.expires_after(kShutdownGrace);
        kill_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
          if (ec || self->app_status_) return;
          self->kill_app(SIGKILL, "it did not exit within 3 s of shutdown");
        });
      }
      return;
    case Envelope::kWiring:
    case Envelope::kStartUnit:
      if (app_pid_ <= 0 || app_status_) {
        send_error(std::string(sluice::control::kind(m)) + " but no application is running here");
        return;
      }
      app_send(m);
      return;
    default:
      dlog::warn(peer_ + ": unexpected " + sluice::control::kind(m) + " from a console; dropping the connection");
      stop("protocol error");
      return;
  }
}

void Session::heartbeat() {
  if (state_ == State::kClosed) return;
  Envelope h;
  h.mutable_heartbeat()->set_sequence(++heartbeat_sequence_);
  send(h);
  heartbeat_.expires_after(kHeartbeatEvery);
  heartbeat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->heartbeat();
  });
}

void Session::send(const Envelope& message) {
  if (!socket_.is_open()) return;
  const bool idle = writes_.empty();
  writes_.push_back(sluice::control::encode(message));
  if (idle) do_write();
}

void Session::do_write() {
  asio::async_write(socket_, asio::buffer(writes_.front()),
                    [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                      if (ec) {
                        if (ec != asio::error::operation_aborted) self->stop("write failed: " + ec.message());
                        return;
                      }
                      self->writes_.pop_front();
                      if (!self->writes_.empty()) {
                        self->do_write();
                      } else if (self->state_ == State::kRefused) {
                        self->stop("refused");
                      }
                    });
}

void Session::launch(const sluice::control::Launch& launch, const Envelope& whole) {
  if (app_pid_ > 0) {
    send_error("this connection already launched application '" + app_id_ + "'");
    return;
  }
  app_id_ = launch.application_id();
  host_ = launch.host();
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    send_error(std::string("socketpair failed: ") + std::strerror(errno));
    return;
  }
  const pid_t parent = ::getpid();
  server_.io().notify_fork(asio::execution_context::fork_prepare);
  const pid_t pid = ::fork();
  if (pid < 0) {
    server_.io().notify_fork(asio::execution_context::fork_parent);
    ::close(fds[0]);
    ::close(fds[1]);
    send_error(std::string("fork failed: ") + std::strerror(errno));
    return;
  }
  if (pid == 0) {
    // The child: its own process group, killed when sluiced dies, control on fd 3.
    ::setpgid(0, 0);
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) _exit(127);
    sigset_t none;
    sigemptyset(&none);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::signal(SIGPIPE, SIG_DFL);
    if (fds[1] != 3) {
      ::dup2(fds[1], 3);
    } else {
      ::fcntl(3, F_SETFD, 0);
    }
    ::close_range(4, ~0U, 0);
    const char* argv[] = {config_.appd_path.c_str(), "--control-fd", "3", nullptr};
    ::execv(config_.appd_path.c_str(), const_cast<char* const*>(argv));
    const std::string msg = "sluice-appd: cannot execute " + config_.appd_path + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, msg.data(), msg.size());
    _exit(127);
  }
  server_.io().notify_fork(asio::execution_context::fork_parent);
  ::setpgid(pid, pid);  // also from here, so the group exists before any kill
  ::close(fds[1]);
  app_pid_ = pid;
  app_socket_.assign(asio::local::stream_protocol(), fds[0]);
  server_.watch(pid, shared_from_this());
  dlog::info(peer_ + ": launched application '" + app_id_ + "' as host " + host_ + ": sluice-appd pid " +
            std::to_string(pid));
  app_send(whole);
  app_read_header();
}

void Session::app_send(const Envelope& message) {
  if (!app_socket_.is_open()) return;
  const bool idle = app_writes_.empty();
  app_writes_.push_back(sluice::control::encode(message));
  if (idle) app_do_write();
}

void Session::app_do_write() {
  asio::async_write(app_socket_, asio::buffer(app_writes_.front()),
                    [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                      if (ec) {
                        self->app_writes_.clear();
                        return;  // the app daemon is gone; SIGCHLD reports it
                      }
                      self->app_writes_.pop_front();
                      if (!self->app_writes_.empty()) self->app_do_write();
                    });
}

void Session::app_read_header() {
  asio::async_read(app_socket_, asio::buffer(app_header_),
                   [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                     if (ec) {
                       self->app_eof_ = true;
                       self->maybe_report_exit();
                       return;
                     }
                     const std::uint32_t length = sluice::control::decode_length(self->app_header_.data());
                     if (auto problem = sluice::control::check_length(length)) {
                       dlog::error(self->peer_ + ": app daemon sent a bad frame: " + *problem);
                       self->kill_app(SIGKILL, "it broke the control protocol");
                       self->app_eof_ = true;
                       return;
                     }
                     self->app_read_body(length);
                   });
}

void Session::app_read_body(std::uint32_t length) {
  app_body_.resize(length);
  asio::async_read(app_socket_, asio::buffer(app_body_),
                   [self = shared_from_this()](boost::system::error_code ec, std::size_t) {
                     if (ec) {
                       self->app_eof_ = true;
                       self->maybe_report_exit();
                       return;
                     }
                     Envelope m;
                     if (auto problem = sluice::control::decode_body(self->app_body_.data(), self->app_body_.size(), &m)) {
                       dlog::error(self->peer_ + ": app daemon sent " + *problem);
                       self->kill_app(SIGKILL, "it broke the control protocol");
                       self->app_eof_ = true;
                       return;
                     }
                     self->app_last_heard_ = std::chrono::steady_clock::now();
                     switch (m.body_case()) {
                       case Envelope::kHeartbeat:
                         break;
                       case Envelope::kStarted:
                         if (!self->app_started_) {
                           self->app_started_ = true;
                           self->watch_app();
                         }
                         self->send(m);
                         break;
                       case Envelope::kAppReady:
                       case Envelope::kUnitDone:
                       case Envelope::kProgress:
                       case Envelope::kFailure:
                         self->send(m);
                         break;
                       default:
                         dlog::warn(self->peer_ + ": ignoring " + sluice::control::kind(m) + " from the app daemon");
                     }
                     self->app_read_header();
                   });
}

void Session::kill_app(int sig, const std::string& why) {
  if (app_pid_ <= 0 || app_status_) return;
  dlog::info(peer_ + ": killing sluice-appd pid " + std::to_string(app_pid_) + " (" + signal_name(sig) +
            "): " + why);
  ::kill(-app_pid_, sig);
  if (sig != SIGKILL) {
    kill_timer_.expires_after(kKillGrace);
    kill_timer_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
      if (ec || self->app_status_) return;
      self->kill_app(SIGKILL, "it did not exit within 1 s");
    });
  }
}

void Session::watch_app() {
  app_watch_.expires_after(std::chrono::milliseconds(500));
  app_watch_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->app_status_ || self->state_ == State::kClosed) return;
    const auto quiet = std::chrono::steady_clock::now() - self->app_last_heard_;
    if (quiet > kAppSilence) {
      const std::string what = "the app daemon (sluice-appd pid " + std::to_string(self->app_pid_) +
                               ") sent no heartbeat for " +
                               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(quiet).count()) +
                               " ms (stopped or hung); sluiced killed it";
      Envelope f;
      f.mutable_failure()->set_host(self->host_);
      f.mutable_failure()->set_copy(-1);
      f.mutable_failure()->set_stage("app daemon");
      f.mutable_failure()->set_message(what);
      self->send(f);
      self->kill_app(SIGKILL, "it sent no heartbeat for 4 s");
      return;
    }
    self->watch_app();
  });
}

void Session::app_exited(int status) {
  app_status_ = status;
  kill_timer_.cancel();
  // Anything left in the group (nothing, normally) goes with it.
  ::kill(-app_pid_, SIGKILL);
  std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                      : "was killed by " + signal_name(WTERMSIG(status));
  dlog::log(app_expected_end_ || (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? dlog::Level::kInfo
                                                                                 : dlog::Level::kWarn,
           peer_ + ": sluice-appd pid " + std::to_string(app_pid_) + " (application '" + app_id_ + "') " + how);
  maybe_report_exit();
}

void Session::maybe_report_exit() {
  // Report after the app daemon's last messages (a failure, typically) were relayed.
  if (!app_status_ || !app_eof_ || state_ == State::kClosed) return;
  const int status = *app_status_;
  Envelope e;
  auto* r = e.mutable_exit_report();
  r->set_host(host_);
  r->set_pid(app_pid_);
  r->set_exited(WIFEXITED(status));
  r->set_exit_status(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
  r->set_signal(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r->set_expected(app_expected_end_);
  send(e);
}

// ---- Server ----------------------------------------------------------------------------

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

Server::Server(const std::string& listen, Config config)
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

void Server::do_accept() {
  acceptor_.async_accept([this](boost::system::error_code ec, tcp::socket socket) {
    if (!acceptor_.is_open()) return;
    if (!ec) {
      boost::system::error_code ignored;
      socket.set_option(tcp::no_delay(true), ignored);
      socket.set_option(asio::socket_base::keep_alive(true), ignored);
      auto session = std::make_shared<Session>(std::move(socket), *this, config_, next_id_++);
      sessions_.insert(session);
      session->start();
    } else if (ec != asio::error::operation_aborted) {
      dlog::warn("accept failed: " + ec.message());
    }
    do_accept();
  });
}

void Server::do_await_stop() {
  stop_signals_.async_wait([this](boost::system::error_code ec, int sig) {
    if (ec) return;
    dlog::info("received " + signal_name(sig) + "; killing every app daemon and exiting");
    boost::system::error_code ignored;
    acceptor_.close(ignored);
    for (auto& [pid, weak] : children_) ::kill(-pid, SIGKILL);
    auto sessions = sessions_;
    for (auto& s : sessions) s->stop("the daemon is shutting down");
    for (auto& [pid, weak] : children_) ::waitpid(pid, nullptr, 0);
    io_.stop();
  });
}

void Server::do_await_child() {
  child_signals_.async_wait([this](boost::system::error_code ec, int) {
    if (ec) return;
    int status = 0;
    pid_t pid;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      auto it = children_.find(pid);
      if (it == children_.end()) continue;
      if (auto session = it->second.lock()) {
        session->app_exited(status);
      } else {
        dlog::info("sluice-appd pid " + std::to_string(pid) + " ended after its console left");
      }
      children_.erase(it);
    }
    do_await_child();
  });
}

std::string default_appd_path() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) return "sluice-appd";
  return (self.parent_path() / "sluice-appd").string();
}

int usage(const std::string& problem) {
  std::cerr << "sluiced: " << problem << "\n"
            << "usage: sluiced --listen ADDR:PORT --token-file FILE [--appd PATH] [--verbose]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  dlog::log_name() = "sluiced";
  std::string listen = "127.0.0.1:7700";
  std::string token_file;
  std::string appd = default_appd_path();
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&](const char* name) -> std::optional<std::string> {
      if (i + 1 >= argc) return std::nullopt;
      (void)name;
      return std::string(argv[++i]);
    };
    if (arg == "--listen") {
      auto v = value("--listen");
      if (!v) return usage("--listen needs ADDR:PORT");
      listen = *v;
    } else if (arg == "--token-file") {
      auto v = value("--token-file");
      if (!v) return usage("--token-file needs a file");
      token_file = *v;
    } else if (arg == "--appd") {
      auto v = value("--appd");
      if (!v) return usage("--appd needs a path");
      appd = *v;
    } else if (arg == "--verbose" || arg == "-v") {
      dlog::min_level() = dlog::Level::kDebug;
    } else if (arg == "--help" || arg == "-h") {
      usage("the sluice host daemon");
      return 0;
    } else {
      return usage("unknown argument '" + arg + "'");
    }
  }
  if (token_file.empty()) return usage("--token-file is required (the shared secret consoles must prove they know)");
  ::signal(SIGPIPE, SIG_IGN);
  try {
    Config config;
    config.token = sluice::control::read_token_file(token_file);
    config.appd_path = appd;
    if (::access(appd.c_str(), X_OK) != 0) {
      throw sluice::Error("app daemon '" + appd + "' is not executable; install sluice-appd next to sluiced or pass --appd PATH");
    }
    Server server(listen, std::move(config));
    server.run();
  } catch (const std::exception& e) {
    dlog::error(e.what());
    return 1;
  }
  return 0;
}
