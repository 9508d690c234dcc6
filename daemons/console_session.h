// ConsoleSession: one console's connection to sluiced, and the app daemon it launched.
//
// The console first proves it knows the shared token (control/auth.h): hello, challenge,
// auth_response, auth_result, within 5 s and in frames of at most 4096 bytes. Then it may
// launch one application (an AppSupervisor starts its sluice-appd), pass it wiring,
// start_unit, abort and shutdown, and hears what it says. The session heartbeats the console
// every 500 ms, and closes the connection, killing the app daemon, when the console goes
// (closed connection, or 3 s without a word) or breaks the protocol.
//
// An Asio session: enable_shared_from_this, start()/stop(), handlers hold `self`.
// Single-threaded: everything runs on the HostDaemon's io_context thread.
#ifndef SLUICE_DAEMONS_CONSOLE_SESSION_H_
#define SLUICE_DAEMONS_CONSOLE_SESSION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "control/codec.h"
#include "daemons/app_supervisor.h"
#include "daemons/frame_stream.h"

namespace sluice::sluiced {

class HostDaemon;

class ConsoleSession : public std::enable_shared_from_this<ConsoleSession> {
 public:
  // `id` numbers the session in log lines. `daemon` outlives the session.
  ConsoleSession(boost::asio::ip::tcp::socket socket, HostDaemon& daemon, std::uint64_t id);

  // Starts reading; the console has 5 s to authenticate.
  void start();
  // Closes the connection and kills the app daemon, if one runs; logs `why`. Idempotent.
  void stop(const std::string& why);

 private:
  enum class State { kHello, kResponse, kAuthenticated, kRefused, kClosed };

  void read_next();
  void on_read(const FrameRead& r);
  void on_written(const boost::system::error_code& ec);
  void handle(const control::Envelope& message);
  // Before authentication: the hello, then the auth_response.
  void on_hello(const control::Envelope& message);
  void on_auth_response(const control::Envelope& message);
  void refuse(const std::string& message);
  // After authentication.
  void on_command(const control::Envelope& message);
  void launch(const control::Envelope& launch);

  void send(const control::Envelope& message);
  void send_error(const std::string& message);
  void arm_deadline(std::chrono::steady_clock::duration after, std::string what);
  void heartbeat();

  HostDaemon& daemon_;
  const std::uint64_t id_;
  FrameStream<boost::asio::ip::tcp::socket> stream_;
  std::string peer_;
  State state_ = State::kHello;
  std::string client_nonce_;
  std::string server_nonce_;
  boost::asio::steady_timer deadline_;
  boost::asio::steady_timer heartbeat_;
  std::uint64_t heartbeat_sequence_ = 0;
  std::shared_ptr<AppSupervisor> app_;  // once launched
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_CONSOLE_SESSION_H_
