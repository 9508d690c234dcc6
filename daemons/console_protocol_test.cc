// ConsoleProtocol: what sluiced does with a console's bytes (as they come out of TLS),
// before and after the hello, with the rules of console_protocol_checker.h checked on
// every call.
#include "daemons/console_protocol.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "daemons/console_protocol_checker.h"

namespace sluice::sluiced {
namespace {

using control::Envelope;

std::string frame(const Envelope& e) { return control::encode(e); }

std::string hello(std::uint32_t version = control::kProtocolVersion) {
  Envelope e;
  e.mutable_hello()->set_protocol_version(version);
  e.mutable_hello()->set_client("test");
  return frame(e);
}

std::string launch(std::size_t topology_bytes = 20) {
  Envelope e;
  e.mutable_launch()->set_application_id("app");
  e.mutable_launch()->set_topology_text(std::string(topology_bytes, 'x'));
  return frame(e);
}

std::string wiring() {
  Envelope e;
  (*e.mutable_wiring()->mutable_peers())["b"] = "127.0.0.1:1";
  return frame(e);
}

std::string start_unit() {
  Envelope e;
  e.mutable_start_unit()->set_payload("w");
  return frame(e);
}

std::string heartbeat() {
  Envelope e;
  e.mutable_heartbeat()->set_sequence(1);
  return frame(e);
}

std::string abort_frame() {
  Envelope e;
  e.mutable_abort()->set_reason("r");
  return frame(e);
}

std::string shutdown_frame() {
  Envelope e;
  e.mutable_shutdown();
  return frame(e);
}

class ConsoleProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session.violation = [](const std::string& rule) { ADD_FAILURE() << "rule broken: " << rule; };
  }
  void feed(const std::string& bytes) { protocol.feed(bytes.data(), bytes.size()); }
  // The error messages the protocol sent back.
  std::vector<std::string> errors() const {
    std::vector<std::string> out;
    for (const auto& m : session.sent) {
      if (m.has_error()) out.push_back(m.error().message());
    }
    return out;
  }

  CheckedSession session;
  ConsoleProtocol protocol{session, session};
};

TEST_F(ConsoleProtocolTest, HelloOpensTheSession) {
  feed(hello());
  EXPECT_TRUE(protocol.open());
  EXPECT_EQ(session.opened_count, 1);
  EXPECT_TRUE(session.sent.empty());
  EXPECT_FALSE(session.closed);
}

TEST_F(ConsoleProtocolTest, FramesMayArriveOneByteAtATime) {
  const std::string bytes = hello() + heartbeat() + launch();
  for (char c : bytes) protocol.feed(&c, 1);
  EXPECT_EQ(session.opened_count, 1);
  EXPECT_EQ(session.heard_count, 2);
  EXPECT_EQ(session.launches, 1);
}

TEST_F(ConsoleProtocolTest, BeforeTheHelloFramesAreLimitedTo4KiB) {
  feed(launch(5000).substr(0, 4));  // the header alone is enough to refuse it
  EXPECT_TRUE(session.closed);
  EXPECT_NE(session.close_reason.find("exceeds the limit of 4096 bytes"), std::string::npos) << session.close_reason;
  EXPECT_NE(session.close_reason.find("before the hello"), std::string::npos) << session.close_reason;
}

TEST_F(ConsoleProtocolTest, AfterTheHelloLargeFramesAreAccepted) {
  feed(hello() + launch(1 << 20));
  EXPECT_EQ(session.launches, 1);
  EXPECT_FALSE(session.closed);
}

TEST_F(ConsoleProtocolTest, LaunchBeforeTheHelloIsAProtocolError) {
  feed(launch() + hello());
  EXPECT_TRUE(session.closed);
  EXPECT_FALSE(session.closed_after_reply);
  EXPECT_EQ(session.close_reason, "expected hello, got launch");
  EXPECT_EQ(session.launches, 0);
  EXPECT_EQ(session.opened_count, 0);  // the hello after it is never read
}

TEST_F(ConsoleProtocolTest, AnotherVersionIsRefusedWithAReply) {
  feed(hello(1));
  ASSERT_EQ(session.sent.size(), 1u);
  ASSERT_TRUE(session.sent[0].has_auth_result());
  EXPECT_FALSE(session.sent[0].auth_result().ok());
  EXPECT_NE(session.sent[0].auth_result().message().find("protocol version mismatch"), std::string::npos);
  EXPECT_TRUE(session.closed);
  EXPECT_TRUE(session.closed_after_reply);
  EXPECT_EQ(session.opened_count, 0);
}

