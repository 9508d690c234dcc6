// ServeProtocol: what a client may say to `sluice serve` and in which order, without the
// I/O. The bytes that come out of the TLS session go in (feed); decisions come out through
// the Session interface, which ServeSession implements with a socket, timers and the
// Application (and the tests and the fuzz target with checks, serve_protocol_checker.h).
//
// The first frame must be a hello of this protocol version, in at most 4 KiB: the session
// is then open (Session::opened). Then one request, submit or stop, in frames of up to
// 16 MiB (a submit carries the payload); after it, heartbeats only. A malformed frame,
// a second request, anything else or anything out of order closes the connection
// (Session::close) and nothing more is read: after close() no other Session method is
// called. A request the server turns down (a submit while it stops) is answered with an
// `error` and the connection closes once that is out.
//
// Not thread-safe: one session's thread (the serve's io_context).
#ifndef SLUICE_CONSOLE_SERVE_PROTOCOL_H_
#define SLUICE_CONSOLE_SERVE_PROTOCOL_H_

#include <cstddef>
#include <optional>
#include <string>

#include "control/codec.h"

namespace sluice::console {

// Before the hello no message is larger than a few hundred bytes: a stranger cannot make
// serve allocate 16 MiB.
inline constexpr std::size_t kServeHelloLimit = 4096;

class ServeProtocol {
 public:
  class Session {
   public:
    virtual ~Session() = default;
    // Sends a message to the client.
    virtual void send(const control::Envelope& message) = 0;
    // The client said a valid hello; `client` is its free-text description.
    virtual void opened(const std::string& client) = 0;
    // Any message after the hello (the client is alive).
    virtual void heard() = 0;
    // Appends a unit of work with `work`; returns why it was turned down (nothing queued).
    virtual std::optional<std::string> submit(const std::string& work) = 0;
    // Ends the deployment once the accepted units ended.
    virtual void stop() = 0;
    // The client broke the protocol (`why`, for the log), or was turned down after a reply
    // (`after_reply`: close once what was sent is out).
    virtual void close(const std::string& why, bool after_reply) = 0;
  };

  explicit ServeProtocol(Session& session) : session_(session), decoder_(kServeHelloLimit) {}
  ServeProtocol(const ServeProtocol&) = delete;
  ServeProtocol& operator=(const ServeProtocol&) = delete;

  // Bytes from the client, in order, in chunks of any size; handles every complete frame.
  void feed(const void* data, std::size_t size);
  // The client closed its side. Returns the reason, for the log.
  std::string end_of_input() const;

  bool open() const { return state_ == State::kOpen || state_ == State::kRequested; }
  bool requested() const { return state_ == State::kRequested; }
  bool closed() const { return state_ == State::kClosed; }

 private:
  enum class State { kHello, kOpen, kRequested, kClosed };

  void handle(const control::Envelope& message);
  void on_hello(const control::Envelope& message);
  void on_request(const control::Envelope& message);
  void close(const std::string& why, bool after_reply = false);

  Session& session_;
  control::FrameDecoder decoder_;
  State state_ = State::kHello;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_PROTOCOL_H_
