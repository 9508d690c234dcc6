#include "buffer/pool_refuge.h"

#include <atomic>
#include <cstring>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/graph.h"
#include "sync/run_signal.h"
#include "topology/topology.h"

namespace sluice {
namespace {

constexpr std::size_t kBlock = 256 * 1024;  // above malloc's mmap threshold: a freed pool is unmapped

TEST(PoolRefuge, KeepsAPoolsMemoryWhileABufferIsHeldAndFreesItOnceItIsBack) {
  PoolRefuge refuge;
  std::optional<Buffer> held;
  {
    // The run and its signal end before the buffer is released, as when an Application's
    // deployment is replaced after a failed unit while its client still holds a result.
    auto signal = std::make_unique<RunSignal>();
    auto pool = std::make_unique<BufferPool>("s.out -> client", kBlock, 3, *signal);
    held = pool->try_acquire();
    ASSERT_TRUE(held);
    std::memset(held->data(), 0x5a, kBlock);
    refuge.adopt(std::move(pool));
    signal.reset();
  }
  EXPECT_EQ(refuge.pools(), 1u);
  EXPECT_EQ(refuge.memory_bytes(), 3 * kBlock);
  refuge.sweep();
  EXPECT_EQ(refuge.memory_bytes(), 3 * kBlock) << "a block is still held";
  const auto* bytes = reinterpret_cast<const unsigned char*>(held->data());
  for (std::size_t i = 0; i < kBlock; i += 4096) ASSERT_EQ(bytes[i], 0x5a) << "at " << i;
  // Released from another thread, as a client's reader would.
  std::thread([&] { held.reset(); }).join();
  refuge.sweep();
  EXPECT_EQ(refuge.memory_bytes(), 0u);
  EXPECT_EQ(refuge.pools(), 1u) << "the rings stay until the refuge goes";
}

// What a retired pool keeps once every block is back is its rings alone: its slot records
// (64 B a block) go with the blocks, or a long-lived serve kept ~100 KiB per failed unit
// across hosts (1024-block landing pools at 256 B).
TEST(PoolRefuge, ARetiredPoolsSlotRecordsGoOnceEveryBlockIsBack) {
  PoolRefuge refuge;
  std::optional<Buffer> held;
  BufferPool* retired = nullptr;
  {
    RunSignal signal;
    auto pool = std::make_unique<BufferPool>("s.out -> client", 256, 1024, signal);
    held = pool->try_acquire();
    ASSERT_TRUE(held);
    retired = pool.get();
    refuge.adopt(std::move(pool));
  }
  EXPECT_EQ(retired->count(), 1024u) << "a block is still held: its record too";
  held.reset();
  refuge.sweep();
  EXPECT_EQ(refuge.memory_bytes(), 0u);
  EXPECT_EQ(retired->count(), 0u) << "the slot records outlived their blocks";
}

// The data plane arms a callback on a dry pool (call_when_released) to learn when a block
// comes back; it goes with the plane. A pool kept after its graph must not call it when the
// client later releases what it held.
TEST(PoolRefuge, AnArmedReleaseCallbackIsDisarmedWhenThePoolIsAdopted) {
  struct Counting final : Waiter::Callback {
    void run() noexcept override { ++runs; }
    std::atomic<int> runs{0};
  };
  Counting callback;
  PoolRefuge refuge;
  std::optional<Buffer> held;
  {
    RunSignal signal;
    auto pool = std::make_unique<BufferPool>("s.out -> client", 64, 1, signal);
    held = pool->try_acquire();
    ASSERT_TRUE(held);
    pool->call_when_released(&callback);
    refuge.adopt(std::move(pool));
  }
  std::thread([&] { held.reset(); }).join();
  EXPECT_EQ(callback.runs.load(), 0) << "the release ran the callback of a data plane that is gone";
  refuge.sweep();
  EXPECT_EQ(refuge.memory_bytes(), 0u);
}

TEST(PoolRefuge, APoolWithEveryBlockBackIsFreedWhenAdopted) {
  PoolRefuge refuge;
  RunSignal signal;
  refuge.adopt(std::make_unique<BufferPool>("s.out -> client", kBlock, 2, signal));
  EXPECT_EQ(refuge.memory_bytes(), 0u);
  refuge.adopt(nullptr);  // a stream without a pool of its own here
  EXPECT_EQ(refuge.pools(), 1u);
}

TEST(PoolRefuge, AGraphHandsOverEveryPoolIncludingProducerShares) {
  const topo::Topology t = topo::parse_topology_text(
      "filters:\n"
      "  src:  {class: \"t::Source\", copies: 2}\n"
      "  sink: {class: \"t::Sink\"}\n"
      "streams:\n"
      "  - {from: src.out, to: sink.in, depth: 4, buffer_size: 4KiB}\n",
      "refuge.yaml", ".");
  PoolRefuge refuge;
  std::optional<Buffer> held;
  {
    RunSignal signal;
    Graph graph(t, signal, Placement::everything(t), nullptr);
    StreamRuntime& stream = *graph.streams()[0];
    held = stream.pool_of(1).try_acquire();
    ASSERT_TRUE(held);
    graph.hand_pools_to(&refuge);
  }
  EXPECT_GE(refuge.pools(), 2u) << "the stream's pool and its producers' shares";
  EXPECT_GT(refuge.memory_bytes(), 0u) << "the held block's pool keeps its memory";
  held.reset();
  refuge.sweep();
  EXPECT_EQ(refuge.memory_bytes(), 0u);
}

}  // namespace
}  // namespace sluice
