#include "buffer/buffer_pool.h"

#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/slot.h"
#include "sluice/error.h"
#include "testing/test_watchdog.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;

// Pools of 3 blocks: the free list's ring holds 4, so a block released twice would show
// up as available() == 4 instead of vanishing silently.
constexpr std::size_t kCount = 3;

// Every free block (and at most one more, should the pool hand out too many).
std::vector<Buffer> acquire_all(BufferPool& pool) {
  std::vector<Buffer> buffers;
  while (buffers.size() <= pool.count()) {
    std::optional<Buffer> buffer = pool.try_acquire();
    if (!buffer) break;
    buffers.push_back(std::move(*buffer));
  }
  return buffers;
}

TEST(BufferPool, BlocksHaveTheRequestedSizeAndAreCacheLineAligned) {
  RunSignal signal;
  BufferPool pool("a.out -> b.in", 100, 5, signal);
  EXPECT_EQ(pool.name(), "a.out -> b.in");
  EXPECT_EQ(pool.count(), 5u);
  EXPECT_EQ(pool.buffer_size(), 100u);
  EXPECT_EQ(pool.available(), 5u);

  std::vector<Buffer> buffers = acquire_all(pool);
  ASSERT_EQ(buffers.size(), 5u);
  std::set<const std::byte*> starts;
  for (const Buffer& b : buffers) {
    EXPECT_TRUE(b.valid());
    EXPECT_EQ(b.capacity(), 100u);
    EXPECT_EQ(b.size(), 0u);
    EXPECT_EQ(b.key(), 0u);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, 0u);
    // Inside the pool's one allocation: 5 blocks of 100 bytes rounded up to 128.
    EXPECT_GE(b.data(), pool.memory());
    EXPECT_LE(b.data() + 128, pool.memory() + 5 * 128);
    starts.insert(b.data());
  }
  EXPECT_EQ(starts.size(), 5u) << "two buffers share a block";
}

TEST(BufferPool, TryAcquireIsEmptyOnceEveryBlockIsOut) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  std::vector<Buffer> buffers = acquire_all(pool);
  EXPECT_EQ(buffers.size(), kCount);
  EXPECT_EQ(pool.available(), 0u);
  EXPECT_FALSE(pool.try_acquire().has_value());
}

TEST(BufferPool, DestroyingABufferReturnsItsBlock) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  std::vector<Buffer> buffers = acquire_all(pool);
  const std::byte* block = buffers[1].data();
  buffers.erase(buffers.begin() + 1);
  EXPECT_EQ(pool.available(), 1u);
  std::optional<Buffer> again = pool.try_acquire();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->data(), block);
  EXPECT_EQ(again->size(), 0u);
  buffers.clear();
  again.reset();
  EXPECT_EQ(pool.available(), kCount);
}

TEST(BufferPool, ABlockedAcquireWakesWhenABufferIsReleased) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  std::vector<Buffer> buffers = acquire_all(pool);
  const std::byte* released = buffers.back().data();

  std::atomic<bool> started{false};
  std::atomic<bool> got{false};
  const std::byte* got_block = nullptr;
  std::uint64_t blocked_ns = 0;
  std::thread taker([&] {
    started.store(true);
    Buffer b = pool.acquire(&blocked_ns);
    got_block = b.data();
    got.store(true);
  });
  // Release only once the taker is asleep in acquire(), however late it started.
  while (!started.load() || !pool.has_sleeper()) std::this_thread::yield();
  EXPECT_FALSE(got.load()) << "acquire() returned while the pool was empty";
  buffers.pop_back();  // releases one block
  taker.join();
  EXPECT_TRUE(got.load());
  EXPECT_EQ(got_block, released);
  EXPECT_GT(blocked_ns, 0u);
  EXPECT_EQ(pool.available(), 1u);  // the taker's buffer went back when it ended
}

