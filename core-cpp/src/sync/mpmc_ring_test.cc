#include "sync/mpmc_ring.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

TEST(MpmcRing, FifoOnOneThread) {
  MpmcRing<int> ring(8);
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(ring.try_push(i));
  EXPECT_EQ(ring.size_approx(), 5u);
  for (int i = 0; i < 5; ++i) {
    int out = -1;
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, i);
  }
  EXPECT_EQ(ring.size_approx(), 0u);
}

TEST(MpmcRing, FifoAcrossManyWrapArounds) {
  MpmcRing<std::uint64_t> ring(4);
  std::uint64_t next_in = 0;
  std::uint64_t next_out = 0;
  // Push three, pop two, repeatedly: the cells' sequence numbers go round many times.
  for (int round = 0; round < 1000; ++round) {
    for (int i = 0; i < 3 && ring.try_push(next_in); ++i) ++next_in;
    for (int i = 0; i < 2; ++i) {
      std::uint64_t out = 0;
      ASSERT_TRUE(ring.try_pop(out));
      ASSERT_EQ(out, next_out++);
    }
  }
  std::uint64_t out = 0;
  while (ring.try_pop(out)) ASSERT_EQ(out, next_out++);
  EXPECT_EQ(next_out, next_in);
  EXPECT_GT(next_in, 2000u);
}

TEST(MpmcRing, CapacityRoundsUpToAPowerOfTwo) {
  EXPECT_EQ(MpmcRing<int>(0).capacity(), 2u);
  EXPECT_EQ(MpmcRing<int>(1).capacity(), 2u);
  EXPECT_EQ(MpmcRing<int>(2).capacity(), 2u);
  EXPECT_EQ(MpmcRing<int>(3).capacity(), 4u);
  EXPECT_EQ(MpmcRing<int>(5).capacity(), 8u);
  EXPECT_EQ(MpmcRing<int>(16).capacity(), 16u);
  EXPECT_EQ(MpmcRing<int>(17).capacity(), 32u);
  EXPECT_EQ(MpmcRing<int>(1000).capacity(), 1024u);
}

TEST(MpmcRing, HoldsExactlyItsCapacity) {
  MpmcRing<int> ring(5);  // rounded up to 8
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(ring.try_push(i)) << i;
  EXPECT_FALSE(ring.try_push(99));
  EXPECT_EQ(ring.size_approx(), 8u);
  int out = -1;
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_EQ(out, 0);
  EXPECT_TRUE(ring.try_push(8));
  EXPECT_FALSE(ring.try_push(100));
  // The refused values never went in.
  for (int i = 1; i <= 8; ++i) {
    ASSERT_TRUE(ring.try_pop(out));
    EXPECT_EQ(out, i);
  }
}

TEST(MpmcRing, TryPopFailsWhenEmptyAndLeavesTheOutputAlone) {
  MpmcRing<int> ring(4);
  int out = 42;
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_EQ(out, 42);
  ASSERT_TRUE(ring.try_push(7));
  ASSERT_TRUE(ring.try_pop(out));
  EXPECT_FALSE(ring.try_pop(out));
  EXPECT_EQ(out, 7);
}

// The _only variants (one producer, one consumer): the room comes from the consumer's
// position, and a popped cell is left as it is; neither may let an item in twice or over
// one not yet read, lap after lap.
TEST(MpmcRing, OnlyVariantsHoldExactlyTheirCapacityLapAfterLap) {
  MpmcRing<int> ring(4);
  auto push = [&](int v) { return ring.try_push_only_with([&](int& cell) noexcept { cell = v; }); };
  int next_in = 0;
  int next_out = 0;
  for (int lap = 0; lap < 100; ++lap) {
    while (push(next_in)) ++next_in;
    ASSERT_EQ(next_in - next_out, 4) << "lap " << lap;  // full at exactly its capacity
    int out = -1;
    ASSERT_TRUE(ring.try_pop_only(out));
    ASSERT_EQ(out, next_out++);
    ASSERT_TRUE(push(next_in++));  // the room the pop made, seen at once
    ASSERT_FALSE(push(-1));
    // Three of the four in one run, the fourth on its own.
    std::vector<int> run;
    ASSERT_EQ(ring.try_pop_run_only(3, [&](int v) noexcept {
      run.push_back(v);
      return true;
    }), 3u);
    for (int v : run) ASSERT_EQ(v, next_out++);
    ASSERT_TRUE(ring.try_pop_only(out));
    ASSERT_EQ(out, next_out++);
    EXPECT_FALSE(ring.try_pop_only(out));  // a cell left from an earlier lap is not an item
    EXPECT_EQ(ring.try_pop_run_only(4, [](int) noexcept { return true; }), 0u);
  }
}

