// ServeProtocol: what a client may say to `sluice serve` after its hello, and in which
// order, without the I/O. The opening (framing, the hello and its version check, closing on
// a broken protocol) is control::ServerProtocol's (control/server_protocol.h); this adds
// the request, which ServeSession carries out with the Application (and the tests and the
// fuzz target with checks, serve_protocol_checker.h).
//
// After the hello: one request, submit or stop (a submit carries the payload, in a frame of
// up to 16 MiB); after it, heartbeats only. A second request or anything else closes the
// connection. A request the server turns down (a submit while it stops) is answered with
// an `error` and the connection closes once that is out.
//
// Not thread-safe: one session's thread (the serve's io_context).
#ifndef SLUICE_CONSOLE_SERVE_PROTOCOL_H_
#define SLUICE_CONSOLE_SERVE_PROTOCOL_H_

#include <optional>
#include <string>

#include "control/server_protocol.h"

namespace sluice::console {

class ServeProtocol : public control::ServerProtocol {
 public:
  // What the requests do: the server's side.
  class Handler {
   public:
    virtual ~Handler() = default;
    // Appends a unit of work with `work`; returns why it was turned down (nothing queued).
    virtual std::optional<std::string> submit(const std::string& work) = 0;
    // Ends the deployment once the accepted units ended.
    virtual void stop() = 0;
  };

  // `session` and `handler` (often one object) outlive the protocol.
  ServeProtocol(Session& session, Handler& handler) : ServerProtocol(session, kWording), handler_(handler) {}

  // The request came (and the connection is not closed).
  bool requested() const { return requested_ && !closed(); }

 private:
  static const Wording kWording;

  void on_message(const control::Envelope& message) override;
  std::string owed() const override { return requested_ ? "" : " before its request"; }

  Handler& handler_;
  bool requested_ = false;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_PROTOCOL_H_
