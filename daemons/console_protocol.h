// ConsoleProtocol: what a console may say to sluiced and in which order, without the I/O.
// The bytes that come out of the TLS session go in (feed); decisions come out through the
// Session interface, which ConsoleSession implements with sockets, timers and an app
// daemon (and the fuzzer, fuzz_console_protocol.cc, with checks).
//
// The first frame must be a hello of this protocol version, in at most 4 KiB: the session
// is then open (Session::opened). After it, frames of up to 16 MiB: heartbeat, launch
// (once), wiring and start_unit (relayed to the app daemon), abort, shutdown. A malformed
// frame, anything else, or anything out of order closes the connection (Session::close),
// and nothing more is read: after close() no other Session method is called.
//
// Not thread-safe: one session's thread (the io_context's).
#ifndef SLUICE_DAEMONS_CONSOLE_PROTOCOL_H_
#define SLUICE_DAEMONS_CONSOLE_PROTOCOL_H_

#include <cstddef>
#include <optional>
#include <string>

#include "control/codec.h"

namespace sluice::sluiced {

// Before the hello no message is larger than a few hundred bytes: an unauthenticated peer
// cannot make the daemon allocate 16 MiB.
inline constexpr std::size_t kHelloLimit = 4096;

class ConsoleProtocol {
 public:
  class Session {
   public:
    virtual ~Session() = default;
    // Sends a message to the console.
    virtual void send(const control::Envelope& message) = 0;
    // The console said a valid hello; `client` is its free-text description.
    virtual void opened(const std::string& client) = 0;
    // Any message after the hello (the console is alive).
    virtual void heard() = 0;
    // Starts the application; returns why it could not (nothing was started).
    virtual std::optional<std::string> launch(const control::Envelope& launch) = 0;
    // The launched app daemon runs (not yet reaped).
    virtual bool app_running() = 0;
    // Passes wiring or start_unit on to the running app daemon.
    virtual void relay(const control::Envelope& message) = 0;
    virtual void abort(const std::string& reason) = 0;
    virtual void shutdown(const control::Envelope& message) = 0;
    // The console broke the protocol (`why`, for the log) or was refused after a reply
    // (`after_reply`: close once what was sent is out).
    virtual void close(const std::string& why, bool after_reply) = 0;
  };

  explicit ConsoleProtocol(Session& session) : session_(session), decoder_(kHelloLimit) {}
  ConsoleProtocol(const ConsoleProtocol&) = delete;
  ConsoleProtocol& operator=(const ConsoleProtocol&) = delete;

  // Bytes from the console, in order, in chunks of any size; handles every complete frame.
  void feed(const void* data, std::size_t size);
  // The console closed its side: a clean end between frames, or a truncated frame.
  // Returns the reason, for the log.
  std::string end_of_input() const;

  bool open() const { return state_ == State::kOpen; }
  bool closed() const { return state_ == State::kClosed; }

 private:
  enum class State { kHello, kOpen, kClosed };

  void handle(const control::Envelope& message);
  void on_hello(const control::Envelope& message);
  void on_command(const control::Envelope& message);
  void close(const std::string& why, bool after_reply = false);
  void send_error(const std::string& message);

  Session& session_;
  control::FrameDecoder decoder_;
  State state_ = State::kHello;
  std::string launched_;  // the application id, once launched
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_CONSOLE_PROTOCOL_H_