TEST(MpmcRing, OnlyRunsGiveTheirCellsBackOnlyWhenDoneAndStopAfterTheItemThatSaysSo) {
  MpmcRing<int> ring(4);
  auto push = [&](int v) { return ring.try_push_only_with([&](int& cell) noexcept { cell = v; }); };
  int out = -1;
  EXPECT_FALSE(ring.try_pop_only(out));  // a fresh ring: its cells' numbers mean empty
  EXPECT_EQ(out, -1);
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(push(i));
  // While a run reads, none of its cells is free yet: the position is published at the end.
  int seen = 0;
  ASSERT_EQ(ring.try_pop_run_only(4, [&](int v) noexcept {
    EXPECT_EQ(v, seen++);
    EXPECT_FALSE(push(100 + v)) << "a cell was given back while its run was being read";
    return v != 1;  // stop after the second item: it is taken, the rest stay
  }), 2u);
  EXPECT_EQ(seen, 2);
  ASSERT_TRUE(push(4));
  ASSERT_TRUE(push(5));
  EXPECT_FALSE(push(6));
  for (int want = 2; want <= 5; ++want) {
    ASSERT_TRUE(ring.try_pop_only(out));
    EXPECT_EQ(out, want);  // the item a run stopped after never comes again
  }
  EXPECT_FALSE(ring.try_pop_only(out));
}

TEST(MpmcRing, OnlyVariantsPassEveryItemOnceInOrderBetweenTwoThreads) {
  MpmcRing<std::uint64_t> ring(8);  // small: full and empty often
  const std::uint64_t total = 2'000'000;
  std::thread producer([&] {
    for (std::uint64_t i = 0; i < total;) {
      if (ring.try_push_only_with([&](std::uint64_t& cell) noexcept { cell = i; })) {
        ++i;
      } else {
        std::this_thread::yield();
      }
    }
  });
  std::uint64_t next = 0;
  bool in_order = true;
  while (next < total) {
    std::uint64_t out = 0;
    if ((next & 1) != 0 && ring.try_pop_only(out)) {
      in_order = in_order && out == next;
      ++next;
    } else if (ring.try_pop_run_only(5, [&](std::uint64_t v) noexcept {
                 in_order = in_order && v == next;
                 ++next;
                 return true;
               }) == 0) {
      std::this_thread::yield();
    }
  }
  producer.join();
  EXPECT_TRUE(in_order);
  EXPECT_EQ(next, total);
  std::uint64_t extra = 0;
  EXPECT_FALSE(ring.try_pop_only(extra));
}

// Producers push (producer, seq) pairs into a small ring (so it is full often) while one
// consumer pops: every item must arrive exactly once, and each producer's in order.
class MpmcRingProducers : public ::testing::TestWithParam<int> {};

