// InputPort takes the buffers already queued a run at a time and InputStream::read() hands
// them out inline: these tests hold the read path to what read() promises (order, end of
// work, counters, abort) and check that taken-but-unread buffers always go home.
#include "stream/input_port.h"

#include <cstdint>
#include <optional>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/buffer_pool.h"
#include "buffer/slot.h"
#include "sluice/error.h"
#include "testing/test_watchdog.h"

namespace sluice {
namespace {

using testing::Watchdog;

class InputPortTest : public ::testing::Test {
 protected:
  // Queues `n` buffers labelled first, first + 1, ... of `size` bytes from producer copy 0.
  void push_buffers(std::uint64_t first, int n, std::uint32_t size = 8) {
    for (int i = 0; i < n; ++i) {
      Buffer b = pool_.acquire(nullptr);
      b.resize(size);
      ASSERT_TRUE(channel_.try_push(Item{detail::BufferAccess::unwrap(b), size, 0, first + i}));
    }
  }
  void push_end() { ASSERT_TRUE(channel_.try_push(Item::end_of_work(0))); }

  RunSignal signal_;
  Watchdog watchdog_{signal_};
  Waiter room_{signal_};
  BufferPool pool_{"p", 64, 256, signal_};
  InputChannel channel_{256, 1, signal_, room_};
};

TEST_F(InputPortTest, ReadsEveryBufferInOrderAcrossManyRunsThenTheEnd) {
  InputPort port("in", channel_);
  port.begin_unit();
  push_buffers(0, 100);  // more than a run holds: several runs, the last one short
  push_end();
  std::vector<std::uint64_t> keys;
  while (std::optional<Buffer> b = port.read()) {
    EXPECT_EQ(b->size(), 8u);
    EXPECT_EQ(b->capacity(), 64u);
    keys.push_back(b->key());
  }
  ASSERT_EQ(keys.size(), 100u);
  for (std::uint64_t i = 0; i < keys.size(); ++i) EXPECT_EQ(keys[i], i);
  EXPECT_FALSE(port.read().has_value()) << "ended stays ended until the next unit";
  EXPECT_EQ(port.counters().buffers.get(), 100u);
  EXPECT_EQ(port.counters().bytes.get(), 800u);
  EXPECT_EQ(pool_.available(), pool_.count());
}

// A taken run is counted as read only as far as read() handed it out; until the run is over
// it shows as in hand (the stream's stats add that to what is queued), so a copy stuck in its
// own work never looks as if it had read what it only took.
TEST_F(InputPortTest, CountersCountWhatWasReadNotWhatWasTaken) {
  InputPort port("in", channel_);
  port.begin_unit();
  push_buffers(0, 10, 5);
  ASSERT_TRUE(port.read().has_value());  // takes all ten, hands out one
  ASSERT_TRUE(port.read().has_value());
  EXPECT_EQ(port.counters().buffers.get(), 0u) << "a run is counted once it is over";
  EXPECT_EQ(port.counters().in_hand.get(), 10u);
  EXPECT_EQ(channel_.free_room(), channel_.depth()) << "the run left the queue";
  push_end();
  EXPECT_EQ(port.drain(), 8u);
  EXPECT_EQ(port.counters().buffers.get(), 2u) << "the two read, not the eight given back";
  EXPECT_EQ(port.counters().bytes.get(), 10u);
  EXPECT_EQ(port.counters().in_hand.get(), 0u);

  port.begin_unit();
  push_buffers(10, 3, 5);
  push_end();
  while (port.read()) {
  }
  EXPECT_EQ(port.counters().buffers.get(), 5u) << "a run read to the end is all counted by the end of work";
  EXPECT_EQ(port.counters().bytes.get(), 25u);
  EXPECT_EQ(port.counters().in_hand.get(), 0u);
}

TEST(InputPortRunSizeTest, ARunIsNoLongerThanTheQueueHolds) {
  RunSignal signal;
  Waiter room{signal};
  InputChannel shallow{4, 1, signal, room};
  InputChannel deep{256, 1, signal, room};
  EXPECT_EQ(InputPort("in", shallow).run_size(), 4u);
  EXPECT_EQ(InputPort("in", deep).run_size(), 32u);
  EXPECT_EQ(InputPort("in", deep, nullptr, /*read_ahead=*/false).run_size(), 1u);
}

TEST_F(InputPortTest, AReadReturnsWhatIsThereWithoutWaitingForAFullRun) {
  InputPort port("in", channel_);
  port.begin_unit();
  push_buffers(7, 1);
  std::optional<Buffer> b = port.read();  // one queued: read() must not wait for more
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->key(), 7u);
}

TEST_F(InputPortTest, DrainCountsAndReturnsTakenAndQueuedBuffers) {
  InputPort port("in", channel_);
  port.begin_unit();
  push_buffers(0, 10);
  ASSERT_EQ(port.read()->key(), 0u);  // took all ten, handed out one
  push_buffers(10, 5);
  push_end();
  EXPECT_EQ(port.drain(), 14u);  // nine taken, five still queued
  EXPECT_EQ(pool_.available(), pool_.count());
  EXPECT_FALSE(port.read().has_value());
}

TEST_F(InputPortTest, AReadAfterAbortThrowsEvenWithBuffersTakenAndTheyGoHome) {
  InputPort port("in", channel_);
  port.begin_unit();
  push_buffers(0, 10);
  ASSERT_TRUE(port.read().has_value());  // nine more taken, not yet read
  signal_.abort();
  EXPECT_THROW(port.read(), Aborted);
  EXPECT_EQ(pool_.available(), pool_.count()) << "the taken buffers were not given back";
  EXPECT_THROW(port.read(), Aborted);
}

TEST_F(InputPortTest, TheNextUnitAndTheDestructorGiveBackWhatWasLeftTaken) {
  {
    InputPort port("in", channel_);
    port.begin_unit();
    push_buffers(0, 6);
    ASSERT_TRUE(port.read().has_value());
    port.begin_unit();  // as after an aborted unit: the five taken go home
    EXPECT_EQ(pool_.available(), pool_.count());
    push_buffers(100, 4);
    ASSERT_EQ(port.read()->key(), 100u);
    EXPECT_EQ(pool_.available(), pool_.count() - 3);
  }
  EXPECT_EQ(pool_.available(), pool_.count());
}

TEST_F(InputPortTest, TakingARunFreesItsCellsForTheProducerAtOnce) {
  InputChannel small(4, 1, signal_, room_);
  InputPort port("in", small);
  port.begin_unit();
  for (std::uint64_t k = 0; k < 4; ++k) {
    Buffer b = pool_.acquire(nullptr);
    ASSERT_TRUE(small.try_push(Item{detail::BufferAccess::unwrap(b), 0, 0, k}));
  }
  EXPECT_EQ(small.free_room(), 0u);
  ASSERT_EQ(port.read()->key(), 0u);
  EXPECT_EQ(small.free_room(), 4u) << "the producer waits for room the run already made";
  for (std::uint64_t k = 1; k < 4; ++k) EXPECT_EQ(port.read()->key(), k);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// demand_driven sends to the copy with the most free room: a port that emptied its queue
// into a run would look idle while it holds the run, and draw more work to a slow copy.
TEST(InputPortReadAheadTest, WithoutReadAheadAReadTakesOneBufferAndTheRestStayQueued) {
  RunSignal signal;
  Watchdog watchdog{signal};
  Waiter room{signal};
  BufferPool pool{"p", 64, 8, signal};
  InputChannel channel{8, 1, signal, room};
  InputPort port("in", channel, nullptr, /*read_ahead=*/false);
  port.begin_unit();
  for (std::uint64_t k = 0; k < 4; ++k) {
    Buffer b = pool.acquire(nullptr);
    ASSERT_TRUE(channel.try_push(Item{detail::BufferAccess::unwrap(b), 0, 0, k}));
  }
  ASSERT_EQ(port.read()->key(), 0u);
  EXPECT_EQ(channel.free_room(), 5u) << "the other three must stay in the queue, visible to writers";
  EXPECT_EQ(port.read()->key(), 1u);
  EXPECT_EQ(channel.free_room(), 6u);
}

}  // namespace
}  // namespace sluice
