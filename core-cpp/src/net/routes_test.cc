// remote_window: the credit window across hosts is the queue's depth, but never less than a
// MiB's worth of buffers (at most 1024).
#include "net/routes.h"

#include <gtest/gtest.h>

namespace sluice::net {
namespace {

TEST(RemoteWindow, ASmallDepthOfSmallBuffersStillGetsAMiBsWorthUpTo1024) {
  EXPECT_EQ(remote_window(64, 100), 1024u);      // the outside review's case: 6.4 KB a round trip before
  EXPECT_EQ(remote_window(8, 4096), 256u);       // 1 MiB / 4 KiB
  EXPECT_EQ(remote_window(1, 64 * 1024), 16u);   // the default depth at 64 KiB
  EXPECT_EQ(remote_window(1, 1), 1024u);         // never more than 1024 from the floor
}

TEST(RemoteWindow, ADeeperQueueOrLargeBuffersKeepTheDepthRoundedUpToAPowerOfTwo) {
  EXPECT_EQ(remote_window(2000, 100), 2048u);         // depth above the floor: the queue's size
  EXPECT_EQ(remote_window(2, 1024 * 1024), 2u);       // 1 MiB buffers: the floor is one
  EXPECT_EQ(remote_window(3, 1024 * 1024), 4u);
  EXPECT_EQ(remote_window(8, 128 * 1024), 8u);        // the floor and the depth agree
  EXPECT_EQ(remote_window(1, 1024 * 1024 * 1024), 1u);  // 1 GiB buffers: depth 1 stays 1
}

}  // namespace
}  // namespace sluice::net