// The sleep's safety-net timeout (about 200 ms) would hide a lost wake-up in one hand-off;
// in fifty it costs 10 s. Two threads pass the only block back and forth, each acquire
// asleep until the other releases.
TEST(BufferPool, EveryReleaseWakesTheBlockedAcquire) {
  RunSignal signal;
  BufferPool pool("p", 64, 1, signal);
  constexpr int kHandOffs = 50;
  std::atomic<int> turn{0};  // whose acquire is next; it goes up with each one
  auto player = [&](int parity) {
    for (int n = parity; n < kHandOffs; n += 2) {
      while (turn.load() != n) std::this_thread::yield();
      Buffer b = pool.acquire(nullptr);  // sleeps until the other player releases
      turn.store(n + 1);                 // let the other one try (and sleep)
      std::this_thread::sleep_for(1ms);
    }  // b goes back here
  };
  const auto start = std::chrono::steady_clock::now();
  std::thread even(player, 0);
  std::thread odd(player, 1);
  even.join();
  odd.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "releases do not wake acquire()";
  EXPECT_EQ(pool.available(), 1u);
}

TEST(BufferPool, AbortMakesABlockedAcquireThrow) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  std::vector<Buffer> buffers = acquire_all(pool);

  std::atomic<int> outcome{0};  // 1: returned a buffer, 2: Aborted, 3: something else
  std::thread taker([&] {
    outcome = testing::outcome_of([&] {
      std::uint64_t blocked = 0;
      Buffer b = pool.acquire(&blocked);
    });
  });
  std::this_thread::sleep_for(50ms);
  const auto start = std::chrono::steady_clock::now();
  signal.abort();
  taker.join();
  EXPECT_EQ(outcome.load(), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s);
  EXPECT_EQ(pool.available(), 0u);  // nothing was taken or given back
}

TEST(BufferPool, AcquireOnAnEmptyPoolAfterAbortThrowsAtOnce) {
  RunSignal signal;
  BufferPool pool("p", 64, 1, signal);
  std::optional<Buffer> only = pool.try_acquire();
  ASSERT_TRUE(only.has_value());
  signal.abort();
  std::uint64_t blocked = 0;
  EXPECT_THROW(pool.acquire(&blocked), Aborted);
}

// What a broadcast does: one slot, n references, one Buffer per holder.
TEST(BufferPool, ASharedBlockReturnsAfterItsLastHolderReleases) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  Buffer original = pool.acquire(nullptr);
  original.resize(10);
  detail::Slot* slot = detail::BufferAccess::unwrap(original);
  EXPECT_FALSE(original.valid());
  slot->refs.fetch_add(2);  // 3 holders
  std::vector<Buffer> holders;
  for (int i = 0; i < 3; ++i) holders.push_back(detail::BufferAccess::wrap(slot, 10, 7));

  EXPECT_EQ(pool.available(), kCount - 1);
  for (const Buffer& b : holders) {
    EXPECT_TRUE(b.is_shared());
    EXPECT_EQ(b.data(), holders[0].data());
    EXPECT_EQ(b.size(), 10u);
    EXPECT_EQ(b.key(), 7u);
  }
  holders[0].reset();
  EXPECT_EQ(pool.available(), kCount - 1);
  EXPECT_TRUE(holders[2].is_shared());
  holders[1].reset();
  EXPECT_EQ(pool.available(), kCount - 1);
  EXPECT_FALSE(holders[2].is_shared()) << "the last holder owns the block alone";
  holders[2].reset();
  EXPECT_EQ(pool.available(), kCount);
}

TEST(BufferPool, SharedHoldersReleasingConcurrentlyReturnTheBlockOnce) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  // Two threads release their holders of one block at the same moment, many times over:
  // exactly one of them must hand the block back. The main thread sets up each round.
  constexpr int kRounds = 20000;
  Buffer mine;
  Buffer theirs;
  std::atomic<int> round{-1};
  std::atomic<int> released{-1};  // the last round the other thread released in
  auto wait_for = [](const std::atomic<int>& value, int want) {
    for (int spins = 0; value.load() < want; ++spins) {
      if (spins > 100) std::this_thread::yield();  // the other thread is not running
    }
  };
  std::thread other([&] {
    for (int r = 0; r < kRounds; ++r) {
      wait_for(round, r);
      theirs.reset();
      released.store(r);
    }
  });
  std::uint64_t double_releases = 0;
  for (int r = 0; r < kRounds; ++r) {
    Buffer b = pool.acquire(nullptr);
    detail::Slot* slot = detail::BufferAccess::unwrap(b);
    slot->refs.fetch_add(1);
    mine = detail::BufferAccess::wrap(slot, 0, 0);
    theirs = detail::BufferAccess::wrap(slot, 0, 0);
    round.store(r);  // go
    mine.reset();
    wait_for(released, r);
    if (pool.available() != kCount) {
      ++double_releases;
      break;  // the free list is corrupt now
    }
  }
  if (double_releases != 0) round.store(kRounds);  // release the other thread
  other.join();
  EXPECT_EQ(double_releases, 0u) << "a shared block went back to the pool twice (or never)";
}

