// FdChannel over a socketpair whose other end takes nothing: a send gives up after its
// timeout, saying so, instead of blocking the app daemon for as long as sluiced is stopped.
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "control/codec.h"

namespace sluice::control {
namespace {

using namespace std::chrono_literals;

Envelope big_log(std::size_t bytes) {
  Envelope e;
  e.mutable_filter_log()->set_host("b");
  e.mutable_filter_log()->set_output(std::string(bytes, 'x'));
  return e;
}

TEST(FdChannel, ASendThePeerNeverTakesGivesUpAfterItsTimeout) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  FdChannel channel(fds[0]);
  std::string why;
  // The first fills the socket's buffer part-way at most; sending more finds it full.
  int sent = 0;
  while (sent < 100 && channel.send(big_log(64 * 1024), 200ms, &why)) ++sent;
  EXPECT_LT(sent, 100) << "a peer that reads nothing took 6.4 MB";
  EXPECT_EQ(why, "the peer took nothing for 200 ms");
  ::close(fds[1]);
}

// A peer that takes nothing for a while but is known to be alive (sluiced holding an app
// daemon back while its console catches up): the send waits on, and goes through once the
// peer reads; it gives up only once the peer is no longer heard from.
TEST(FdChannel, ASendWaitsForAPeerThatIsAliveButHoldsItBack) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  FdChannel channel(fds[0]);
  std::string why;
  while (channel.send(big_log(64 * 1024), 100ms, &why)) {
  }  // the socket is full now
  int asked = 0;
  std::thread reader([&] {
    std::this_thread::sleep_for(600ms);  // six timeouts of the send below
    char sink[1 << 16];
    while (::read(fds[1], sink, sizeof sink) > 0) {
    }
  });
  // The failed send above may have left part of a frame: this one is about the waiting.
  EXPECT_TRUE(channel.send(big_log(64 * 1024), 100ms, &why, [&] { return ++asked > 0; }))
      << why;
  EXPECT_GE(asked, 3) << "the peer was asked whether it is alive at each timeout";
  ::shutdown(fds[0], SHUT_RDWR);
  reader.join();
  ::close(fds[1]);

  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  FdChannel held(fds[0]);
  while (held.send(big_log(64 * 1024), 100ms, &why)) {
  }
  asked = 0;
  const auto start = std::chrono::steady_clock::now();
  EXPECT_FALSE(held.send(big_log(64 * 1024), 100ms, &why, [&] { return ++asked < 3; }));
  EXPECT_EQ(asked, 3);
  EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms) << "it waited while the peer was alive";
  EXPECT_EQ(why, "the peer took nothing for 100 ms");
  ::close(fds[1]);
}

TEST(FdChannel, ASendToAClosedPeerFailsAtOnceSayingWhy) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  FdChannel channel(fds[0]);
  ::close(fds[1]);
  std::string why;
  EXPECT_FALSE(channel.send(big_log(10), 200ms, &why));
  EXPECT_EQ(why, "write: Broken pipe");
}

TEST(FdChannel, WhatIsSentArrivesWhole) {
  int fds[2];
  ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
  FdChannel a(fds[0]);
  FdChannel b(fds[1]);
  ASSERT_TRUE(a.send(big_log(1000), 1s));
  Envelope got;
  ASSERT_EQ(b.receive(&got, 1s), FdChannel::Status::kMessage);
  EXPECT_EQ(got.filter_log().output(), std::string(1000, 'x'));
}

}  // namespace
}  // namespace sluice::control
