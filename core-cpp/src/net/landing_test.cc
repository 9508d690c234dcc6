// Landing: what the I/O thread lands while the consumer pops is never stranded.
#include "net/landing.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <thread>

#include "buffer/buffer_pool.h"
#include "net/routes.h"
#include "runtime/placement.h"
#include "stream/input_channel.h"
#include "sync/run_signal.h"
#include "topology/topology.h"

namespace sluice::net {
namespace {

// Host 'a' runs the producer, host 'b' (this one) the consumer.
class LandingTest : public ::testing::Test {
 protected:
  struct NoLinks final : CreditReturn {
    Connection* link_from(int) const noexcept override { return nullptr; }
  };

  LandingTest()
      : topology_(topo::parse_topology_text("filters:\n"
                                            "  a: {class: A}\n"
                                            "  b: {class: B}\n"
                                            "streams:\n"
                                            "  - {from: a.out, to: b.in, depth: 1}\n",
                                            "t.yaml", "/tmp")),
        routes_(topology_, placements(), "b") {}

  static std::map<std::string, Placement> placements() {
    std::map<std::string, Placement> by_host;
    by_host["a"].local["a"] = {0};
    by_host["b"].local["b"] = {0};
    return by_host;
  }

  topo::Topology topology_;
  Routes routes_;
  NoLinks links_;
  RunSignal signal_;
  Waiter room_{signal_};
};

// The race this guards: the consumer pops from the full landed lane while the I/O thread,
// finding it full, holds a new item back. (The data plane sizes the lane for every credit,
// so it fills only if that is broken; here it is made small on purpose.) Each side must look at the other's
// change after making its own (the consumer at the held count after its pop, the I/O
// thread at the channel after holding), or the item stays held while the consumer sleeps
// on an empty channel, and with the sending hosts out of credit the run hangs. Whatever
// the interleaving, the item must end up in the channel. Leaving out either look fails
// this within a few hundred rounds; the CPU reordering each look's load before its store
// (what Landing's barriers prevent) is too rare to show here, so for that the barriers'
// reasoning stands alone.
TEST_F(LandingTest, AnItemLandedWhileTheConsumerPopsIsNeverLeftHeld) {
  BufferPool pool("a.out -> b.in", 8, 8, signal_);
  InputChannel channel(1, 1, signal_, room_, "a.out -> b.in");
  Landing landing(routes_, links_, 0, 0, channel);
  channel.attach_landing(&landing, 2);
  auto item = [&](std::uint64_t key) {
    Buffer buffer = pool.acquire(nullptr);
    return Item{detail::BufferAccess::unwrap(buffer), 0, 0, key};
  };

  std::uint64_t seed = 88172645463325252ull;
  auto jitter = [&seed] {  // xorshift: 0 .. 255
    seed ^= seed << 13;
    seed ^= seed >> 7;
    seed ^= seed << 17;
    return static_cast<int>(seed & 255);
  };
  auto spin = [](int n) {
    for (volatile int i = 0; i < n; i = i + 1) {
    }
  };
  std::atomic<std::uint64_t> go{0};    // round the threads start
  std::atomic<std::uint64_t> done{0};  // rounds the consumer finished
  std::atomic<bool> stop{false};
  std::thread consumer([&] {
    std::uint64_t ignored = 0;
    for (std::uint64_t round = 1;; ++round) {
      while (go.load(std::memory_order_acquire) < round) {
        if (stop.load(std::memory_order_acquire)) return;
        std::this_thread::yield();  // a machine with more threads than cores: let the other run
      }
      std::optional<Buffer> popped = channel.pop(&ignored);  // the channel is full: no wait
      done.store(round, std::memory_order_release);
    }
  });

  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  std::uint64_t rounds = 0;
  std::uint64_t stranded = 0;
  for (std::uint64_t round = 1; round <= 200'000 && std::chrono::steady_clock::now() < deadline; ++round) {
    // Full: the next land must hold back.
    for (std::size_t i = 0; channel.landed_room() != 0; ++i) {
      ASSERT_LT(i, 2u);
      landing.land(item(round));
    }
    ASSERT_EQ(landing.held(), 0u);
    const Item next = item(round + 1'000'000);
    go.store(round, std::memory_order_release);
    // Vary which thread gets ahead, and by how much, so that some round hits the few
    // nanoseconds in which each could miss the other's change.
    spin(jitter());
    landing.land(next);
    while (done.load(std::memory_order_acquire) < round) std::this_thread::yield();
    // The consumer popped one item and nothing more: the landed one is in the lane (full
    // again), or it was stranded in the landing.
    if (channel.landed_room() != 0 || landing.held() != 0) {
      ++stranded;  // and nothing would ever pop it: stop here
      break;
    }
    std::uint64_t ignored = 0;
    std::optional<Buffer> last;
    for (std::size_t i = 0; i < 2; ++i) last = channel.pop(&ignored);
    ASSERT_TRUE(last.has_value());
    EXPECT_EQ(last->key(), round + 1'000'000);
    ++rounds;
  }
  stop.store(true, std::memory_order_release);
  consumer.join();
  landing.release_held();
  EXPECT_EQ(stranded, 0u) << "in " << rounds << " rounds, an item landed while the consumer popped stayed held "
                          << stranded << " times";
  EXPECT_GT(rounds, 1000u);
}

}  // namespace
}  // namespace sluice::net
