// CheckedSession: a checking session for ConsoleProtocol: control::CheckedServerSession
// (every server's rules: control/server_protocol_checker.h) and a fake app daemon, with
// sluiced's rules. Shared by the fuzz target (fuzz_console_protocol.cc) and the unit tests
// (console_protocol_test.cc).
//
// sluiced's rules:
// - before the hello, nothing is launched, relayed, aborted or shut down;
// - a launch that succeeded is not repeated;
// - wiring and start_unit are relayed, and abort and shutdown passed on, only while the
//   app daemon runs.
//
// Test code only. Not thread-safe.
#ifndef SLUICE_DAEMONS_CONSOLE_PROTOCOL_CHECKER_H_
#define SLUICE_DAEMONS_CONSOLE_PROTOCOL_CHECKER_H_

#include <optional>
#include <string>

#include "control/server_protocol_checker.h"
#include "daemons/console_protocol.h"

namespace sluice::sluiced {

class CheckedSession : public control::CheckedServerSession, public ConsoleProtocol::Handler {
 public:
  CheckedSession() : CheckedServerSession("console") {}

  // How the fake app daemon behaves.
  bool launch_fails = false;     // launch() reports a problem
  bool app_stops_early = false;  // app_running() is false even after a launch

  // What happened, besides the base's counts.
  int launches = 0, relayed = 0, aborts = 0, shutdowns = 0;

  std::optional<std::string> launch(const control::Envelope& m) override {
    alive("launch");
    authenticated("launch");
    if (!m.has_launch()) violation("launch() without a launch message");
    if (launch_fails) return std::string("cannot fork");
    if (++launches > 1) violation("launched twice on one connection");
    return std::nullopt;
  }
  bool app_running() override {
    alive("app_running");
    return launches > 0 && !app_stops_early;
  }
  void relay(const control::Envelope& m) override {
    alive("relay");
    authenticated("relay");
    if (!(m.has_wiring() || m.has_start_unit())) violation(std::string("relayed ") + control::kind(m));
    running("relayed");
    ++relayed;
  }
  void abort(const std::string&) override {
    alive("abort");
    authenticated("abort");
    running("abort");
    ++aborts;
  }
  void shutdown(const control::Envelope&) override {
    alive("shutdown");
    authenticated("shutdown");
    running("shutdown");
    ++shutdowns;
  }

 private:
  void running(const char* what) {
    if (launches == 0 || app_stops_early) violation(std::string(what) + " with no app daemon running");
  }
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_CONSOLE_PROTOCOL_CHECKER_H_
