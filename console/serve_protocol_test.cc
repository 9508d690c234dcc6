// ServeProtocol: what sluice serve does with a client's bytes (as they come out of TLS),
// before and after the hello, with the rules of serve_protocol_checker.h checked on every
// call.
#include "console/serve_protocol.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "console/serve_protocol_checker.h"

namespace sluice::console {
namespace {

using control::Envelope;

std::string frame(const Envelope& e) { return control::encode(e); }

std::string hello(std::uint32_t version = control::kProtocolVersion) {
  Envelope e;
  e.mutable_hello()->set_protocol_version(version);
  e.mutable_hello()->set_client("test");
  return frame(e);
}

std::string submit(const std::string& work = "count=3") {
  Envelope e;
  e.mutable_submit()->set_work(work);
  return frame(e);
}

std::string stop() {
  Envelope e;
  e.mutable_stop();
  return frame(e);
}

std::string heartbeat() {
  Envelope e;
  e.mutable_heartbeat()->set_sequence(1);
  return frame(e);
}

std::string launch() {
  Envelope e;
  e.mutable_launch()->set_application_id("app");
  return frame(e);
}

std::string result_chunk() {
  Envelope e;
  e.mutable_result_chunk()->set_data("abc");
  return frame(e);
}

class ServeProtocolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    session.violation = [](const std::string& rule) { ADD_FAILURE() << "rule broken: " << rule; };
  }
  void feed(const std::string& bytes) { protocol.feed(bytes.data(), bytes.size()); }

  CheckedServeSession session;
  ServeProtocol protocol{session, session};
};

TEST_F(ServeProtocolTest, HelloThenSubmitQueuesOneUnit) {
  feed(hello() + submit("count=7 size=100"));
  EXPECT_EQ(session.opened_count, 1);
  ASSERT_EQ(session.submitted.size(), 1u);
  EXPECT_EQ(session.submitted[0], "count=7 size=100");
  EXPECT_TRUE(protocol.requested());
  EXPECT_FALSE(session.closed);
}

TEST_F(ServeProtocolTest, FramesMayArriveOneByteAtATime) {
  const std::string bytes = hello() + heartbeat() + submit("w") + heartbeat();
  for (char c : bytes) protocol.feed(&c, 1);
  ASSERT_EQ(session.submitted.size(), 1u);
  EXPECT_EQ(session.heard_count, 3);
  EXPECT_FALSE(session.closed);
}

TEST_F(ServeProtocolTest, SubmitBeforeTheHelloIsRefusedAndNothingIsQueued) {
  feed(submit());
  EXPECT_TRUE(session.closed);
  EXPECT_FALSE(session.closed_after_reply);
  EXPECT_TRUE(session.submitted.empty());
  EXPECT_NE(session.close_reason.find("expected hello, got submit"), std::string::npos) << session.close_reason;
}

TEST_F(ServeProtocolTest, BeforeTheHelloFramesAreLimitedTo4KiB) {
  Envelope e;
  e.mutable_hello()->set_protocol_version(control::kProtocolVersion);
  e.mutable_hello()->set_client(std::string(5000, 'x'));
  feed(frame(e));
  EXPECT_TRUE(session.closed);
  EXPECT_EQ(session.opened_count, 0);
  EXPECT_NE(session.close_reason.find("exceeds the limit of 4096 bytes"), std::string::npos) << session.close_reason;
}

TEST_F(ServeProtocolTest, AfterTheHelloALargePayloadIsAccepted) {
  feed(hello() + submit(std::string(1 << 20, 'p')));
  ASSERT_EQ(session.submitted.size(), 1u);
  EXPECT_EQ(session.submitted[0].size(), std::size_t{1} << 20);
}

TEST_F(ServeProtocolTest, AnotherVersionIsRefusedWithAReply) {
  feed(hello(1) + submit());
  ASSERT_EQ(session.sent.size(), 1u);
  ASSERT_TRUE(session.sent[0].has_auth_result());
  EXPECT_FALSE(session.sent[0].auth_result().ok());
  EXPECT_NE(session.sent[0].auth_result().message().find("version 1"), std::string::npos);
  EXPECT_TRUE(session.closed_after_reply);
  EXPECT_TRUE(session.submitted.empty());
}

