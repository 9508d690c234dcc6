// ConsoleSession: one console's connection to sluiced, and the app daemon it launched.
//
// A control::TlsSession (control/tls_session.h: TLS 1.3, the hello within 5 s, heartbeats
// every 500 ms, the console dropped after 3 s of silence, a broken protocol or a record that
// fails TLS's integrity check), which first looks at the connection's first byte: a TLS
// client gets the handshake; a console of protocol version 1 (plain-text frames) is told,
// in its own framing, to upgrade; anything else is closed. Inside TLS the console may
// launch one application (an AppSupervisor starts its sluice-appd), pass it wiring,
// start_unit, abort and shutdown, and hears what it says; ConsoleProtocol
// (console_protocol.h) decides what each message does. When the connection closes, for
// whatever reason, the app daemon is killed.
//
// An Asio session: enable_shared_from_this, start()/stop(), handlers hold `self`.
// Single-threaded: everything runs on the HostDaemon's io_context thread.
#ifndef SLUICE_DAEMONS_CONSOLE_SESSION_H_
#define SLUICE_DAEMONS_CONSOLE_SESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "control/tls_session.h"
#include "daemons/app_supervisor.h"
#include "daemons/console_protocol.h"

namespace sluice::sluiced {

class HostDaemon;

class ConsoleSession : public control::TlsSession, private ConsoleProtocol::Handler {
 public:
  // What the app daemon says waits for the console up to kHoldBackAt bytes; past that its
  // supervisor reads no more until the console has taken all but kReadOnBelow.
  static constexpr std::size_t kHoldBackAt = std::size_t{4} << 20;
  static constexpr std::size_t kReadOnBelow = std::size_t{1} << 20;

  // `id` numbers the session in log lines. `daemon` outlives the session. `ticket` counts
  // the connection against the daemon's caps until the console is authenticated.
  ConsoleSession(boost::asio::ip::tcp::socket socket, HostDaemon& daemon, std::uint64_t id,
                 control::Admission::Ticket ticket);

  // sluiced is stopping: tells an authenticated console `why` (a DaemonError) and closes
  // once that is written; any other connection closes now.
  void daemon_stopping(const std::string& why);

 private:
  // control::TlsSession
  control::ServerProtocol& protocol() override { return protocol_; }
  void begin() override;
  void ending(const std::string& why) override;
  void queue_shrank() override;
  void close(const std::string& why, bool after_reply) override;

  // A first byte of 0 is a console of protocol version 1: answer it in its framing.
  void not_tls(unsigned char first) override;
  void answer_plain_console();

  // ConsoleProtocol::Handler
  std::optional<std::string> launch(const control::Envelope& launch) override;
  bool app_running() override;
  void relay(const control::Envelope& message) override;
  void abort(const std::string& reason) override;
  void shutdown(const control::Envelope& message) override;

  HostDaemon& daemon_;
  ConsoleProtocol protocol_;
  std::string plain_reply_;             // the frame for a version-1 console
  std::shared_ptr<AppSupervisor> app_;  // once launched
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_CONSOLE_SESSION_H_
