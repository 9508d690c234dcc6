#include "stream/input_channel.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/buffer_pool.h"
#include "buffer/slot.h"
#include "sluice/error.h"
#include "testing/test_watchdog.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

using testing::outcome_of;
using testing::pop_now;
using testing::Watchdog;

// Unless a test says otherwise, every upstream copy runs here (a lane each), and the test
// pushes from one thread after another.
class InputChannelTest : public ::testing::Test {
 protected:
  // A buffer from the pool, as a producer would push it: size bytes, labelled key.
  Item buffer_item(std::uint32_t producer, std::uint64_t key, std::uint32_t size = 8) {
    Buffer b = pool_.acquire(nullptr);
    b.resize(size);
    return Item{detail::BufferAccess::unwrap(b), size, producer, key};
  }

  // Fills the local lanes of producer copies 0 .. producers - 1 with `each` buffers apiece,
  // keyed producer * 100 + k.
  void fill_lanes(InputChannel& channel, std::uint32_t producers, std::uint64_t each) {
    for (std::uint64_t k = 0; k < each; ++k) {
      for (std::uint32_t p = 0; p < producers; ++p) ASSERT_TRUE(channel.try_push(buffer_item(p, p * 100 + k)));
    }
  }

  // Takes a run of one buffer, which must be there; gives it back and returns its key.
  std::uint64_t take_one_key(InputChannel& channel) {
    std::array<detail::TakenBuffer, 1> run{};
    EXPECT_EQ(channel.take_run(run.data(), 1), 1u);
    detail::release_slot(run[0].slot);
    return run[0].key;
  }

  // Pops one item that must be a buffer; returns its key.
  std::uint64_t pop_key(InputChannel& channel) {
    std::optional<Buffer> b = pop_now(channel);
    EXPECT_TRUE(b.has_value()) << "end of work instead of a buffer";
    return b ? b->key() : ~std::uint64_t{0};
  }

  RunSignal signal_;
  Watchdog watchdog_{signal_};
  Waiter room_{signal_};
  BufferPool pool_{"p", 64, 16, signal_};
};