TEST_F(ConsoleProtocolTest, CommandsAfterTheHello) {
  feed(hello() + start_unit());
  ASSERT_EQ(errors().size(), 1u);
  EXPECT_EQ(errors()[0], "start_unit but no application is running here");
  feed(launch() + wiring() + start_unit() + heartbeat() + abort_frame() + shutdown_frame());
  EXPECT_EQ(session.launches, 1);
  EXPECT_EQ(session.relayed, 2);
  EXPECT_EQ(session.aborts, 1);
  EXPECT_EQ(session.shutdowns, 1);
  EXPECT_EQ(session.heard_count, 7);
  feed(launch());
  ASSERT_EQ(errors().size(), 2u);
  EXPECT_EQ(errors()[1], "this connection already launched application 'app'");
  EXPECT_FALSE(session.closed);
}

// The host name ends up in the app daemon's log prefix: a newline in it forged log lines.
TEST_F(ConsoleProtocolTest, ALaunchWhoseHostNameHasControlCharactersIsRefused) {
  Envelope e;
  e.mutable_launch()->set_application_id("app");
  e.mutable_launch()->set_host("b\n2026-11-26T10:00:00.000Z sluiced[1] [error] forged");
  feed(hello() + frame(e));
  ASSERT_EQ(errors().size(), 1u);
  EXPECT_NE(errors()[0].find("launch refused: its host name"), std::string::npos) << errors()[0];
  EXPECT_EQ(session.launches, 0);
  feed(launch());  // a good one after it still launches
  EXPECT_EQ(session.launches, 1);
}

TEST_F(ConsoleProtocolTest, AFailedLaunchIsReportedAndMayBeRetried) {
  session.launch_fails = true;
  feed(hello() + launch());
  ASSERT_EQ(errors().size(), 1u);
  EXPECT_EQ(errors()[0], "cannot fork");
  session.launch_fails = false;
  feed(launch());
  EXPECT_EQ(session.launches, 1);
}

TEST_F(ConsoleProtocolTest, GarbageAfterTheHelloClosesAndNothingMoreHappens) {
  feed(hello() + std::string("\x00\x00\x00\x05\xff\xff\xff\xff\xff", 9) + launch());
  EXPECT_TRUE(session.closed);
  EXPECT_NE(session.close_reason.find("malformed message"), std::string::npos) << session.close_reason;
  EXPECT_EQ(session.launches, 0);
  feed(launch());
  EXPECT_EQ(session.launches, 0);
}

TEST_F(ConsoleProtocolTest, MessagesOnlyAnAppDaemonSendsCloseTheConnection) {
  Envelope e;
  e.mutable_app_ready()->set_host("a");
  feed(hello() + frame(e));
  EXPECT_TRUE(session.closed);
  EXPECT_EQ(session.close_reason, "unexpected app_ready from a console");
}

TEST_F(ConsoleProtocolTest, EndOfInputSaysWhere) {
  EXPECT_EQ(protocol.end_of_input(), "connection closed by the console before its hello");
  feed(hello());
  EXPECT_EQ(protocol.end_of_input(), "connection closed by the console");
  feed(launch().substr(0, 10));
  EXPECT_EQ(protocol.end_of_input(), "connection closed in the middle of a frame (10 bytes)");
}

// Mutated conversations, split anywhere: every rule holds, and both ends of the range
// happen (some sessions close on bad input, some open and launch).
TEST_F(ConsoleProtocolTest, MutatedConversationsKeepTheRules) {
  const std::vector<std::string> parts = {hello(), launch(), wiring(), start_unit(), heartbeat(), abort_frame(),
                                          shutdown_frame()};
  std::mt19937_64 rng(42);
  int closed = 0, launched = 0, refused_versions = 0;
  for (int run = 0; run < 20000; ++run) {
    CheckedSession s;
    s.violation = [run](const std::string& rule) { ADD_FAILURE() << "run " << run << ": rule broken: " << rule; };
    s.launch_fails = rng() % 8 == 0;
    s.app_stops_early = rng() % 8 == 0;
    ConsoleProtocol p(s, s);
    const std::string bytes = control::mutated_conversation(rng, hello(), parts, 6);
    ASSERT_TRUE(control::feed_in_step(rng, bytes, p, s)) << "run " << run << ": the protocol's closed() and the session's disagree";
    closed += s.closed;
    launched += s.launches > 0;
    refused_versions += s.closed_after_reply;
  }
  EXPECT_GT(closed, 1000);
  EXPECT_GT(launched, 1000);
  EXPECT_GT(refused_versions, 0);
}

}  // namespace
}  // namespace sluice::sluiced
