#include "daemons/console_session.h"

#include <limits.h>
#include <unistd.h>

#include "control/auth.h"
#include "daemons/host_daemon.h"
#include "daemons/log.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using sluice::control::Envelope;
namespace dlog = sluice::daemon;

namespace sluice::sluiced {

namespace {

constexpr auto kAuthTimeout = std::chrono::seconds(5);
constexpr auto kHeartbeatEvery = std::chrono::milliseconds(500);
constexpr auto kConsoleSilence = std::chrono::milliseconds(3000);
// Before authentication, no message is larger than a few hundred bytes: do not let an
// unauthenticated peer make us allocate 16 MiB.
constexpr std::size_t kUnauthenticatedLimit = 4096;

}  // namespace

ConsoleSession::ConsoleSession(tcp::socket socket, HostDaemon& daemon, std::uint64_t id)
    : daemon_(daemon),
      id_(id),
      stream_([this](const boost::system::error_code& ec) { on_written(ec); }, std::move(socket)),
      deadline_(daemon.io()),
      heartbeat_(daemon.io()) {
  boost::system::error_code ec;
  auto ep = stream_.socket().remote_endpoint(ec);
  peer_ = ec ? std::string("unknown peer") : ep.address().to_string() + ":" + std::to_string(ep.port());
  peer_ = "console #" + std::to_string(id_) + " (" + peer_ + ")";
}

void ConsoleSession::start() {
  dlog::info(peer_ + ": connected");
  arm_deadline(kAuthTimeout, "did not authenticate within 5 s");
  read_next();
}

void ConsoleSession::arm_deadline(std::chrono::steady_clock::duration after, std::string what) {
  deadline_.expires_after(after);
  deadline_.async_wait([self = shared_from_this(), what](boost::system::error_code ec) {
    if (ec == asio::error::operation_aborted || self->state_ == State::kClosed) return;
    self->stop(what);
  });
}

void ConsoleSession::stop(const std::string& why) {
  if (state_ == State::kClosed) return;
  state_ = State::kClosed;
  dlog::info(peer_ + ": closing: " + why);
  boost::system::error_code ec;
  stream_.socket().shutdown(tcp::socket::shutdown_both, ec);
  stream_.socket().close(ec);
  deadline_.cancel();
  heartbeat_.cancel();
  if (app_) app_->console_gone();
  daemon_.forget(shared_from_this());
}

void ConsoleSession::read_next() {
  auto self = shared_from_this();
  const std::size_t limit = state_ == State::kAuthenticated ? control::kMaxFrame : kUnauthenticatedLimit;
  stream_.read(self, limit, [self](const FrameRead& r) { self->on_read(r); });
}

void ConsoleSession::on_read(const FrameRead& r) {
  if (state_ == State::kClosed) return;
  using Status = FrameRead::Status;
  switch (r.status) {
    case Status::kClosed:
      return stop("connection closed by the console");
    case Status::kTruncated:
      return stop("connection closed in the middle of a frame");
    case Status::kFailed:
      return stop("read failed: " + r.error.message());
    case Status::kBadLength:
      dlog::warn(peer_ + ": " + r.problem + "; dropping the connection");
      return stop("malformed frame");
    case Status::kTooLarge:
      dlog::warn(peer_ + ": frame of " + std::to_string(r.length) + " bytes before authentication (limit " +
                 std::to_string(kUnauthenticatedLimit) + "); dropping the connection");
      return stop("oversized frame before authentication");
    case Status::kBadBody:
      dlog::warn(peer_ + ": " + r.problem + "; dropping the connection");
      return stop("malformed message");
    case Status::kMessage:
      handle(r.message);
      if (state_ != State::kClosed) read_next();
      return;
  }
}

void ConsoleSession::send(const Envelope& message) { stream_.send(shared_from_this(), message); }

void ConsoleSession::on_written(const boost::system::error_code& ec) {
  if (ec) {
    if (ec != asio::error::operation_aborted) stop("write failed: " + ec.message());
    return;
  }
  // Every frame is out: a refusal has been said.
  if (state_ == State::kRefused) stop("refused");
}

void ConsoleSession::send_error(const std::string& message) {
  Envelope e;
  e.mutable_error()->set_message(message);
  send(e);
}

void ConsoleSession::handle(const Envelope& m) {
  dlog::debug(peer_ + ": received " + control::kind(m));
  switch (state_) {
    case State::kHello:
      return on_hello(m);
    case State::kResponse:
      return on_auth_response(m);
    case State::kAuthenticated:
      arm_deadline(kConsoleSilence, "no heartbeat from the console for 3 s");
      return on_command(m);
    case State::kRefused:
    case State::kClosed:
      return;
  }
}

void ConsoleSession::refuse(const std::string& message) {
  Envelope r;
  r.mutable_auth_result()->set_ok(false);
  r.mutable_auth_result()->set_message(message);
  // Let the refusal go out, then close (the deadline closes it if the peer stalls).
  state_ = State::kRefused;
  send(r);
}

void ConsoleSession::on_hello(const Envelope& m) {
  if (!m.has_hello() || m.hello().client_nonce().size() != control::kNonceSize) {
    dlog::warn(peer_ + ": expected hello with a " + std::to_string(control::kNonceSize) + "-byte nonce, got " +
               control::kind(m) + "; dropping the connection");
    stop("protocol error before authentication");
    return;
  }
  if (m.hello().protocol_version() != control::kProtocolVersion) {
    dlog::warn(peer_ + ": protocol version " + std::to_string(m.hello().protocol_version()) +
               ", this daemon speaks " + std::to_string(control::kProtocolVersion));
    refuse("protocol version mismatch: daemon speaks version " + std::to_string(control::kProtocolVersion));
    return;
  }
  client_nonce_ = m.hello().client_nonce();
  server_nonce_ = control::random_bytes(control::kNonceSize);
  Envelope c;
  c.mutable_challenge()->set_protocol_version(control::kProtocolVersion);
  c.mutable_challenge()->set_server_nonce(server_nonce_);
  send(c);
  state_ = State::kResponse;
}

void ConsoleSession::on_auth_response(const Envelope& m) {
  const std::string& token = daemon_.config().token;
  const std::string expected = control::client_proof(token, server_nonce_, client_nonce_);
  if (!m.has_auth_response() || !control::equal_macs(m.auth_response().mac(), expected)) {
    dlog::warn(peer_ + ": authentication failed (" +
               (m.has_auth_response() ? std::string("wrong token")
                                      : std::string("expected auth_response, got ") + control::kind(m)) +
               "); refusing it");
    refuse("authentication failed: the console's token does not match this daemon's");
    return;
  }
  Envelope r;
  r.mutable_auth_result()->set_ok(true);
  r.mutable_auth_result()->set_server_proof(control::server_proof(token, client_nonce_, server_nonce_));
  char name[HOST_NAME_MAX + 1] = {};
  gethostname(name, sizeof name - 1);
  r.mutable_auth_result()->set_host(name);
  send(r);
  state_ = State::kAuthenticated;
  dlog::info(peer_ + ": authenticated");
  arm_deadline(kConsoleSilence, "no heartbeat from the console for 3 s");
  heartbeat();
}

void ConsoleSession::on_command(const Envelope& m) {
  const bool running = app_ != nullptr && app_->running();
  switch (m.body_case()) {
    case Envelope::kHeartbeat:
      return;
    case Envelope::kLaunch:
      return launch(m);
    case Envelope::kAbort:
      if (running) app_->abort(m.abort().reason());
      return;
    case Envelope::kShutdown:
      if (running) app_->shutdown(m);
      return;
    case Envelope::kWiring:
    case Envelope::kStartUnit:
      if (!running) {
        send_error(std::string(control::kind(m)) + " but no application is running here");
        return;
      }
      app_->send(m);
      return;
    default:
      dlog::warn(peer_ + ": unexpected " + control::kind(m) + " from a console; dropping the connection");
      stop("protocol error");
      return;
  }
}

void ConsoleSession::launch(const Envelope& m) {
  if (app_ != nullptr) {
    send_error("this connection already launched application '" + app_->app_id() + "'");
    return;
  }
  auto app = std::make_shared<AppSupervisor>(daemon_.io(), peer_, m.launch(),
                                             [weak = weak_from_this()](const Envelope& message) {
                                               if (auto self = weak.lock()) self->send(message);
                                             });
  if (auto problem = app->start(daemon_.config().appd_path, m, daemon_.apps())) {
    send_error(*problem);
    return;
  }
  app_ = std::move(app);
}

void ConsoleSession::heartbeat() {
  if (state_ == State::kClosed) return;
  Envelope h;
  h.mutable_heartbeat()->set_sequence(++heartbeat_sequence_);
  send(h);
  heartbeat_.expires_after(kHeartbeatEvery);
  heartbeat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->heartbeat();
  });
}

}  // namespace sluice::sluiced
