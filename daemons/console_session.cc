#include "daemons/console_session.h"

#include <limits.h>
#include <unistd.h>

#include "control/tls_server.h"
#include "daemons/host_daemon.h"
#include "daemons/log.h"

namespace asio = boost::asio;
using asio::ip::tcp;
using sluice::control::Envelope;
namespace dlog = sluice::daemon;

namespace sluice::sluiced {

namespace {

// Made on first use: the auth_result names this machine.
const control::TlsSession::Style& console_style() {
  static const control::TlsSession::Style style = [] {
    char name[HOST_NAME_MAX + 1] = {};
    gethostname(name, sizeof name - 1);
    // "closing: TLS failure" or "closing: protocol error" after the warning that says which.
    return control::TlsSession::Style{"console", name, "no heartbeat from the console for 3 s", dlog::Level::kInfo,
                                      true, false, "consoles speak TLS 1.3 since sluice control protocol 2"};
  }();
  return style;
}

}  // namespace

ConsoleSession::ConsoleSession(tcp::socket socket, HostDaemon& daemon, std::uint64_t id,
                               control::Admission::Ticket ticket)
    : TlsSession(std::move(socket), daemon.server(), id, std::move(ticket), console_style()),
      daemon_(daemon),
      protocol_(*this, *this) {}

void ConsoleSession::begin() {
  dlog::debug(label() + ": connected");
  TlsSession::begin();
}

void ConsoleSession::daemon_stopping(const std::string& why) {
  if (!authenticated()) return stop(why);
  Envelope m;
  m.mutable_error()->set_message(why);
  send(m);
  finish(why, true);  // and wait for the console to close its end: a reset could lose it
}

void ConsoleSession::ending(const std::string& why) {
  if (authenticated()) dlog::info(label() + ": closing: " + why);
  if (app_) app_->console_gone();
}

void ConsoleSession::queue_shrank() {
  if (app_ && queued_bytes() < kReadOnBelow) app_->console_has_room();
}

void ConsoleSession::close(const std::string& why, bool after_reply) {
  server().count_refusal(!authenticated() ? "hello_refused" : after_reply ? "request_refused" : "protocol_error");
  if (!after_reply) return fail(why, "protocol error");
  // Let the reply go out, then close (the deadline closes it if the peer stalls).
  close_after_queue("refused: " + why);
}

// --- Before TLS: a console of protocol version 1? -------------------------------------------

void ConsoleSession::not_tls(unsigned char first) {
  if (first == 0x00) return answer_plain_console();
  TlsSession::not_tls(first);
}

// A console of protocol version 1 sends a plain frame (a 4-byte length, then protobuf):
// say why, in the framing it reads, before closing.
void ConsoleSession::answer_plain_console() {
  Envelope r;
  r.mutable_auth_result()->set_ok(false);
  r.mutable_auth_result()->set_message(
      "this daemon speaks the control protocol over TLS 1.3 (version " + std::to_string(control::kProtocolVersion) +
      "); this console speaks plain text (version 1): run a console of the same sluice version as the daemon");
  plain_reply_ = control::encode(r);
  asio::async_write(stream().next_layer(), asio::buffer(plain_reply_),
                    [self = self<ConsoleSession>()](boost::system::error_code, std::size_t) {
                      self->stop("not a TLS client: a console of protocol version 1 (plain text); told it to upgrade");
                    });
}

// --- ConsoleProtocol::Handler ------------------------------------------------------------------

std::optional<std::string> ConsoleSession::launch(const Envelope& received) {
  // The data ports are this host's to choose (its firewall), not the console's.
  Envelope m = received;
  const text::PortRange& ports = daemon_.config().data_ports;
  m.mutable_launch()->set_data_port_first(ports.first);
  m.mutable_launch()->set_data_port_last(ports.last);
  auto app = std::make_shared<AppSupervisor>(daemon_.io(), label(), m.launch(),
                                             [weak = weak_from_this()](const Envelope& message) {
                                               auto self = std::static_pointer_cast<ConsoleSession>(weak.lock());
                                               if (!self) return true;
                                               self->send(message);
                                               return self->queued_bytes() < kHoldBackAt;
                                             });
  if (auto problem = app->start(daemon_.config().appd_path, m, daemon_.apps())) return problem;
  app_ = std::move(app);
  return std::nullopt;
}

bool ConsoleSession::app_running() { return app_ != nullptr && app_->running(); }

void ConsoleSession::relay(const Envelope& message) { app_->send(message); }

void ConsoleSession::abort(const std::string& reason) { app_->abort(reason); }

void ConsoleSession::shutdown(const Envelope& message) { app_->shutdown(message); }

}  // namespace sluice::sluiced
