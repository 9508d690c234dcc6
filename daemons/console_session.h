// ConsoleSession: one console's connection to sluiced, and the app daemon it launched.
//
// The connection must be TLS 1.3 (tls/tls.h): the first byte tells. A TLS client gets
// the handshake, which authenticates both sides (the token's PSK, or certificates); a
// console of protocol version 1 (plain-text frames) is told, in its own framing, to
// upgrade; anything else is closed. Inside TLS the console says hello, then may launch one
// application (an AppSupervisor starts its sluice-appd), pass it wiring, start_unit, abort
// and shutdown, and hears what it says; ConsoleProtocol (console_protocol.h) decides what
// each message does. Handshake and hello must be done within 5 s. The session heartbeats
// the console every 500 ms, and closes the connection, killing the app daemon, when the
// console goes (closed connection, or 3 s without a word), breaks the protocol, or sends a
// record that fails TLS's integrity check.
//
// Until the hello the connection holds an Admission ticket (the daemon's caps on
// unauthenticated connections) and logs through the daemon's rate-limited log.
//
// An Asio session: enable_shared_from_this, start()/stop(), handlers hold `self`.
// Single-threaded: everything runs on the HostDaemon's io_context thread.
#ifndef SLUICE_DAEMONS_CONSOLE_SESSION_H_
#define SLUICE_DAEMONS_CONSOLE_SESSION_H_

#include <array>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>

#include "control/codec.h"
#include "tls/tls.h"
#include "daemons/admission.h"
#include "daemons/app_supervisor.h"
#include "daemons/console_protocol.h"
#include "daemons/frame_stream.h"

namespace sluice::sluiced {

class HostDaemon;

class ConsoleSession : public std::enable_shared_from_this<ConsoleSession>, private ConsoleProtocol::Session {
 public:
  // `id` numbers the session in log lines. `daemon` outlives the session. `ticket` counts
  // the connection against the daemon's caps until the console is authenticated.
  ConsoleSession(boost::asio::ip::tcp::socket socket, HostDaemon& daemon, std::uint64_t id, Admission::Ticket ticket);

  // Starts: the console has 5 s to finish the TLS handshake and say hello.
  void start();
  // The console has authenticated (TLS and hello).
  bool authenticated() const { return opened_; }
  // Closes the connection and kills the app daemon, if one runs; logs `why`. Idempotent.
  void stop(const std::string& why);

 private:
  using TlsStream = boost::asio::ssl::stream<boost::asio::ip::tcp::socket>;
  enum class Phase { kFirstByte, kHandshake, kTls, kClosing, kClosed };

  void await_first_byte();
  void on_first_byte();
  void answer_plain_console();
  void handshake();
  void on_handshake(const boost::system::error_code& ec);
  void read_next();
  void on_read(const boost::system::error_code& ec, std::size_t n);
  // A TLS-level failure, as the daemon explains it (tls/tls_errors.h).
  std::string tls_failure(const boost::system::error_code& ec, bool established);
  void on_written(const boost::system::error_code& ec);
  void arm_deadline(std::chrono::steady_clock::duration after, std::string what);
  void heartbeat();
  // Closes after a failure: an authenticated console's is a warning of its own; before
  // that, the one rate-limited line stop() writes says it.
  void fail(const std::string& why, const std::string& short_why);

  // ConsoleProtocol::Session
  void send(const control::Envelope& message) override;
  void opened(const std::string& client) override;
  void heard() override;
  std::optional<std::string> launch(const control::Envelope& launch) override;
  bool app_running() override;
  void relay(const control::Envelope& message) override;
  void abort(const std::string& reason) override;
  void shutdown(const control::Envelope& message) override;
  void close(const std::string& why, bool after_reply) override;

  HostDaemon& daemon_;
  const std::uint64_t id_;
  Admission::Ticket ticket_;
  tls::TlsNotes notes_;  // before stream_: its SSL object points here
  FrameStream<TlsStream> stream_;
  ConsoleProtocol protocol_;
  std::string peer_;
  Phase phase_ = Phase::kFirstByte;
  bool opened_ = false;
  std::string closing_reason_;   // kClosing: stop with it once the reply is out
  std::string plain_reply_;      // the frame for a version-1 console
  std::array<char, 16384> read_buffer_{};
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer heartbeat_;
  std::uint64_t heartbeat_sequence_ = 0;
  std::shared_ptr<AppSupervisor> app_;  // once launched
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_CONSOLE_SESSION_H_
