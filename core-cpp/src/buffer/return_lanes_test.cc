#include "buffer/return_lanes.h"

#include <atomic>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace sluice {
namespace {

// Threads that live at the same time each get a ring of their own, the same one on every
// call, until the lanes run out; the threads after that get none (and use the shared ring).
TEST(ReturnLanes, EachLivingThreadGetsARingOfItsOwnUntilTheLanesRunOut) {
  ReturnLanes lanes(8);
  constexpr std::size_t kThreads = ReturnLanes::kLanes + 3;
  std::vector<ReturnLanes::Ring*> first(kThreads), second(kThreads);
  std::atomic<std::size_t> arrived{0};
  std::atomic<std::size_t> done{0};
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      arrived.fetch_add(1);
      while (arrived.load() < kThreads) std::this_thread::yield();
      first[t] = lanes.mine();
      second[t] = lanes.mine();
      done.fetch_add(1);
      while (done.load() < kThreads) std::this_thread::yield();  // alive until all have asked
    });
  }
  for (auto& t : threads) t.join();
  std::set<ReturnLanes::Ring*> rings;
  std::size_t without = 0;
  for (std::size_t t = 0; t < kThreads; ++t) {
    EXPECT_EQ(first[t], second[t]) << "thread " << t << " got another ring on its second call";
    if (first[t] == nullptr) {
      ++without;
    } else {
      rings.insert(first[t]);
    }
  }
  EXPECT_EQ(rings.size(), ReturnLanes::kLanes) << "two living threads share a ring";
  EXPECT_EQ(without, kThreads - ReturnLanes::kLanes);
  for (std::size_t i = 0; i < ReturnLanes::kLanes; ++i) EXPECT_TRUE(rings.count(lanes.ring(i)) == 1);
}

TEST(ReturnLanes, ARingHoldsAsManyBlocksAsThePoolAndCountsThem) {
  ReturnLanes lanes(5);
  ReturnLanes::Ring* mine = lanes.mine();
  ASSERT_NE(mine, nullptr);
  std::vector<detail::Slot> slots(5);
  for (auto& s : slots) EXPECT_TRUE(mine->try_push_single(&s));
  EXPECT_EQ(lanes.size_approx(), 5u);
  detail::Slot* out = nullptr;
  EXPECT_TRUE(lanes.ring(0)->try_pop(out));
  EXPECT_EQ(out, &slots[0]);
  EXPECT_EQ(lanes.size_approx(), 4u);
}

}  // namespace
}  // namespace sluice