// Releases go into a ring per releasing thread (return_lanes.h), up to a few threads, and
// into the shared ring beyond: a pool that several threads take from finds every block
// again, wherever it was released.
TEST(BufferPool, BlocksReleasedByMoreThreadsThanLanesAreAllTakenAgain) {
  constexpr std::size_t kBlocks = 40;
  constexpr std::size_t kThreads = ReturnLanes::kLanes * 2;
  RunSignal signal;
  BufferPool pool("p", 64, kBlocks, signal);
  for (int round = 0; round < 3; ++round) {
    std::vector<Buffer> buffers = acquire_all(pool);
    ASSERT_EQ(buffers.size(), kBlocks) << "round " << round;
    std::set<const std::byte*> blocks;
    for (const Buffer& b : buffers) blocks.insert(b.data());
    EXPECT_EQ(blocks.size(), kBlocks) << "a block was handed out twice in round " << round;
    std::atomic<std::size_t> ready{0};
    std::vector<std::thread> releasers;
    for (std::size_t t = 0; t < kThreads; ++t) {
      std::vector<Buffer> share;
      for (std::size_t i = t; i < kBlocks; i += kThreads) share.push_back(std::move(buffers[i]));
      releasers.emplace_back([&ready, share = std::move(share)]() mutable {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        share.clear();
      });
    }
    for (auto& t : releasers) t.join();
    EXPECT_EQ(pool.available(), kBlocks) << "round " << round;
  }
}

// Whether the page holding `p` is mapped in this process (mincore fails with ENOMEM if not).
bool mapped(const std::byte* p) {
  const auto page = static_cast<std::uintptr_t>(::sysconf(_SC_PAGESIZE));
  unsigned char resident = 0;
  void* start = reinterpret_cast<void*>(reinterpret_cast<std::uintptr_t>(p) / page * page);
  return ::mincore(start, 1, &resident) == 0 || errno != ENOMEM;
}

// A large pool's memory goes back to the system when it is freed, not to malloc's heap,
// where a long-lived serve's replaced deployments fragmented it (buffer/block_memory.h).
TEST(BufferPool, ALargePoolsMemoryGoesBackToTheSystemWhenFreed) {
  // Freeing a large malloc block raises glibc's mmap threshold past it, as a previous
  // deployment's pools did: from then on blocks of that size come from the heap.
  void* earlier = std::malloc(4 << 20);
  ASSERT_NE(earlier, nullptr);
  static_cast<volatile char*>(earlier)[0] = 1;
  std::free(earlier);
  RunSignal signal;
  const std::byte* memory = nullptr;
  {
    BufferPool pool("a.out -> b.in", 64 * 1024, 16, signal);
    memory = pool.memory();
    ASSERT_TRUE(mapped(memory));
  }
  EXPECT_FALSE(mapped(memory)) << "a destroyed 1 MiB pool's memory stayed in this process";
  BufferPool kept("c.out -> d.in", 64 * 1024, 16, signal);
  memory = kept.memory();
  kept.outlive_run();
  ASSERT_TRUE(kept.free_memory_if_all_back());
  EXPECT_FALSE(mapped(memory)) << "a kept pool's freed memory stayed in this process";
}

// A retired pool whose blocks a language binding had bound (the Java bridge's ids) gives the
// bindings back with its slot records once every block is back: an embedded serve with a
// Java filter kept them, and the ids' views, until stop(), ~30-90 KiB per failed unit.
std::atomic<int> bindings_given_back{0};

TEST(BufferPool, ARetiredPoolGivesBackItsBindingsWithItsSlotRecords) {
  BufferPool::set_binding_deleter([](void*) { bindings_given_back.fetch_add(1); });
  RunSignal signal;
  {
    BufferPool pool("b.out -> c.in", 1024, 4, signal);
    std::optional<Buffer> held = pool.try_acquire();
    ASSERT_TRUE(held);
    detail::BufferAccess::slot(*held)->binding.store(reinterpret_cast<void*>(std::uintptr_t{1}));
    pool.outlive_run();
    EXPECT_FALSE(pool.free_memory_if_all_back()) << "a block is still held";
    EXPECT_EQ(bindings_given_back.load(), 0);
    held.reset();
    ASSERT_TRUE(pool.free_memory_if_all_back());
    EXPECT_EQ(bindings_given_back.load(), 1) << "the binding went with the slot records";
    EXPECT_EQ(pool.count(), 0u) << "the slot records went with the memory";
  }
  EXPECT_EQ(bindings_given_back.load(), 1) << "and not a second time when the pool went";
  BufferPool::set_binding_deleter(nullptr);
}