TEST_F(InputChannelTest, DeliversBuffersUntilEveryUpstreamCopyHasEnded) {
  InputChannel channel(8, 2, signal_, room_, "");
  ASSERT_TRUE(channel.try_push(buffer_item(0, 10, 3)));
  ASSERT_TRUE(channel.try_push(buffer_item(1, 11)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  ASSERT_TRUE(channel.try_push(buffer_item(1, 12)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(1)));

  std::uint64_t blocked = 0;
  std::optional<Buffer> first = channel.pop(&blocked);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->key(), 10u);
  EXPECT_EQ(first->size(), 3u);
  EXPECT_EQ(first->capacity(), 64u);
  EXPECT_FALSE(channel.ended());
  EXPECT_EQ(pop_key(channel), 11u);
  EXPECT_EQ(pop_key(channel), 12u);  // after copy 0's mark: copy 1 has not ended yet
  EXPECT_FALSE(pop_now(channel).has_value());
  EXPECT_TRUE(channel.ended());
  EXPECT_FALSE(pop_now(channel).has_value());
  EXPECT_EQ(blocked, 0u) << "nothing here had to wait";
}

TEST_F(InputChannelTest, StaysEndedUntilTheNextUnitBegins) {
  InputChannel channel(8, 2, signal_, room_, "");
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(1)));
  EXPECT_FALSE(pop_now(channel).has_value());
  // A fast producer already writing the next unit: not part of this one.
  ASSERT_TRUE(channel.try_push(buffer_item(0, 20)));
  EXPECT_FALSE(pop_now(channel).has_value());
  EXPECT_FALSE(pop_now(channel).has_value());

  channel.begin_unit();
  EXPECT_FALSE(channel.ended());
  EXPECT_EQ(pop_key(channel), 20u);
  ASSERT_TRUE(channel.try_push(Item::end_of_work(1)));
  ASSERT_TRUE(channel.try_push(buffer_item(0, 21)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  EXPECT_EQ(pop_key(channel), 21u);
  EXPECT_FALSE(pop_now(channel).has_value());
  EXPECT_TRUE(channel.ended());
}

TEST_F(InputChannelTest, ASecondMarkFromOneCopyIsAnErrorNotAnEarlyEnd) {
  InputChannel channel(8, 2, signal_, room_, "p.out -> c.in");
  ASSERT_TRUE(channel.try_push(buffer_item(0, 1)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));  // copy 1 has not ended
  EXPECT_EQ(pop_key(channel), 1u);
  try {
    pop_now(channel);
    FAIL() << "the duplicate mark ended the unit";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("stream p.out -> c.in: a second end of work from producer copy 0"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(channel.ended());
  // The next unit starts clean.
  channel.begin_unit();
  ASSERT_TRUE(channel.try_push(Item::end_of_work(1)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  EXPECT_FALSE(pop_now(channel).has_value());
  EXPECT_TRUE(channel.ended());
}

TEST_F(InputChannelTest, DrainDiscardsTheRestOfTheUnitAndCountsIt) {
  InputChannel channel(8, 2, signal_, room_, "");
  for (std::uint64_t k = 0; k < 3; ++k) ASSERT_TRUE(channel.try_push(buffer_item(0, k)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  ASSERT_TRUE(channel.try_push(buffer_item(1, 3)));
  ASSERT_TRUE(channel.try_push(Item::end_of_work(1)));
  EXPECT_EQ(pool_.available(), pool_.count() - 4);
  EXPECT_EQ(channel.drain(), 4u);
  EXPECT_TRUE(channel.ended());
  EXPECT_EQ(pool_.available(), pool_.count()) << "discarded buffers went back to the pool";
  EXPECT_EQ(channel.drain(), 0u);
}

TEST_F(InputChannelTest, DepthRoundsUpToAPowerOfTwo) {
  InputChannel channel(3, 1, signal_, room_, "");
  EXPECT_EQ(channel.depth(), 4u);
  EXPECT_EQ(channel.upstream_copies(), 1);
  EXPECT_EQ(channel.free_room(), 4u);
}

TEST_F(InputChannelTest, TryPushFailsWhenFullAndSucceedsAfterAPop) {
  InputChannel channel(4, 1, signal_, room_, "");
  for (std::uint64_t k = 0; k < 4; ++k) {
    EXPECT_EQ(channel.free_room(), 4 - k);
    ASSERT_TRUE(channel.try_push(buffer_item(0, k)));
  }
  EXPECT_EQ(channel.free_room(), 0u);
  Item refused = buffer_item(0, 4);
  EXPECT_FALSE(channel.try_push(refused));
  EXPECT_FALSE(channel.try_push(Item::end_of_work(0)));

  EXPECT_EQ(pop_key(channel), 0u);
  EXPECT_EQ(channel.free_room(), 1u);
  EXPECT_TRUE(channel.try_push(refused));  // the caller still owned it; now the channel does
  EXPECT_FALSE(channel.try_push(Item::end_of_work(0)));
  for (std::uint64_t k = 1; k <= 4; ++k) EXPECT_EQ(pop_key(channel), k);
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  EXPECT_FALSE(pop_now(channel).has_value());
  EXPECT_EQ(pool_.available(), pool_.count());
}

TEST_F(InputChannelTest, ABlockedPopWakesOnAPushFromAnotherThread) {
  InputChannel channel(4, 1, signal_, room_, "");
  std::atomic<bool> pushed{false};
  bool pushed_before_return = false;
  std::optional<Buffer> got;
  std::uint64_t blocked = 0;
  std::thread consumer([&] {
    got = channel.pop(&blocked);
    pushed_before_return = pushed.load();
  });
  std::this_thread::sleep_for(50ms);
  pushed.store(true);
  ASSERT_TRUE(channel.try_push(buffer_item(0, 77, 5)));
  consumer.join();
  EXPECT_TRUE(pushed_before_return) << "pop() returned before anything was pushed";
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->key(), 77u);
  EXPECT_EQ(got->size(), 5u);
  EXPECT_FALSE(channel.ended());
}

TEST_F(InputChannelTest, ABlockedPopWakesOnTheLastEndOfWork) {
  InputChannel channel(4, 2, signal_, room_, "");
  ASSERT_TRUE(channel.try_push(Item::end_of_work(1)));
  std::atomic<bool> ended{false};
  bool ended_before_return = false;
  bool got_buffer = true;
  std::thread consumer([&] {
    std::uint64_t blocked = 0;
    got_buffer = channel.pop(&blocked).has_value();
    ended_before_return = ended.load();
  });
  std::this_thread::sleep_for(50ms);
  ended.store(true);
  ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
  consumer.join();
  EXPECT_FALSE(got_buffer);
  EXPECT_TRUE(ended_before_return);
}

TEST_F(InputChannelTest, AbortWakesABlockedPop) {
  InputChannel channel(4, 1, signal_, room_, "");
  std::atomic<int> outcome{0};  // 1: returned, 2: Aborted, 3: another exception
  std::thread consumer([&] {
    outcome = outcome_of([&] {
      std::uint64_t blocked = 0;
      channel.pop(&blocked);
    });
  });
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  signal_.abort();
  consumer.join();
  EXPECT_EQ(outcome.load(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
}

TEST_F(InputChannelTest, APopWakesAWriterWaitingForRoom) {
  InputChannel channel(2, 1, signal_, room_, "");
  ASSERT_TRUE(channel.try_push(buffer_item(0, 1)));
  ASSERT_TRUE(channel.try_push(buffer_item(0, 2)));
  const Item third = buffer_item(0, 3);
  std::atomic<bool> popped{false};
  bool popped_before_push = false;
  std::thread writer([&] {
    room_.wait([&] { return channel.try_push(third); });
    popped_before_push = popped.load();
  });
  std::this_thread::sleep_for(50ms);
  popped.store(true);
  EXPECT_EQ(pop_key(channel), 1u);
  writer.join();
  EXPECT_TRUE(popped_before_push) << "a full channel took an item";
  EXPECT_EQ(pop_key(channel), 2u);
  EXPECT_EQ(pop_key(channel), 3u);
}

// The sleeps' safety-net timeout (about 200 ms) would hide a lost wake-up in one hand-off;
// in fifty it would cost 10 s. Each round, the other side waits until this one sleeps
// (roughly: 1 ms, far past the spin and yield phases) before it acts.
constexpr int kRounds = 50;

TEST_F(InputChannelTest, EveryPushWakesTheSleepingConsumer) {
  InputChannel channel(4, 1, signal_, room_, "");
  std::atomic<int> popped{0};
  std::atomic<int> wrong{0};
  std::thread consumer([&] {
    for (int r = 0; r < kRounds; ++r) {
      std::uint64_t blocked = 0;
      std::optional<Buffer> b = channel.pop(&blocked);
      if (!b || b->key() != static_cast<std::uint64_t>(r)) wrong.fetch_add(1);
      popped.store(r + 1);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kRounds; ++r) {
    while (popped.load() < r) std::this_thread::yield();
    std::this_thread::sleep_for(1ms);
    ASSERT_TRUE(channel.try_push(buffer_item(0, r)));
  }
  consumer.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "pushes do not wake the consumer";
}

TEST_F(InputChannelTest, EveryPopWakesTheWriterWaitingForRoom) {
  InputChannel channel(2, 1, signal_, room_, "");
  ASSERT_TRUE(channel.try_push(buffer_item(0, 0)));
  ASSERT_TRUE(channel.try_push(buffer_item(0, 1)));
  std::atomic<int> pushed{0};
  std::thread writer([&] {
    for (int r = 0; r < kRounds; ++r) {
      const Item item = buffer_item(0, 2 + r);
      room_.wait([&] { return channel.try_push(item); });
      pushed.store(r + 1);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kRounds; ++r) {
    while (pushed.load() < r) std::this_thread::yield();
    std::this_thread::sleep_for(1ms);
    EXPECT_EQ(pop_key(channel), static_cast<std::uint64_t>(r));
  }
  writer.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "pops do not wake the writer";
  EXPECT_EQ(pop_key(channel), static_cast<std::uint64_t>(kRounds));
  EXPECT_EQ(pop_key(channel), static_cast<std::uint64_t>(kRounds + 1));
}

TEST_F(InputChannelTest, DestroyingTheChannelReturnsUnreadBuffers) {
  {
    InputChannel channel(8, 1, signal_, room_, "");
    ASSERT_TRUE(channel.try_push(buffer_item(0, 1)));
    ASSERT_TRUE(channel.try_push(buffer_item(0, 2)));
    ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
    EXPECT_EQ(pool_.available(), pool_.count() - 2);
  }
  EXPECT_EQ(pool_.available(), pool_.count());
}

// What the data plane's landing hears: the producer copy of each item popped from the
// landed lane, in the order they were popped.
struct RecordingObserver final : InputChannel::PopObserver {
  void popped(InputChannel&, std::uint32_t producer) noexcept override { producers.push_back(producer); }
  std::vector<std::uint32_t> producers;
};

// Copy 0 runs here (the local lane), copy 1 elsewhere (the landed lane): every buffer comes
// out once, each lane's in its order, the unit ends only with both marks, and the landing is
// told of exactly the items of its lane, whether read one at a time or in runs.
TEST_F(InputChannelTest, LocalAndLandedLanesEachKeepTheirOrderAndEndTogether) {
  for (const bool runs : {false, true}) {
    SCOPED_TRACE(runs ? "take_run" : "pop");
    InputChannel channel(4, 2, signal_, room_, "", std::vector<std::uint32_t>{0});
    RecordingObserver landing;
    channel.attach_landing(&landing, 4);
    for (std::uint64_t k = 0; k < 3; ++k) ASSERT_TRUE(channel.try_push(buffer_item(0, k)));
    ASSERT_TRUE(channel.try_push(Item::end_of_work(0)));
    for (std::uint64_t k = 100; k < 103; ++k) ASSERT_TRUE(channel.try_land(buffer_item(1, k)));
    ASSERT_TRUE(channel.try_land(Item::end_of_work(1)));
    EXPECT_EQ(channel.queued(), 8u);
    EXPECT_EQ(channel.capacity(), 8u);
    const Item refused = buffer_item(1, 999);
    EXPECT_FALSE(channel.try_land(refused)) << "the landed lane holds 4";
    detail::release_slot(refused.slot);  // still the caller's

    std::vector<std::uint64_t> local, landed;
    std::array<detail::TakenBuffer, 8> run{};
    for (int guard = 0; guard < 20; ++guard) {
      std::vector<std::uint64_t> keys;
      if (runs) {
        const std::size_t n = channel.take_run(run.data(), run.size());
        for (std::size_t i = 0; i < n; ++i) {
          keys.push_back(run[i].key);
          detail::release_slot(run[i].slot);
        }
        if (n != 0) {
          for (std::uint64_t k : keys) (k >= 100 ? landed : local).push_back(k);
          continue;
        }
      }
      std::optional<Buffer> b = pop_now(channel);  // a kept mark, or nothing left to run
      if (!b) break;
      (b->key() >= 100 ? landed : local).push_back(b->key());
    }
    EXPECT_TRUE(channel.ended());
    EXPECT_EQ(local, (std::vector<std::uint64_t>{0, 1, 2}));
    EXPECT_EQ(landed, (std::vector<std::uint64_t>{100, 101, 102}));
    EXPECT_EQ(landing.producers, (std::vector<std::uint32_t>{1, 1, 1, 1})) << "three buffers and the mark";
    EXPECT_EQ(pool_.available(), pool_.count());
  }
}

// With both lanes full, reads take from one and then the other: a busy lane never starves
// the other (producers on both sides are waiting for room).
TEST_F(InputChannelTest, ReadsTakeFromBothLanesInTurn) {
  InputChannel channel(4, 2, signal_, room_, "", std::vector<std::uint32_t>{0});
  RecordingObserver landing;
  channel.attach_landing(&landing, 4);
  for (std::uint64_t k = 0; k < 4; ++k) {
    ASSERT_TRUE(channel.try_push(buffer_item(0, k)));
    ASSERT_TRUE(channel.try_land(buffer_item(1, 100 + k)));
  }
  std::array<detail::TakenBuffer, 2> run{};
  int from_local = 0, from_landed = 0;
  for (int i = 0; i < 4; ++i) {
    const std::size_t n = channel.take_run(run.data(), 1);
    ASSERT_EQ(n, 1u);
    (run[0].key >= 100 ? from_landed : from_local) += 1;
    detail::release_slot(run[0].slot);
  }
  EXPECT_EQ(from_local, 2);
  EXPECT_EQ(from_landed, 2);
  int popped_local = 0, popped_landed = 0;
  for (int i = 0; i < 4; ++i) (pop_key(channel) >= 100 ? popped_landed : popped_local) += 1;
  EXPECT_EQ(popped_local, 2);
  EXPECT_EQ(popped_landed, 2);
}

TEST_F(InputChannelTest, ABlockedPopWakesOnALandedItem) {
  InputChannel channel(4, 1, signal_, room_, "", std::vector<std::uint32_t>{});  // the copy runs elsewhere
  RecordingObserver landing;
  channel.attach_landing(&landing, 2);
  std::atomic<bool> landed{false};
  bool landed_before_return = false;
  std::optional<Buffer> got;
  std::thread consumer([&] {
    std::uint64_t blocked = 0;
    got = channel.pop(&blocked);
    landed_before_return = landed.load();
  });
  std::this_thread::sleep_for(50ms);
  landed.store(true);
  ASSERT_TRUE(channel.try_land(buffer_item(0, 55)));
  consumer.join();
  EXPECT_TRUE(landed_before_return) << "pop() returned before anything landed";
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->key(), 55u);
  EXPECT_EQ(landing.producers, std::vector<std::uint32_t>{0});
}

TEST_F(InputChannelTest, DestroyingTheChannelReturnsUnreadLandedBuffers) {
  RecordingObserver landing;
  {
    InputChannel channel(8, 2, signal_, room_, "", std::vector<std::uint32_t>{0});
    channel.attach_landing(&landing, 4);
    ASSERT_TRUE(channel.try_push(buffer_item(0, 1)));
    ASSERT_TRUE(channel.try_land(buffer_item(1, 2)));
    ASSERT_TRUE(channel.try_land(buffer_item(1, 3)));
    EXPECT_EQ(pool_.available(), pool_.count() - 3);
  }
  EXPECT_EQ(pool_.available(), pool_.count());
}

// Each local producer copy has a lane of its own, of the whole depth (rounded up): a full
// lane refuses only its own producer, a copy that runs elsewhere has none, and the room
// demand_driven ranks by is 0 for a producer whose lane is full, else the lanes' mean room.
// Destroying the channel gives back what every lane still holds.
TEST_F(InputChannelTest, EachLocalProducerHasALaneOfTheWholeDepth) {
  {
    InputChannel channel(6, 4, signal_, room_, "", std::vector<std::uint32_t>{0, 2, 3});
    EXPECT_EQ(channel.depth(), 24u) << "three lanes of 6 rounded up to 8";
    EXPECT_EQ(channel.capacity(), 24u);
    EXPECT_TRUE(channel.has_lane(0));
    EXPECT_FALSE(channel.has_lane(1)) << "copy 1 runs elsewhere";
    EXPECT_FALSE(channel.has_lane(4));
    EXPECT_EQ(channel.free_room(1), 0u);
    for (std::uint64_t k = 0; k < 8; ++k) ASSERT_TRUE(channel.try_push(buffer_item(0, k)));
    const Item refused = buffer_item(0, 8);
    EXPECT_FALSE(channel.try_push(refused)) << "copy 0's lane is full";
    detail::release_slot(refused.slot);  // still the caller's
    EXPECT_EQ(channel.free_room(0), 0u) << "a push from copy 0 would be refused";
    ASSERT_TRUE(channel.try_push(buffer_item(2, 100)));
    EXPECT_EQ(channel.free_room(), 15u);
    EXPECT_EQ(channel.free_room(2), 5u) << "(0 + 7 + 8) / 3, rounded up";
    EXPECT_EQ(channel.queued(), 9u);
    EXPECT_EQ(pool_.available(), pool_.count() - 9);
  }
  EXPECT_EQ(pool_.available(), pool_.count()) << "destroying the channel gave back every lane's buffers";
  EXPECT_THROW(InputChannel(16, 2, signal_, room_, "a.out -> b.in", std::vector<std::uint32_t>{1, 1}), Error);
}

// An empty lane's turn does not go to the same neighbour every time: two full local lanes
// beside an empty landed lane with two turns (two copies elsewhere) are read alternately.
TEST_F(InputChannelTest, AnEmptyLanesTurnsDoNotFavourOneNeighbour) {
  InputChannel channel(4, 4, signal_, room_, "", std::vector<std::uint32_t>{0, 1});
  RecordingObserver landing;
  channel.attach_landing(&landing, 4);
  fill_lanes(channel, 2, 4);
  std::array<int, 2> from{};
  for (int i = 0; i < 4; ++i) from[take_one_key(channel) / 100] += 1;
  EXPECT_EQ(from, (std::array<int, 2>{2, 2}));
  from = {};
  for (int i = 0; i < 4; ++i) from[pop_key(channel) / 100] += 1;
  EXPECT_EQ(from, (std::array<int, 2>{2, 2}));
}

// Reads go round the lanes: with every lane full, runs of one take one item from each lane
// before any lane gives a second.
TEST_F(InputChannelTest, ReadsTakeFromEveryLaneInTurn) {
  InputChannel channel(12, 4, signal_, room_, "", std::vector<std::uint32_t>{0, 1, 2});
  RecordingObserver landing;
  channel.attach_landing(&landing, 4);
  fill_lanes(channel, 3, 4);
  for (std::uint64_t k = 0; k < 4; ++k) ASSERT_TRUE(channel.try_land(buffer_item(3, 300 + k)));
  for (int round = 0; round < 2; ++round) {
    std::array<int, 4> from{};
    for (int i = 0; i < 4; ++i) {
      const std::uint64_t key = take_one_key(channel);
      from[key / 100] += 1;
      EXPECT_EQ(key % 100, static_cast<std::uint64_t>(round)) << "each lane in its order";
    }
    EXPECT_EQ(from, (std::array<int, 4>{1, 1, 1, 1})) << "round " << round;
  }
  std::array<int, 4> popped{};
  for (int i = 0; i < 4; ++i) popped[pop_key(channel) / 100] += 1;
  EXPECT_EQ(popped, (std::array<int, 4>{1, 1, 1, 1}));
}

// The round is one turn per producer copy: the landed lane, which carries every copy that
// runs elsewhere, gets one turn for each of them. Two copies here and two elsewhere: half the
// reads go to the landed lane first, as half the producers send through it.
TEST_F(InputChannelTest, TheLandedLaneGetsATurnPerCopyThatRunsElsewhere) {
  InputChannel channel(8, 4, signal_, room_, "", std::vector<std::uint32_t>{0, 1});
  RecordingObserver landing;
  channel.attach_landing(&landing, 8);
  fill_lanes(channel, 2, 4);
  for (std::uint64_t k = 0; k < 8; ++k) ASSERT_TRUE(channel.try_land(buffer_item(2 + k % 2, 200 + k)));
  std::array<int, 3> from{};  // local copy 0, local copy 1, landed
  for (int i = 0; i < 8; ++i) from[std::min<std::uint64_t>(take_one_key(channel) / 100, 2)] += 1;
  EXPECT_EQ(from, (std::array<int, 3>{2, 2, 4}));
  EXPECT_EQ(landing.producers.size(), 4u);
  std::array<detail::TakenBuffer, 1> run{};
  while (channel.take_run(run.data(), 1) == 1) detail::release_slot(run[0].slot);
}

// Four producer copies on four threads push into one consumer copy at once, through lanes
// much shallower than what they send: every buffer arrives once, each producer's in its
// order, and the unit ends only after the last mark.
TEST_F(InputChannelTest, ConcurrentProducersEachArriveWholeAndInOrder) {
  constexpr std::uint32_t kProducers = 4;
  constexpr std::uint64_t kEach = 20000;
  BufferPool pool("p", 8, 64, signal_);
  InputChannel channel(16, kProducers, signal_, room_, "");
  std::vector<std::thread> producers;
  std::array<std::atomic<int>, kProducers> outcomes{};
  for (std::uint32_t p = 0; p < kProducers; ++p) {
    producers.emplace_back([&, p] {
      outcomes[p] = outcome_of([&] {  // a watchdog abort fails the test, not the binary
        for (std::uint64_t k = 0; k <= kEach; ++k) {
          Item item = Item::end_of_work(p);
          if (k < kEach) {
            Buffer b = pool.acquire(nullptr);
            item = Item{detail::BufferAccess::unwrap(b), 0, p, (std::uint64_t{p} << 32) | k};
          }
          room_.wait([&] { return channel.try_push(item); });
        }
      });
    });
  }
  std::array<std::uint64_t, kProducers> next{};
  std::uint64_t out_of_order = 0;
  std::uint64_t blocked = 0;
  std::array<detail::TakenBuffer, 8> run{};
  auto check = [&](std::uint64_t key) {
    const auto p = static_cast<std::size_t>(key >> 32);
    if (p >= kProducers || (key & 0xffffffffu) != next[p]) ++out_of_order;
    if (p < kProducers) next[p] = (key & 0xffffffffu) + 1;
  };
  for (;;) {
    const std::size_t n = channel.take_run(run.data(), run.size());
    for (std::size_t i = 0; i < n; ++i) {
      check(run[i].key);
      detail::release_slot(run[i].slot);
    }
    if (n != 0) continue;
    std::optional<Buffer> b = channel.pop(&blocked);
    if (!b) break;
    check(b->key());
  }
  for (std::thread& t : producers) t.join();
  for (std::uint32_t p = 0; p < kProducers; ++p) EXPECT_EQ(outcomes[p].load(), 1) << "producer " << p;
  EXPECT_EQ(out_of_order, 0u);
  for (std::uint32_t p = 0; p < kProducers; ++p) EXPECT_EQ(next[p], kEach) << "producer " << p;
  EXPECT_TRUE(channel.ended());
  EXPECT_EQ(pool.available(), pool.count());
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

// After an abort every read throws, even one that would find a buffer waiting: a filter
// that catches Aborted and reads on must not carry on as if nothing happened.
TEST(InputChannelAbortTest, PopThrowsAfterAbortEvenWithDataWaiting) {
  RunSignal signal;
  Waiter room(signal);
  BufferPool pool("p", 64, 4, signal);
  InputChannel channel(8, 1, signal, room);
  Buffer b = pool.acquire(nullptr);
  ASSERT_TRUE(channel.try_push(Item{detail::BufferAccess::unwrap(b), 0, 0, 1}));
  signal.abort();
  std::uint64_t blocked = 0;
  EXPECT_THROW(channel.pop(&blocked), Aborted);
  EXPECT_THROW(pool.acquire(nullptr), Aborted) << "a free block is there, but the run is over";
}

}  // namespace
}  // namespace sluice
