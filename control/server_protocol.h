// ServerProtocol: what every control server (sluiced, `sluice serve`) does with its peer's
// bytes before it knows what they ask for, without the I/O: the framing, and the opening.
// The bytes that come out of the TLS session go in (feed); decisions come out through the
// Session interface (the server's session, control/server_session.h; the tests and the
// fuzz targets implement it with checks, server_protocol_checker.h).
//
// The first frame must be a hello of this protocol version, in at most 4 KiB: the session
// is then open (Session::opened). Another version gets auth_result{ok: false} naming both,
// and the connection closes after that reply. After the hello, frames of up to 16 MiB, each
// counted as a sign of life (Session::heard) and handed to the subclass (on_message), which
// decides what it means: ConsoleProtocol (daemons/) for sluiced, ServeProtocol (console/)
// for `sluice serve`. A malformed frame, anything out of order, or what the subclass
// refuses closes the connection (Session::close) and nothing more is read: after close()
// no other Session method is called.
//
// Not thread-safe: one session's thread (the server's io_context).
#ifndef SLUICE_CONTROL_SERVER_PROTOCOL_H_
#define SLUICE_CONTROL_SERVER_PROTOCOL_H_

#include <cstddef>
#include <string>

#include "control/codec.h"

namespace sluice::control {

// Before the hello no message is larger than a few hundred bytes: a peer that has not
// authenticated cannot make a server allocate 16 MiB.
inline constexpr std::size_t kHelloLimit = 4096;

class ServerProtocol {
 public:
  // The server's side of one connection, as far as the opening goes.
  class Session {
   public:
    virtual ~Session() = default;
    // Sends a message to the peer.
    virtual void send(const Envelope& message) = 0;
    // The peer said a valid hello; `client` is its free-text description.
    virtual void opened(const std::string& client) = 0;
    // Any message after the hello (the peer is alive).
    virtual void heard() = 0;
    // The peer broke the protocol (`why`, for the log), or was refused after a reply
    // (`after_reply`: close once what was sent is out).
    virtual void close(const std::string& why, bool after_reply) = 0;
  };

  // How a server names itself and its peer in what it says (the refusal of another version,
  // the end of input). Static strings.
  struct Wording {
    const char* peer;      // "console": "connection closed by the console"
    const char* server;    // "this daemon": "the console speaks version 1, this daemon 2"
    const char* speaker;   // "this daemon": "protocol version 1, this daemon speaks 2" (the log)
    const char* advice;    // "run a console and a sluiced of the same sluice version"
  };

  // `session` outlives the protocol.
  ServerProtocol(Session& session, const Wording& wording) : session_(session), wording_(wording) {}
  virtual ~ServerProtocol() = default;
  ServerProtocol(const ServerProtocol&) = delete;
  ServerProtocol& operator=(const ServerProtocol&) = delete;

  // Bytes from the peer, in order, in chunks of any size; handles every complete frame.
  void feed(const void* data, std::size_t size);
  // The peer closed its side: a clean end between frames, or a truncated frame. Returns
  // the reason, for the log.
  std::string end_of_input() const;

  // The hello was accepted (and the connection not closed since).
  bool open() const { return state_ == State::kOpen; }
  bool closed() const { return state_ == State::kClosed; }

 protected:
  // A message after the hello; heard() has been called. REQUIRES: open().
  virtual void on_message(const Envelope& message) = 0;
  // What the peer owes when it closes an open connection, for end_of_input(): "" (the
  // default), or e.g. " before its request".
  virtual std::string owed() const { return ""; }

  // Closes the connection (Session::close) and reads no more. Idempotent.
  void close(const std::string& why, bool after_reply = false);
  // Sends error{message}.
  void send_error(const std::string& message);

 private:
  enum class State { kHello, kOpen, kClosed };

  void on_hello(const Envelope& message);

  Session& session_;
  const Wording& wording_;
  FrameDecoder decoder_{kHelloLimit};
  State state_ = State::kHello;
};

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_SERVER_PROTOCOL_H_
