// OutgoingFrames: small frames leave joined, in order, with their results bytes; a large
// frame is never joined; a heartbeat goes right behind the frames under way.
#include "control/outgoing_frames.h"

#include <gtest/gtest.h>

#include <string>

namespace sluice::control {
namespace {

std::string frame(char c, std::size_t size) { return std::string(size, c); }

TEST(OutgoingFrames, SmallFramesBehindTheFrontAreJoinedIntoOneWriteInOrder) {
  OutgoingFrames q;
  std::string expected;
  for (int i = 0; i < 100; ++i) {
    q.push_back(Outgoing{frame(static_cast<char>('a' + i % 26), 1024), 1024});
    expected += frame(static_cast<char>('a' + i % 26), 1024);
  }
  EXPECT_EQ(q.bytes(), 100u * 1024);
  q.join_front();
  // 64 KiB at most in one write: 64 frames of 1 KiB, the other 36 still queued one by one.
  ASSERT_EQ(q.size(), 1u + 36u);
  EXPECT_EQ(q.front().frame, expected.substr(0, 64 * 1024));
  EXPECT_EQ(q.bytes(), 100u * 1024);  // joining moves bytes, it does not count them twice
  EXPECT_EQ(q.pop_front(), 64u * 1024);
  q.join_front();
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.front().frame, expected.substr(64 * 1024));
  EXPECT_EQ(q.pop_front(), 36u * 1024);
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(q.bytes(), 0u);
}

TEST(OutgoingFrames, AFrameLargerThanTheJoinLeavesAlone) {
  OutgoingFrames q;
  q.push_back(Outgoing{frame('s', 10), 0});
  q.push_back(Outgoing{frame('L', OutgoingFrames::kJoinedBytes), 7});
  q.push_back(Outgoing{frame('t', 10), 0});
  q.join_front();
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q.front().frame, frame('s', 10));
  q.pop_front();
  q.join_front();  // the large one first: nothing fits beside it
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q.pop_front(), 7u);
}

TEST(OutgoingFrames, AHeartbeatGoesRightBehindTheFramesUnderWayOnlyOnce) {
  OutgoingFrames q;
  q.push_back(Outgoing{frame('a', 100), 100});
  q.push_back(Outgoing{frame('b', 100), 100});
  q.join_front();  // "ab" is under way
  q.push_back(Outgoing{frame('c', 100), 100});
  q.push_heartbeat(frame('h', 8));
  q.push_heartbeat(frame('h', 8));  // one waiting is enough
  ASSERT_EQ(q.size(), 3u);
  EXPECT_EQ(q.pop_front(), 200u);
  q.join_front();  // the heartbeat leads the next write, "c" joined behind it
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.front().frame, frame('h', 8) + frame('c', 100));
  EXPECT_FALSE(q.front().heartbeat);  // it carries results now, not just a heartbeat
  EXPECT_EQ(q.pop_front(), 100u);
}

TEST(OutgoingFrames, DroppingKeepsTheFrontAndReturnsEveryResultByte) {
  OutgoingFrames q;
  q.push_back(Outgoing{frame('a', 10), 10});
  q.push_back(Outgoing{frame('b', 20), 20});
  q.push_back(Outgoing{frame('c', 30), 0});
  EXPECT_EQ(q.drop_all_but_front(), 30u);
  ASSERT_EQ(q.size(), 1u);
  EXPECT_EQ(q.front().frame, frame('a', 10));  // may be under way: it stays
  EXPECT_EQ(q.front().results, 0u);            // and is not reported twice
  EXPECT_EQ(q.bytes(), 0u);
}

}  // namespace
}  // namespace sluice::control
