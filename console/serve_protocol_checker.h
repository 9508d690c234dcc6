// CheckedServeSession: a checking session for ServeProtocol: control::CheckedServerSession
// (every server's rules: control/server_protocol_checker.h) and a fake server, with
// `sluice serve`'s rules. Shared by the fuzz target (fuzz_serve_protocol.cc) and the unit
// tests (serve_protocol_test.cc).
//
// serve's rules:
// - before the hello, nothing is submitted or stopped;
// - at most one request (submit or stop) per connection, a turned-down submit included;
// - an `error` is sent only to turn a submit down, and the connection then closes after
//   the reply.
//
// Test code only. Not thread-safe.
#ifndef SLUICE_CONSOLE_SERVE_PROTOCOL_CHECKER_H_
#define SLUICE_CONSOLE_SERVE_PROTOCOL_CHECKER_H_

#include <optional>
#include <string>
#include <vector>

#include "console/serve_protocol.h"
#include "control/server_protocol_checker.h"

namespace sluice::console {

class CheckedServeSession : public control::CheckedServerSession, public ServeProtocol::Handler {
 public:
  CheckedServeSession() : CheckedServerSession("serve") {}

  bool refuse_submit = false;  // submit() turns the unit down (the server is stopping)

  // What happened, besides the base's counts.
  std::vector<std::string> submitted;
  int stops = 0, requests = 0;

  std::optional<std::string> submit(const std::string& work) override {
    request("submit");
    if (refuse_submit) {
      refusing_ = true;
      return std::string("the server is stopping");
    }
    submitted.push_back(work);
    return std::nullopt;
  }
  void stop() override {
    request("stop");
    ++stops;
  }

 private:
  void request(const char* what) {
    alive(what);
    authenticated(what);
    if (++requests > 1) violation("a second request on one connection");
  }
  void check_send(const control::Envelope& message) override {
    if (message.has_error() && !(refusing_ && requests == 1)) violation("sent an error that turns nothing down");
  }
  void check_close(bool after_reply) override {
    if (refusing_ && !after_reply) violation("a turned-down submit closed before its reply");
  }

  bool refusing_ = false;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_PROTOCOL_CHECKER_H_
