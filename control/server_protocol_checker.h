// CheckedServerSession: a ServerProtocol::Session that records what the protocol asked of
// it and checks the rules every server's session must keep, whatever bytes the peer sent.
// The base of the checking sessions of sluiced (daemons/console_protocol_checker.h) and
// `sluice serve` (console/serve_protocol_checker.h), which add their servers' rules; shared
// by the fuzz targets and the unit tests.
//
// The rules:
// - before the hello is accepted, the only thing sent is a refusal (auth_result, not ok),
//   and nothing is counted as heard (nor, in the subclasses, carried out);
// - the session opens at most once;
// - after close(), no call at all; close() comes at most once, with a reason.
// A broken rule calls `violation` (default: print and abort, which libFuzzer reports).
//
// Test code only. Not thread-safe.
#ifndef SLUICE_CONTROL_SERVER_PROTOCOL_CHECKER_H_
#define SLUICE_CONTROL_SERVER_PROTOCOL_CHECKER_H_

#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "control/server_protocol.h"

namespace sluice::control {

class CheckedServerSession : public ServerProtocol::Session {
 public:
  // `protocol` names it in the default violation's message: "serve protocol broke a rule".
  explicit CheckedServerSession(const char* protocol)
      : violation([protocol](const std::string& rule) {
          std::fprintf(stderr, "%s protocol broke a rule: %s\n", protocol, rule.c_str());
          std::abort();
        }) {}

  std::function<void(const std::string&)> violation;

  // What happened.
  std::vector<Envelope> sent;
  int opened_count = 0, heard_count = 0;
  bool closed = false, closed_after_reply = false;
  std::string close_reason;

  void send(const Envelope& message) override {
    alive("send");
    if (opened_count == 0 && !(message.has_auth_result() && !message.auth_result().ok())) {
      violation(std::string("sent ") + kind(message) + " before the hello");
    }
    check_send(message);
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
  void close(const std::string& why, bool after_reply) override {
    alive("close");
    if (why.empty()) violation("closed without a reason");
    check_close(after_reply);
    closed = true;
    closed_after_reply = after_reply;
    close_reason = why;
  }

 protected:
  // The subclass's own rules on what is sent and on closing.
  virtual void check_send(const Envelope&) {}
  virtual void check_close(bool /*after_reply*/) {}

  // Every call: not after close().
  void alive(const char* what) {
    if (closed) violation(std::string(what) + "() after close()");
  }
  // Calls that need the hello first.
  void authenticated(const char* what) {
    if (opened_count == 0) violation(std::string(what) + "() before the hello");
  }
};

// For the mutated-conversation tests of both servers: `hello` unless one time in four, up
// to `max_parts` - 1 random `parts`, then up to three mutations (a bit flipped, a cut, a
// part inserted). Draws from `rng` in a fixed order, so a seed gives the same conversations.
inline std::string mutated_conversation(std::mt19937_64& rng, const std::string& hello,
                                        const std::vector<std::string>& parts, unsigned max_parts) {
  std::string bytes = rng() % 4 == 0 ? std::string() : hello;
  for (int i = 0, n = static_cast<int>(rng() % max_parts); i < n; ++i) bytes += parts[rng() % parts.size()];
  for (int i = 0, n = static_cast<int>(rng() % 4); i < n && !bytes.empty(); ++i) {
    switch (rng() % 3) {
      case 0: bytes[rng() % bytes.size()] ^= static_cast<char>(1u << (rng() % 8)); break;
      case 1: bytes.resize(rng() % bytes.size()); break;
      case 2: bytes.insert(rng() % bytes.size(), parts[rng() % parts.size()]); break;
    }
  }
  return bytes;
}

// Feeds `bytes` to `protocol` in chunks of 1 to 64 bytes drawn from `rng`. False as soon as
// the protocol and `session` disagree on whether the connection is closed.
template <typename Protocol>
bool feed_in_step(std::mt19937_64& rng, const std::string& bytes, Protocol& protocol,
                  const CheckedServerSession& session) {
  for (std::size_t at = 0; at < bytes.size();) {
    const std::size_t n = std::min<std::size_t>(1 + rng() % 64, bytes.size() - at);
    protocol.feed(bytes.data() + at, n);
    at += n;
    if (protocol.closed() != session.closed) return false;
  }
  return true;
}

}  // namespace sluice::control

#endif  // SLUICE_CONTROL_SERVER_PROTOCOL_CHECKER_H_
