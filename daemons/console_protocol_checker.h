// CheckedSession: a ConsoleProtocol::Session that records what the protocol asked of it and
// checks the rules every session must keep, whatever bytes the console sent. Shared by the
// fuzz target (fuzz_console_protocol.cc) and the unit tests (console_protocol_test.cc).
//
// The rules:
// - before the hello is accepted, the only thing sent is a refusal (auth_result, not ok),
//   and nothing is launched, relayed, aborted, shut down or counted as heard;
// - the session opens at most once; a launch that succeeded is not repeated;
// - wiring and start_unit are relayed only while the app daemon runs;
// - after close(), no call at all; close() comes at most once.
// A broken rule calls `violation` (default: print and abort, which libFuzzer reports).
//
// Test code only. Not thread-safe.
#ifndef SLUICE_DAEMONS_CONSOLE_PROTOCOL_CHECKER_H_
#define SLUICE_DAEMONS_CONSOLE_PROTOCOL_CHECKER_H_

#include <cstdio>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "daemons/console_protocol.h"

namespace sluice::sluiced {

class CheckedSession : public ConsoleProtocol::Session {
 public:
  std::function<void(const std::string&)> violation = [](const std::string& rule) {
    std::fprintf(stderr, "console protocol broke a rule: %s\n", rule.c_str());
    std::abort();
  };
  // How the fake app daemon behaves.
  bool launch_fails = false;     // launch() reports a problem
  bool app_stops_early = false;  // app_running() is false even after a launch

  // What happened.
  std::vector<control::Envelope> sent;
  int opened_count = 0, heard_count = 0, launches = 0, relayed = 0, aborts = 0, shutdowns = 0;
  bool closed = false, closed_after_reply = false;
  std::string close_reason;

  void send(const control::Envelope& message) override {
    alive("send");
    if (opened_count == 0 && !(message.has_auth_result() && !message.auth_result().ok())) {
      violation(std::string("sent ") + control::kind(message) + " before the hello");
    }
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
    if (!(launches > 0 && !app_stops_early)) violation("relayed with no app daemon running");
    ++relayed;
  }
  void abort(const std::string&) override {
    alive("abort");
    authenticated("abort");
    if (launches == 0 || app_stops_early) violation("abort with no app daemon running");
    ++aborts;
  }
  void shutdown(const control::Envelope&) override {
    alive("shutdown");
    authenticated("shutdown");
    if (launches == 0 || app_stops_early) violation("shutdown with no app daemon running");
    ++shutdowns;
  }
  void close(const std::string& why, bool after_reply) override {
    alive("close");
    if (why.empty()) violation("closed without a reason");
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
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_CONSOLE_PROTOCOL_CHECKER_H_
