// CheckedServeSession: a ServeProtocol::Session that records what the protocol asked of it
// and checks the rules every session must keep, whatever bytes the client sent. Shared by
// the fuzz target (fuzz_serve_protocol.cc) and the unit tests (serve_protocol_test.cc).
//
// The rules:
// - before the hello is accepted, the only thing sent is a refusal (auth_result, not ok),
//   and nothing is submitted, stopped or counted as heard;
// - the session opens at most once;
// - at most one request (submit or stop) per connection, a turned-down submit included;
// - an `error` is sent only to turn a submit down, and the connection then closes after
//   the reply;
// - after close(), no call at all; close() comes at most once, with a reason.
// A broken rule calls `violation` (default: print and abort, which libFuzzer reports).
//
// Test code only. Not thread-safe.
#ifndef SLUICE_CONSOLE_SERVE_PROTOCOL_CHECKER_H_
#define SLUICE_CONSOLE_SERVE_PROTOCOL_CHECKER_H_

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "console/serve_protocol.h"

namespace sluice::console {

class CheckedServeSession : public ServeProtocol::Session {
 public:
  std::function<void(const std::string&)> violation = [](const std::string& rule) {
    std::fprintf(stderr, "serve protocol broke a rule: %s\n", rule.c_str());
    std::abort();
  };
  bool refuse_submit = false;  // submit() turns the unit down (the server is stopping)

  std::vector<control::Envelope> sent;
  std::vector<std::string> submitted;
  int opened_count = 0, heard_count = 0, stops = 0, requests = 0;
  bool closed = false, closed_after_reply = false;
  std::string close_reason;

  void send(const control::Envelope& message) override {
    alive("send");
    if (opened_count == 0 && !(message.has_auth_result() && !message.auth_result().ok())) {
      violation(std::string("sent ") + control::kind(message) + " before the hello");
    }
    if (message.has_error() && !(refusing_ && requests == 1)) violation("sent an error that turns nothing down");
    sent.push_back(message);
  }
  void opened(const std::string&) override {
    alive("opened");
    if (++opened_count > 1) violation("opened twice");
  }
  void heard() override {
    alive("heard");
    authenticated("heard");
    ++heard_count;
  }
  std::optional<std::string> submit(const std::string& work) override {
    alive("submit");
    authenticated("submit");
    if (++requests > 1) violation("a second request on one connection");
    if (refuse_submit) {
      refusing_ = true;
      return std::string("the server is stopping");
    }
    submitted.push_back(work);
    return std::nullopt;
  }
  void stop() override {
    alive("stop");
    authenticated("stop");
    if (++requests > 1) violation("a second request on one connection");
    ++stops;
  }
  void close(const std::string& why, bool after_reply) override {
    alive("close");
    if (why.empty()) violation("closed without a reason");
    if (refusing_ && !after_reply) violation("a turned-down submit closed before its reply");
    closed = true;
    closed_after_reply = after_reply;
    close_reason = why;
  }

 private:
  void alive(const char* what) {
    if (closed) violation(std::string(what) + "() after close()");
  }
  void authenticated(const char* what) {
    if (opened_count == 0) violation(std::string(what) + "() before the hello");
  }
  bool refusing_ = false;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SERVE_PROTOCOL_CHECKER_H_