TEST(Buffer, ResizeWithinCapacityAndPastIt) {
  RunSignal signal;
  BufferPool pool("p", 64, 1, signal);
  Buffer b = pool.acquire(nullptr);
  b.resize(64);
  EXPECT_EQ(b.size(), 64u);
  EXPECT_EQ(b.bytes().size(), 64u);
  b.resize(3);
  EXPECT_EQ(b.size(), 3u);
  try {
    b.resize(65);
    FAIL() << "resize past capacity did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the buffer's capacity of 64 bytes"),
              std::string::npos)
        << e.what();
  }
  EXPECT_EQ(b.size(), 3u) << "a failed resize changed the size";
}

// resize() of a moved-from buffer said to raise the stream's buffer_size (its capacity reads
// 0); the mistake is using the buffer after it went (an outside review).
TEST(Buffer, ResizeOfAMovedFromBufferSaysItIsInvalid) {
  RunSignal signal;
  BufferPool pool("p", 64, 1, signal);
  Buffer b = pool.acquire(nullptr);
  Buffer taken = std::move(b);
  try {
    b.resize(10);  // NOLINT(bugprone-use-after-move): the mistake under test
    FAIL() << "resize of a moved-from buffer did not throw";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("Buffer::resize(10) of an invalid (moved-from or reset) buffer"),
              std::string::npos) << e.what();
  }
  b.resize(0);  // nothing asked of it: allowed, as before
}

TEST(Buffer, DefaultConstructedIsInvalid) {
  Buffer b;
  EXPECT_FALSE(b.valid());
  EXPECT_FALSE(static_cast<bool>(b));
  EXPECT_EQ(b.capacity(), 0u);
  EXPECT_FALSE(b.is_shared());
  b.reset();  // harmless
  EXPECT_THROW(b.resize(1), Error);
}

TEST(Buffer, MovedFromIsInvalidAndTheBlockReturnsOnce) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  Buffer a = pool.acquire(nullptr);
  a.resize(5);
  a.set_key(42);
  const std::byte* block = a.data();

  Buffer b(std::move(a));
  EXPECT_FALSE(a.valid());
  EXPECT_EQ(a.data(), nullptr);
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.capacity(), 0u);
  ASSERT_TRUE(b.valid());
  EXPECT_EQ(b.data(), block);
  EXPECT_EQ(b.size(), 5u);
  EXPECT_EQ(b.key(), 42u);

  Buffer c;
  c = std::move(b);
  EXPECT_FALSE(b.valid());
  EXPECT_EQ(c.data(), block);
  EXPECT_EQ(pool.available(), kCount - 1);

  a.reset();
  b.reset();
  EXPECT_EQ(pool.available(), kCount - 1) << "a moved-from buffer released the block";
  c.reset();
  EXPECT_EQ(pool.available(), kCount);
}

TEST(Buffer, MoveAssignmentReleasesTheTargetsOldBlock) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  Buffer a = pool.acquire(nullptr);
  Buffer b = pool.acquire(nullptr);
  const std::byte* kept = a.data();
  EXPECT_EQ(pool.available(), kCount - 2);
  b = std::move(a);
  EXPECT_EQ(pool.available(), kCount - 1);
  EXPECT_EQ(b.data(), kept);
  Buffer& same = b;
  b = std::move(same);  // self-move keeps the block
  EXPECT_TRUE(b.valid());
  EXPECT_EQ(pool.available(), kCount - 1);
}

TEST(Buffer, ResetIsIdempotent) {
  RunSignal signal;
  BufferPool pool("p", 64, kCount, signal);
  Buffer b = pool.acquire(nullptr);
  EXPECT_EQ(pool.available(), kCount - 1);
  b.reset();
  EXPECT_FALSE(b.valid());
  EXPECT_EQ(pool.available(), kCount);
  b.reset();
  EXPECT_EQ(pool.available(), kCount) << "a second reset() released the block again";
}

}  // namespace
}  // namespace sluice