TEST_F(ServeProtocolTest, ATurnedDownSubmitIsAnsweredThenClosed) {
  session.refuse_submit = true;
  feed(hello() + submit());
  ASSERT_EQ(session.sent.size(), 1u);
  ASSERT_TRUE(session.sent[0].has_error());
  EXPECT_EQ(session.sent[0].error().message(), "the server is stopping");
  EXPECT_TRUE(session.closed);
  EXPECT_TRUE(session.closed_after_reply);
}

TEST_F(ServeProtocolTest, OneRequestPerConnection) {
  feed(hello() + submit() + heartbeat() + submit());
  EXPECT_EQ(session.submitted.size(), 1u);
  EXPECT_TRUE(session.closed);
  EXPECT_NE(session.close_reason.find("one request per connection"), std::string::npos) << session.close_reason;
}

TEST_F(ServeProtocolTest, StopIsARequest) {
  feed(hello() + stop() + heartbeat());
  EXPECT_EQ(session.stops, 1);
  EXPECT_FALSE(session.closed);
  feed(submit());
  EXPECT_TRUE(session.closed);
  EXPECT_TRUE(session.submitted.empty());
}

TEST_F(ServeProtocolTest, MessagesThatAreNotRequestsCloseTheConnection) {
  for (const std::string& bad : {launch(), result_chunk()}) {
    CheckedServeSession s;
    s.violation = [](const std::string& rule) { ADD_FAILURE() << "rule broken: " << rule; };
    ServeProtocol p(s, s);
    const std::string bytes = hello() + bad + submit();
    p.feed(bytes.data(), bytes.size());
    EXPECT_TRUE(s.closed);
    EXPECT_FALSE(s.closed_after_reply);
    EXPECT_TRUE(s.submitted.empty());
    EXPECT_NE(s.close_reason.find("it may send submit or stop"), std::string::npos) << s.close_reason;
  }
}

TEST_F(ServeProtocolTest, GarbageAfterTheHelloClosesAndNothingMoreHappens) {
  feed(hello() + std::string("\xff\xff\xff\xff", 4) + submit());
  EXPECT_TRUE(session.closed);
  EXPECT_TRUE(session.submitted.empty());
  feed(submit());
  EXPECT_TRUE(session.submitted.empty());
}

TEST_F(ServeProtocolTest, EndOfInputSaysWhere) {
  EXPECT_EQ(protocol.end_of_input(), "connection closed by the client before its hello");
  feed(hello());
  EXPECT_EQ(protocol.end_of_input(), "connection closed by the client before its request");
  feed(submit().substr(0, 6));
  EXPECT_EQ(protocol.end_of_input(), "connection closed in the middle of a frame (6 bytes)");
}

// Mutated conversations, split anywhere: every rule holds, and both ends of the range
// happen (some sessions close on bad input, some open and submit).
TEST_F(ServeProtocolTest, MutatedConversationsKeepTheRules) {
  const std::vector<std::string> parts = {hello(), submit(), stop(), heartbeat(), launch(), result_chunk()};
  std::mt19937_64 rng(42);
  int closed = 0, submitted = 0, turned_down = 0;
  for (int run = 0; run < 20000; ++run) {
    CheckedServeSession s;
    s.violation = [run](const std::string& rule) { ADD_FAILURE() << "run " << run << ": rule broken: " << rule; };
    s.refuse_submit = rng() % 8 == 0;
    ServeProtocol p(s, s);
    const std::string bytes = control::mutated_conversation(rng, hello(), parts, 5);
    ASSERT_TRUE(control::feed_in_step(rng, bytes, p, s)) << "run " << run << ": the protocol's closed() and the session's disagree";
    closed += s.closed;
    submitted += !s.submitted.empty();
    turned_down += s.refuse_submit && s.closed_after_reply;
  }
  EXPECT_GT(closed, 1000);
  EXPECT_GT(submitted, 500);
  EXPECT_GT(turned_down, 0);
}

}  // namespace
}  // namespace sluice::console