TEST_P(MpmcRingProducers, EveryItemOnceAndInOrderPerProducer) {
  const int producers = GetParam();
  const std::uint64_t total = 3'000'000;
  const std::uint64_t per_producer = total / producers;
  MpmcRing<std::uint64_t> ring(256);

  // Set when the consumer sees no progress for seconds (items lost): everyone stops.
  std::atomic<bool> give_up{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < producers; ++p) {
    threads.emplace_back([&ring, &give_up, p, per_producer] {
      for (std::uint64_t seq = 0; seq < per_producer; ++seq) {
        const std::uint64_t item = (static_cast<std::uint64_t>(p) << 32) | seq;
        while (!ring.try_push(item)) {
          if (give_up.load(std::memory_order_relaxed)) return;
          std::this_thread::yield();
        }
      }
    });
  }

  std::vector<std::uint64_t> next(producers, 0);
  std::uint64_t received = 0;
  std::uint64_t violations = 0;
  std::uint64_t first_bad = 0;
  auto last_progress = std::chrono::steady_clock::now();
  while (received < per_producer * producers) {
    std::uint64_t item = 0;
    if (!ring.try_pop(item)) {
      if (std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(5)) {
        give_up.store(true);
        ADD_FAILURE() << "nothing arrived for 5 s after " << received << " items";
        break;
      }
      std::this_thread::yield();
      continue;
    }
    last_progress = std::chrono::steady_clock::now();
    ++received;
    const std::uint64_t p = item >> 32;
    const std::uint64_t seq = item & 0xffffffffu;
    // Exactly once and in order means each producer's items arrive as 0, 1, 2, ...
    if (p >= static_cast<std::uint64_t>(producers) || seq != next[p]) {
      if (violations++ == 0) first_bad = item;
      if (p < static_cast<std::uint64_t>(producers)) next[p] = seq + 1;
    } else {
      ++next[p];
    }
  }
  for (std::thread& t : threads) t.join();

  EXPECT_EQ(violations, 0u) << "first out-of-order item: producer " << (first_bad >> 32)
                            << " seq " << (first_bad & 0xffffffffu);
  for (int p = 0; p < producers; ++p) EXPECT_EQ(next[p], per_producer) << "producer " << p;
  std::uint64_t extra = 0;
  EXPECT_FALSE(ring.try_pop(extra)) << "an item arrived twice";
}

// Two producers and two consumers: every item is taken by exactly one consumer, and what
// each consumer takes from one producer comes in that producer's order.
TEST(MpmcRing, TwoConsumersShareTheItemsWithoutLossOrDuplicates) {
  constexpr int kProducers = 2;
  constexpr std::uint64_t kPerProducer = 500'000;
  MpmcRing<std::uint64_t> ring(64);
  std::atomic<std::uint64_t> taken{0};
  std::atomic<bool> give_up{false};
  std::vector<std::thread> threads;
  for (int p = 0; p < kProducers; ++p) {
    threads.emplace_back([&, p] {
      for (std::uint64_t seq = 0; seq < kPerProducer; ++seq) {
        while (!ring.try_push((static_cast<std::uint64_t>(p) << 32) | seq)) {
          if (give_up.load(std::memory_order_relaxed)) return;
          std::this_thread::yield();
        }
      }
    });
  }
  std::vector<std::vector<std::uint64_t>> got(2);
  std::atomic<int> out_of_order{0};
  for (int c = 0; c < 2; ++c) {
    threads.emplace_back([&, c] {
      std::vector<std::int64_t> last(kProducers, -1);
      auto last_progress = std::chrono::steady_clock::now();
      while (taken.load() < kProducers * kPerProducer) {
        std::uint64_t item = 0;
        if (!ring.try_pop(item)) {
          if (give_up.load() ||
              std::chrono::steady_clock::now() - last_progress > std::chrono::seconds(5)) {
            give_up.store(true);
            return;
          }
          std::this_thread::yield();
          continue;
        }
        last_progress = std::chrono::steady_clock::now();
        taken.fetch_add(1);
        got[c].push_back(item);
        const std::uint64_t p = item >> 32;
        const auto seq = static_cast<std::int64_t>(item & 0xffffffffu);
        if (p < kProducers) {
          if (seq <= last[p]) out_of_order.fetch_add(1);
          last[p] = seq;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_FALSE(give_up.load()) << "items were lost: " << taken.load() << " arrived";
  EXPECT_EQ(out_of_order.load(), 0);
  std::vector<std::vector<int>> seen(kProducers, std::vector<int>(kPerProducer, 0));
  std::uint64_t bad = 0;
  for (const auto& items : got) {
    for (std::uint64_t item : items) {
      const std::uint64_t p = item >> 32;
      const std::uint64_t seq = item & 0xffffffffu;
      if (p < kProducers && seq < kPerProducer) {
        ++seen[p][seq];
      } else {
        ++bad;
      }
    }
  }
  EXPECT_EQ(bad, 0u);
  std::uint64_t not_once = 0;
  for (const auto& per : seen) {
    for (int n : per) not_once += n != 1;
  }
  EXPECT_EQ(not_once, 0u) << "items lost or duplicated";
}

INSTANTIATE_TEST_SUITE_P(Threads, MpmcRingProducers, ::testing::Values(2, 4),
                         [](const ::testing::TestParamInfo<int>& info) {
                           return std::to_string(info.param) + "Producers";
                         });

}  // namespace
}  // namespace sluice
