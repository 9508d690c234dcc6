// ConsoleProtocol: what a console may say to sluiced after its hello, and in which order,
// without the I/O. The opening (framing, the hello and its version check, closing on a
// broken protocol) is control::ServerProtocol's (control/server_protocol.h); this adds the
// commands, which ConsoleSession carries out with an app daemon (and the fuzzer,
// fuzz_console_protocol.cc, with checks: console_protocol_checker.h).
//
// After the hello: heartbeat, launch (once), wiring and start_unit (relayed to the app
// daemon), abort, shutdown. A command that cannot be carried out is answered with an
// `error` and the connection stays open; anything else closes it.
//
// Not thread-safe: one session's thread (the io_context's).
#ifndef SLUICE_DAEMONS_CONSOLE_PROTOCOL_H_
#define SLUICE_DAEMONS_CONSOLE_PROTOCOL_H_

#include <optional>
#include <string>

#include "control/server_protocol.h"

namespace sluice::sluiced {

class ConsoleProtocol : public control::ServerProtocol {
 public:
  // What the console's commands do: the app daemon's side.
  class Handler {
   public:
    virtual ~Handler() = default;
    // Starts the application; returns why it could not (nothing was started).
    virtual std::optional<std::string> launch(const control::Envelope& launch) = 0;
    // The launched app daemon runs (not yet reaped).
    virtual bool app_running() = 0;
    // Passes wiring or start_unit on to the running app daemon.
    virtual void relay(const control::Envelope& message) = 0;
    virtual void abort(const std::string& reason) = 0;
    virtual void shutdown(const control::Envelope& message) = 0;
  };

  // `session` and `handler` (often one object) outlive the protocol.
  ConsoleProtocol(Session& session, Handler& handler) : ServerProtocol(session, kWording), handler_(handler) {}

 private:
  static const Wording kWording;

  void on_message(const control::Envelope& message) override;

  Handler& handler_;
  std::string launched_;  // the application id, once launched
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_CONSOLE_PROTOCOL_H_
