#include "stream/output_port.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "buffer/slot.h"
#include "sluice/error.h"
#include "stream/input_channel.h"
#include "testing/test_watchdog.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using topo::Policy;

using testing::outcome_of;
using testing::pop_now;
using testing::Watchdog;

// One stream in one process: a pool, consumer copies' InputChannels as the endpoints, and
// the room Waiter they share with the writers.
class OutputPortTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kBufferSize = 64;

  // n consumer copies; every one of the upstream copies runs here, with a lane in each.
  void add_channels(int n, std::size_t depth = 16, int upstream_copies = 1) {
    for (int i = 0; i < n; ++i) {
      channels_.push_back(std::make_unique<InputChannel>(depth, upstream_copies, signal_, room_, ""));
    }
  }

  std::unique_ptr<OutputPort> port(Policy policy, std::uint32_t producer = 0) {
    std::vector<Endpoint*> endpoints;
    for (auto& c : channels_) endpoints.push_back(c.get());
    auto p = std::make_unique<OutputPort>("out", "a.out -> b.in", policy, pool_,
                                          std::move(endpoints), room_, producer);
    p->open();
    return p;
  }

  Buffer buffer(std::uint64_t key, std::size_t size = 8) {
    Buffer b = pool_.acquire(nullptr);
    b.resize(size);
    b.set_key(key);
    return b;
  }

  // Puts buffers straight into `producer`'s lane of a channel (by default the lane of the
  // port the test makes), as that producer's earlier writes would have.
  void fill(InputChannel& channel, int items, std::uint32_t producer = 0) {
    for (int i = 0; i < items; ++i) {
      Buffer b = buffer(1000 + i);
      Item item{nullptr, 8, producer, b.key()};
      item.slot = detail::BufferAccess::unwrap(b);
      ASSERT_TRUE(channel.try_push(item));
    }
  }

  // The keys a channel holds, in order, up to end of work (which must be there).
  std::vector<std::uint64_t> keys_until_end(InputChannel& channel) {
    std::vector<std::uint64_t> keys;
    while (std::optional<Buffer> b = pop_now(channel)) keys.push_back(b->key());
    return keys;
  }

  // The key of the next buffer in a channel (which must hold one).
  std::uint64_t next_key(InputChannel& channel) {
    std::optional<Buffer> b = pop_now(channel);
    EXPECT_TRUE(b.has_value());
    return b ? b->key() : ~std::uint64_t{0};
  }

  RunSignal signal_;
  Watchdog watchdog_{signal_};
  Waiter room_{signal_};
  BufferPool pool_{"a.out -> b.in", kBufferSize, 64, signal_};
  std::vector<std::unique_ptr<InputChannel>> channels_;
};

using Keys = std::vector<std::uint64_t>;

TEST_F(OutputPortTest, AllocateGivesAnEmptyBufferOfTheStreamsSize) {
  add_channels(1);
  auto out = port(Policy::kRoundRobin);
  Buffer b = out->allocate();
  EXPECT_TRUE(b.valid());
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(b.key(), 0u);
  EXPECT_EQ(b.capacity(), kBufferSize);
  EXPECT_EQ(out->buffer_size(), kBufferSize);
  EXPECT_EQ(out->name(), "out");
  EXPECT_EQ(pool_.available(), pool_.count() - 1);
}

TEST_F(OutputPortTest, RoundRobinCyclesTheConsumerCopiesInOrder) {
  add_channels(3);
  auto out = port(Policy::kRoundRobin, 0);
  for (std::uint64_t k = 0; k < 9; ++k) out->write(buffer(k));
  out->close();
  EXPECT_EQ(keys_until_end(*channels_[0]), (Keys{0, 3, 6}));
  EXPECT_EQ(keys_until_end(*channels_[1]), (Keys{1, 4, 7}));
  EXPECT_EQ(keys_until_end(*channels_[2]), (Keys{2, 5, 8}));
}

TEST_F(OutputPortTest, RoundRobinStartsAtTheProducersIndexModuloCopies) {
  add_channels(3, 16, 5);  // producer copies 0..4; this is copy 4
  auto out = port(Policy::kRoundRobin, 4);  // 4 % 3 == 1
  for (std::uint64_t k = 0; k < 4; ++k) out->write(buffer(k));
  out->close();
  // The other producer copies end the unit without writing.
  for (auto& channel : channels_) {
    for (std::uint32_t p = 0; p < 4; ++p) ASSERT_TRUE(channel->try_push(Item::end_of_work(p)));
  }
  EXPECT_EQ(keys_until_end(*channels_[1]), (Keys{0, 3}));
  EXPECT_EQ(keys_until_end(*channels_[2]), (Keys{1}));
  EXPECT_EQ(keys_until_end(*channels_[0]), (Keys{2}));
}

TEST_F(OutputPortTest, ByKeySendsEqualKeysToOneCopyInOrder) {
  add_channels(4, 64);
  auto out = port(Policy::kByKey);
  const Keys written = {5, 9, 5, 1000, 9, 5, 123456789, 0, 1000, 5};
  // The size carries the write order, so that order per key can be checked too.
  for (std::size_t i = 0; i < written.size(); ++i) out->write(buffer(written[i], i + 1));
  out->close();

  std::map<std::uint64_t, std::size_t> copy_of;
  std::size_t received = 0;
  for (std::size_t c = 0; c < channels_.size(); ++c) {
    std::size_t last_order = 0;
    while (std::optional<Buffer> b = pop_now(*channels_[c])) {
      ++received;
      EXPECT_EQ(OutputPort::key_to_copy(b->key(), 4), c) << "key " << b->key();
      const auto it = copy_of.emplace(b->key(), c).first;
      EXPECT_EQ(it->second, c) << "key " << b->key() << " went to two copies";
      EXPECT_GT(b->size(), last_order) << "reordered in copy " << c;
      last_order = b->size();
    }
  }
  EXPECT_EQ(received, written.size());
  EXPECT_EQ(copy_of.size(), 5u);
}

TEST_F(OutputPortTest, KeyToCopySpreadsNeighbouringKeysEvenly) {
  std::vector<int> per_copy(4, 0);
  for (std::uint64_t key = 0; key < 10000; ++key) ++per_copy[OutputPort::key_to_copy(key, 4)];
  for (int c = 0; c < 4; ++c) {
    EXPECT_GE(per_copy[c], 2000) << "copy " << c;  // 2500 +- 20%
    EXPECT_LE(per_copy[c], 3000) << "copy " << c;
  }
  // Keys with a common stride (ids that step by the number of copies) spread too.
  std::vector<int> strided(4, 0);
  for (std::uint64_t i = 0; i < 10000; ++i) ++strided[OutputPort::key_to_copy(i * 4, 4)];
  for (int c = 0; c < 4; ++c) {
    EXPECT_GE(strided[c], 2000) << "copy " << c;
    EXPECT_LE(strided[c], 3000) << "copy " << c;
  }
  for (std::size_t copies = 1; copies <= 7; ++copies) {
    for (std::uint64_t key : {0ULL, 1ULL, 42ULL, ~0ULL}) {
      EXPECT_LT(OutputPort::key_to_copy(key, copies), copies);
    }
  }
  EXPECT_EQ(OutputPort::key_to_copy(12345, 1), 0u);
}

TEST_F(OutputPortTest, DemandDrivenPicksTheCopyWithTheMostFreeRoom) {
  add_channels(3, 4);
  fill(*channels_[0], 3);  // free room: 1
  fill(*channels_[1], 1);  //            3
  fill(*channels_[2], 2);  //            2
  auto out = port(Policy::kDemandDriven);

  out->write(buffer(1));
  EXPECT_EQ(channels_[1]->free_room(), 2u) << "the roomiest copy should have taken it";
  EXPECT_EQ(channels_[0]->free_room(), 1u);
  EXPECT_EQ(channels_[2]->free_room(), 2u);

  // A tie between copies 1 and 2: the next in turn after the last pick (1) is 2.
  out->write(buffer(2));
  EXPECT_EQ(channels_[2]->free_room(), 1u);
  EXPECT_EQ(channels_[1]->free_room(), 2u);

  out->write(buffer(3));
  EXPECT_EQ(channels_[1]->free_room(), 1u);
  EXPECT_EQ(channels_[0]->free_room(), 1u);
  EXPECT_EQ(channels_[2]->free_room(), 1u);
}

// With two producer copies, a consumer copy whose lane for this producer is full is not
// picked, however idle the copy is otherwise; among the others, the idlest wins.
TEST_F(OutputPortTest, DemandDrivenSkipsACopyWhereThisProducersLaneIsFull) {
  add_channels(3, 2, 2);
  fill(*channels_[0], 2, /*producer=*/0);  // copy 0: this producer's lane full, the other's empty
  fill(*channels_[1], 2, /*producer=*/1);  // copy 1: the other producer's lane full
  auto out = port(Policy::kDemandDriven, 0);
  EXPECT_EQ(channels_[0]->free_room(0), 0u);
  EXPECT_EQ(channels_[1]->free_room(0), 1u);
  EXPECT_EQ(channels_[2]->free_room(0), 2u);
  out->write(buffer(1));
  EXPECT_EQ(channels_[2]->free_room(), 3u) << "the idlest copy with room in this lane took it";
  out->write(buffer(2));  // still the idlest: (2 + 1) / 2 rounded up against copy 1's 1
  EXPECT_EQ(channels_[2]->free_room(), 2u);
  out->write(buffer(3));  // a tie (1 and 1); the turn after copy 2 is copy 0's, full here
  EXPECT_EQ(channels_[1]->free_room(), 1u) << "copy 1, the next in turn with room, took it";
  EXPECT_EQ(channels_[0]->free_room(), 2u) << "copy 0's lane for this producer is full: never picked";
}

TEST_F(OutputPortTest, DemandDrivenWaitsForWhicheverCopyFreesRoomFirst) {
  add_channels(2, 2);
  fill(*channels_[0], 2);
  fill(*channels_[1], 2);
  auto out = port(Policy::kDemandDriven);
  Buffer seven = buffer(7);
  std::atomic<bool> writing{false};
  std::atomic<bool> popped{false};
  bool popped_before_write_returned = false;
  std::thread writer([&] {
    writing.store(true);
    out->write(std::move(seven));
    popped_before_write_returned = popped.load();
  });
  // Pop only once the writer is asleep waiting for room, however late it started.
  while (!writing.load() || room_.may_sleep_flag().load() == 0) std::this_thread::yield();
  popped.store(true);
  EXPECT_EQ(next_key(*channels_[1]), 1000u);
  writer.join();
  EXPECT_TRUE(popped_before_write_returned) << "write() went into a full copy";
  EXPECT_EQ(channels_[0]->free_room(), 0u);
  EXPECT_EQ(channels_[1]->free_room(), 0u);
  EXPECT_EQ(next_key(*channels_[1]), 1001u);
  EXPECT_EQ(next_key(*channels_[1]), 7u);
  EXPECT_GT(out->counters().blocked_ns.get(), 0u);
}

TEST_F(OutputPortTest, BroadcastSendsTheSamePayloadToEveryCopy) {
  add_channels(3);
  auto out = port(Policy::kBroadcast);
  Buffer b = buffer(9, 10);
  std::memcpy(b.data(), "broadcast!", 10);
  const std::byte* payload = b.data();
  out->write(std::move(b));
  EXPECT_FALSE(b.valid());
  EXPECT_EQ(pool_.available(), pool_.count() - 1) << "broadcast must not copy the payload";

  std::vector<Buffer> received;
  for (auto& channel : channels_) {
    std::optional<Buffer> got = pop_now(*channel);
    ASSERT_TRUE(got.has_value());
    received.push_back(std::move(*got));
  }
  const detail::Slot* slot = detail::BufferAccess::slot(received[0]);
  EXPECT_EQ(slot->refs.load(), 3u);
  for (const Buffer& r : received) {
    EXPECT_EQ(detail::BufferAccess::slot(r), slot);
    EXPECT_EQ(r.data(), payload);
    EXPECT_EQ(r.text(), "broadcast!");
    EXPECT_EQ(r.key(), 9u);
    EXPECT_TRUE(r.is_shared());
  }
  received.pop_back();
  received.pop_back();
  EXPECT_EQ(pool_.available(), pool_.count() - 1);
  received.clear();
  EXPECT_EQ(pool_.available(), pool_.count());
  EXPECT_EQ(out->counters().buffers.get(), 1u);
  EXPECT_EQ(out->counters().bytes.get(), 10u);
}

// "Throws sluice::Error whose message holds every one of words".
template <typename F>
::testing::AssertionResult ThrowsErrorSaying(F&& f, const std::vector<std::string>& words) {
  try {
    f();
  } catch (const Aborted& e) {
    return ::testing::AssertionFailure() << "threw Aborted: " << e.what();
  } catch (const Error& e) {
    const std::string message = e.what();
    for (const std::string& w : words) {
      if (message.find(w) == std::string::npos) {
        return ::testing::AssertionFailure() << "[" << w << "] not in: " << message;
      }
    }
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "did not throw";
}

TEST_F(OutputPortTest, WritingAnInvalidBufferThrows) {
  add_channels(2);
  auto out = port(Policy::kRoundRobin);
  EXPECT_TRUE(ThrowsErrorSaying([&] { out->write(Buffer()); },
                                {"invalid", "'out'", "allocate()"}));
  Buffer moved = buffer(1);
  Buffer taker = std::move(moved);
  EXPECT_TRUE(ThrowsErrorSaying([&] { out->write(std::move(moved)); }, {"invalid"}));
  EXPECT_EQ(channels_[0]->free_room(), 16u);
  EXPECT_EQ(channels_[1]->free_room(), 16u);
  EXPECT_EQ(out->counters().buffers.get(), 0u);
}

TEST_F(OutputPortTest, WritingABufferLargerThanTheStreamsBufferSizeThrows) {
  add_channels(1);
  auto out = port(Policy::kRoundRobin);
  BufferPool bigger("c.out -> a.in", 128, 1, signal_);
  Buffer big = bigger.acquire(nullptr);
  big.resize(100);
  EXPECT_TRUE(ThrowsErrorSaying([&] { out->write(std::move(big)); },
                                {"100-byte", "'out'", "a.out -> b.in", "buffer_size is 64",
                                 "raise the stream's buffer_size"}));
  EXPECT_TRUE(big.valid()) << "a refused buffer stays with the caller";
  EXPECT_EQ(channels_[0]->free_room(), 16u);
  big.resize(64);  // exactly buffer_size is fine, whichever pool it came from
  big.set_key(64);
  out->write(std::move(big));
  EXPECT_EQ(channels_[0]->free_room(), 15u);
  EXPECT_EQ(bigger.available(), 0u);
  EXPECT_EQ(next_key(*channels_[0]), 64u);  // read and released: home to its own pool
  EXPECT_EQ(bigger.available(), 1u);
  EXPECT_EQ(pool_.available(), pool_.count());
}

TEST_F(OutputPortTest, WritingOutsideOpenAndCloseThrows) {
  add_channels(1);
  std::vector<Endpoint*> endpoints{channels_[0].get()};
  OutputPort unopened("out", "a.out -> b.in", Policy::kRoundRobin, pool_, endpoints, room_, 0);
  EXPECT_TRUE(ThrowsErrorSaying([&] { unopened.write(buffer(1)); },
                                {"outside init/process", "'out'", "a.out -> b.in"}));

  auto out = port(Policy::kRoundRobin);
  out->write(buffer(2));
  out->close();
  EXPECT_TRUE(ThrowsErrorSaying([&] { out->write(buffer(3)); },
                                {"outside init/process", "end of work was already sent",
                                 "a.out -> b.in"}));
  EXPECT_EQ(keys_until_end(*channels_[0]), (Keys{2}));
  EXPECT_EQ(pool_.available(), pool_.count());
}

TEST_F(OutputPortTest, CloseSendsOneEndOfWorkToEveryCopy) {
  add_channels(3, 4);
  auto out = port(Policy::kRoundRobin);
  out->close();
  for (auto& channel : channels_) EXPECT_EQ(channel->free_room(), 3u);
  out->close();  // already closed: nothing more
  for (auto& channel : channels_) {
    EXPECT_EQ(channel->free_room(), 3u);
    EXPECT_FALSE(pop_now(*channel).has_value());
    EXPECT_TRUE(channel->ended());
    EXPECT_EQ(channel->free_room(), 4u);
  }
}

TEST_F(OutputPortTest, ACopyEndsOnlyWhenEveryProducerHasClosed) {
  add_channels(2, 8, 2);
  auto first = port(Policy::kRoundRobin, 0);
  auto second = port(Policy::kRoundRobin, 1);
  first->write(buffer(10));   // to copy 0
  second->write(buffer(20));  // to copy 1
  first->close();
  EXPECT_EQ(next_key(*channels_[0]), 10u);
  EXPECT_EQ(next_key(*channels_[1]), 20u);
  EXPECT_FALSE(channels_[0]->ended());
  second->write(buffer(21));  // to copy 0
  second->close();
  EXPECT_EQ(next_key(*channels_[0]), 21u);
  EXPECT_FALSE(pop_now(*channels_[0]).has_value());
  EXPECT_FALSE(pop_now(*channels_[1]).has_value());
}

TEST_F(OutputPortTest, CountersCountBuffersAndBytes) {
  add_channels(2);
  auto out = port(Policy::kRoundRobin);
  out->write(buffer(1, 10));
  out->write(buffer(2, 20));
  out->write(buffer(3, 30));
  out->write(buffer(4, 0));
  EXPECT_EQ(out->counters().buffers.get(), 4u);
  EXPECT_EQ(out->counters().bytes.get(), 60u);
  EXPECT_EQ(out->counters().blocked_ns.get(), 0u);
}

TEST_F(OutputPortTest, AbortWhileBlockedOnAFullCopyReturnsTheBuffer) {
  add_channels(1, 2);
  fill(*channels_[0], 2);
  auto out = port(Policy::kRoundRobin);
  std::atomic<int> outcome{0};  // 1: written, 2: Aborted, 3: another exception
  std::thread writer([&] { outcome = outcome_of([&] { out->write(buffer(5)); }); });
  std::this_thread::sleep_for(50ms);
  signal_.abort();
  writer.join();
  EXPECT_EQ(outcome.load(), 2);
  EXPECT_EQ(pool_.available(), pool_.count() - 2) << "the unwritten buffer did not go home";
  EXPECT_EQ(out->counters().buffers.get(), 0u);
}

TEST_F(OutputPortTest, AbortDuringABroadcastReleasesTheUndeliveredReferences) {
  add_channels(2, 2);
  fill(*channels_[1], 2);  // copy 0 takes the broadcast at once; copy 1 blocks it
  auto out = port(Policy::kBroadcast);
  std::atomic<int> outcome{0};
  std::thread writer([&] {
    try {
      out->write(buffer(5));
      outcome = 1;
    } catch (const Aborted&) {
      outcome = 2;
    }
  });
  // Abort only once the write has delivered to copy 0 (and so waits on copy 1): an abort
  // before the write began would make it throw at once, with nothing delivered.
  while (channels_[0]->free_room() != 1) std::this_thread::yield();
  signal_.abort();
  writer.join();
  EXPECT_EQ(outcome.load(), 2);
  EXPECT_EQ(pool_.available(), pool_.count() - 3);  // copy 1's two, and copy 0's reference
  signal_.reset();  // reads throw while the run is aborted; inspect as the next run would
  {
    std::optional<Buffer> delivered = pop_now(*channels_[0]);
    ASSERT_TRUE(delivered.has_value());
    EXPECT_EQ(delivered->key(), 5u);
    EXPECT_FALSE(delivered->is_shared()) << "copy 1's reference was not dropped";
  }
  EXPECT_EQ(pool_.available(), pool_.count() - 2);
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

using namespace std::chrono_literals;
using testing::outcome_of;
using testing::Watchdog;

// A stream whose one producer copy writes into one consumer copy's queue, which only it
// fills: OutputStream::write puts buffers into the queue's cells inline. The inline path
// must keep every promise the out-of-line one keeps.
class OutputPortLaneTest : public OutputPortTest {
 protected:
  void SetUp() override { add_channels(1, 8, 1); }
  std::unique_ptr<OutputPort> open_port() { return port(topo::Policy::kRoundRobin); }
  std::optional<Buffer> pop() {
    std::uint64_t blocked = 0;
    return channels_[0]->pop(&blocked);
  }
  InputChannel& channel() { return *channels_[0]; }
};

TEST_F(OutputPortLaneTest, WritesArriveInOrderAndCountedThenTheEnd) {
  channel().begin_unit();
  auto out = open_port();
  ASSERT_TRUE(out->writes_inline()) << "this machine has membarrier(2): the inline path is what is tested";
  for (std::uint64_t k = 0; k < 8; ++k) out->write(buffer(k, k));
  EXPECT_EQ(channel().free_room(), 0u);
  EXPECT_EQ(out->counters().buffers.get(), 8u);
  EXPECT_EQ(out->counters().bytes.get(), 28u);
  for (std::uint64_t k = 0; k < 8; ++k) {
    std::optional<Buffer> b = pop();
    ASSERT_TRUE(b.has_value());
    EXPECT_EQ(b->key(), k);
    EXPECT_EQ(b->size(), k);
  }
  out->close();
  EXPECT_FALSE(pop().has_value());
  EXPECT_TRUE(channel().ended());
  EXPECT_EQ(pool_.available(), pool_.count());
}

// A merge: two producer copies write into one consumer copy at once. Each has a lane of its
// own, so both write inline, and each one's buffers arrive whole and in its order.
TEST_F(OutputPortLaneTest, TwoProducersMergingIntoOneCopyBothWriteInlineEachInOrder) {
  channels_.clear();
  add_channels(1, 8, 2);
  channel().begin_unit();
  constexpr std::uint64_t kEach = 5000;
  std::unique_ptr<OutputPort> ports[2] = {port(topo::Policy::kRoundRobin, 0), port(topo::Policy::kRoundRobin, 1)};
  for (auto& p : ports) ASSERT_TRUE(p->writes_inline()) << "each producer has a lane of its own";
  std::vector<std::thread> writers;
  std::atomic<int> outcomes[2] = {0, 0};
  for (std::uint64_t p = 0; p < 2; ++p) {
    writers.emplace_back([&, p] {
      outcomes[p] = outcome_of([&] {  // a watchdog abort fails the test, not the binary
        for (std::uint64_t k = 0; k < kEach; ++k) ports[p]->write(buffer((p << 32) | k));
        ports[p]->close();
      });
    });
  }
  std::uint64_t next[2] = {0, 0};
  std::uint64_t out_of_order = 0;
  while (std::optional<Buffer> b = pop()) {
    const std::uint64_t p = b->key() >> 32;
    if (p > 1 || (b->key() & 0xffffffffu) != next[p]) {
      ++out_of_order;
    } else {
      ++next[p];
    }
  }
  for (std::thread& t : writers) t.join();
  EXPECT_EQ(outcomes[0].load(), 1);
  EXPECT_EQ(outcomes[1].load(), 1);
  EXPECT_EQ(out_of_order, 0u);
  EXPECT_EQ(next[0], kEach);
  EXPECT_EQ(next[1], kEach);
  EXPECT_TRUE(channel().ended());
  EXPECT_EQ(ports[0]->counters().buffers.get() + ports[1]->counters().buffers.get(), 2 * kEach);
  EXPECT_EQ(pool_.available(), pool_.count());
}

TEST_F(OutputPortLaneTest, AFullQueueFallsBackToWaitingForRoom) {
  auto out = open_port();
  for (std::uint64_t k = 0; k < 8; ++k) out->write(buffer(k));
  std::atomic<int> outcome{0};
  std::thread writer([&] { outcome = outcome_of([&] { out->write(buffer(8)); }); });
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(outcome.load(), 0) << "wrote into a full queue";
  EXPECT_EQ(pop()->key(), 0u);
  writer.join();
  EXPECT_EQ(outcome.load(), 1);
  for (std::uint64_t k = 1; k <= 8; ++k) EXPECT_EQ(pop()->key(), k);
}

TEST_F(OutputPortLaneTest, BadWritesStillThrowAndLeaveTheBufferWithTheCaller) {
  auto out = open_port();
  EXPECT_TRUE(ThrowsErrorSaying([&] { out->write(Buffer()); }, {"invalid"}));
  BufferPool bigger("c.out -> a.in", 128, 1, signal_);
  Buffer big = bigger.acquire(nullptr);
  big.resize(65);
  EXPECT_TRUE(ThrowsErrorSaying([&] { out->write(std::move(big)); }, {"65-byte", "buffer_size is 64"}));
  EXPECT_TRUE(big.valid());
  out->close();
  Buffer late = buffer(1);
  EXPECT_TRUE(ThrowsErrorSaying([&] { out->write(std::move(late)); }, {"outside init/process"}));
  EXPECT_TRUE(late.valid());
  EXPECT_EQ(out->counters().buffers.get(), 0u);
}

TEST_F(OutputPortLaneTest, AWriteAfterAbortThrowsEvenWithRoom) {
  auto out = open_port();
  Buffer b = buffer(1);
  signal_.abort();
  EXPECT_THROW(out->write(std::move(b)), Aborted);
  EXPECT_EQ(channel().free_room(), 8u);
}

TEST_F(OutputPortLaneTest, EveryInlineWriteWakesTheSleepingConsumer) {
  channel().begin_unit();
  auto out = open_port();
  constexpr int kRounds = 20;
  std::atomic<int> popped{0};
  std::atomic<int> wrong{0};
  std::thread consumer([&] {
    for (int r = 0; r < kRounds; ++r) {
      std::optional<Buffer> b = pop();
      if (!b || b->key() != static_cast<std::uint64_t>(r)) wrong.fetch_add(1);
      popped.store(r + 1);
    }
  });
  const auto start = std::chrono::steady_clock::now();
  for (int r = 0; r < kRounds; ++r) {
    while (popped.load() < r) std::this_thread::yield();
    std::this_thread::sleep_for(1ms);  // long enough for the consumer to go to sleep
    out->write(buffer(static_cast<std::uint64_t>(r)));
  }
  consumer.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "inline writes do not wake the consumer";
}

}  // namespace
}  // namespace sluice

namespace sluice {
namespace {

using namespace std::chrono_literals;

// A stream whose one producer copy is its pool's only acquirer: OutputStream::allocate takes
// free blocks off the pool's ring inline. It must hand out what the pool's own acquire would.
class OutputPortAllocateLaneTest : public ::testing::Test {
 protected:
  std::unique_ptr<OutputPort> open_port(BufferPool& pool) {
    auto p = std::make_unique<OutputPort>("out", "a.out -> b.in", topo::Policy::kRoundRobin, pool,
                                          std::vector<Endpoint*>{channel_.get()}, room_, 0);
    p->open();
    return p;
  }

  RunSignal signal_;
  testing::Watchdog watchdog_{signal_};
  Waiter room_{signal_};
  BufferPool pool_{"a.out -> b.in", 100, 4, signal_, /*single_acquirer=*/true};
  std::unique_ptr<InputChannel> channel_ = std::make_unique<InputChannel>(8, 1, signal_, room_);
};

TEST_F(OutputPortAllocateLaneTest, HandsOutEveryBlockWithItsOwnMemoryThenWaitsForOne) {
  auto out = open_port(pool_);
  ASSERT_TRUE(out->allocates_inline());
  std::vector<Buffer> held;
  std::set<const std::byte*> blocks;
  for (int i = 0; i < 4; ++i) {
    Buffer b = out->allocate();
    ASSERT_TRUE(b.valid());
    EXPECT_EQ(b.size(), 0u);
    EXPECT_EQ(b.key(), 0u);
    EXPECT_EQ(b.capacity(), 100u);
    // The address the inline path computes from the block's position is the block's own.
    EXPECT_EQ(b.data(), detail::BufferAccess::slot(b)->data);
    blocks.insert(b.data());
    held.push_back(std::move(b));
  }
  EXPECT_EQ(blocks.size(), 4u);
  EXPECT_EQ(pool_.available(), 0u);
  const std::byte* released = held.back().data();

  std::atomic<bool> got{false};
  const std::byte* got_block = nullptr;
  std::thread taker([&] {
    Buffer b = out->allocate();  // the pool is empty: waits
    got_block = b.data();
    got.store(true);
  });
  while (!pool_.has_sleeper()) std::this_thread::yield();
  EXPECT_FALSE(got.load());
  held.pop_back();  // releases one block
  taker.join();
  EXPECT_EQ(got_block, released);
  held.clear();
  EXPECT_EQ(pool_.available(), pool_.count());
}

// Blocks come home through a ring per releasing thread (buffer/return_lanes.h), so the
// inline path must follow them from ring to ring: released by more threads than there are
// lanes (some through the shared ring), every block is handed out again, once.
TEST_F(OutputPortAllocateLaneTest, BlocksReleasedByManyThreadsAreAllHandedOutAgain) {
  constexpr int kBlocks = 64;
  constexpr int kThreads = 8;  // more than ReturnLanes::kLanes
  BufferPool pool("a.out -> b.in", 100, kBlocks, signal_, /*single_acquirer=*/true);
  auto out = open_port(pool);
  ASSERT_TRUE(out->allocates_inline());
  for (int round = 0; round < 3; ++round) {
    std::vector<Buffer> held;
    std::set<const std::byte*> blocks;
    for (int i = 0; i < kBlocks; ++i) {
      Buffer b = out->allocate();
      ASSERT_TRUE(b.valid());
      EXPECT_EQ(b.data(), detail::BufferAccess::slot(b)->data) << "round " << round;
      blocks.insert(b.data());
      held.push_back(std::move(b));
    }
    EXPECT_EQ(blocks.size(), std::size_t{kBlocks}) << "a block was handed out twice in round " << round;
    EXPECT_EQ(pool.available(), 0u);
    // Each thread releases its share once all of them live, so none inherits another's lane.
    std::atomic<int> ready{0};
    std::vector<std::thread> releasers;
    for (int t = 0; t < kThreads; ++t) {
      std::vector<Buffer> share;
      for (int i = 0; i < kBlocks / kThreads; ++i) {
        share.push_back(std::move(held.back()));
        held.pop_back();
      }
      releasers.emplace_back([&ready, share = std::move(share)]() mutable {
        ready.fetch_add(1);
        while (ready.load() < kThreads) std::this_thread::yield();
        share.clear();
      });
    }
    for (auto& t : releasers) t.join();
    EXPECT_EQ(pool.available(), std::size_t{kBlocks}) << "round " << round;
  }
}

// try_allocate takes free blocks as allocate does (in turn with it, from the same ring), and
// gives nothing instead of waiting once every block is held; a released block is free again.
TEST_F(OutputPortAllocateLaneTest, TryAllocateGivesNothingInsteadOfWaiting) {
  auto out = open_port(pool_);
  std::vector<Buffer> held;
  std::set<const std::byte*> blocks;
  for (int i = 0; i < 4; ++i) {
    std::optional<Buffer> b = i % 2 == 0 ? out->try_allocate() : std::optional<Buffer>(out->allocate());
    ASSERT_TRUE(b && b->valid()) << i;
    EXPECT_EQ(b->size(), 0u);
    EXPECT_EQ(b->key(), 0u);
    blocks.insert(b->data());
    held.push_back(std::move(*b));
  }
  EXPECT_EQ(blocks.size(), 4u) << "a block was handed out twice";
  EXPECT_FALSE(out->try_allocate().has_value());
  const std::byte* released = held.front().data();
  held.erase(held.begin());
  std::optional<Buffer> again = out->try_allocate();
  ASSERT_TRUE(again.has_value());
  EXPECT_EQ(again->data(), released);
  held.clear();
  again.reset();
  EXPECT_EQ(pool_.available(), pool_.count());
  signal_.abort();
  EXPECT_THROW(out->try_allocate(), Aborted);
  EXPECT_EQ(pool_.available(), pool_.count());
}

TEST_F(OutputPortAllocateLaneTest, AnAllocateAfterAbortThrowsEvenWithFreeBlocks) {
  auto out = open_port(pool_);
  ASSERT_TRUE(out->allocates_inline());
  signal_.abort();
  EXPECT_THROW(out->allocate(), Aborted);
  EXPECT_EQ(pool_.available(), pool_.count()) << "took a block and lost it";
}

TEST_F(OutputPortAllocateLaneTest, APoolWithSeveralAcquirersIsNotTakenFromInline) {
  BufferPool shared("a.out -> b.in", 100, 4, signal_, /*single_acquirer=*/false);
  auto out = open_port(shared);
  EXPECT_FALSE(out->allocates_inline());
  Buffer b = out->allocate();
  EXPECT_TRUE(b.valid());
  EXPECT_EQ(b.data(), detail::BufferAccess::slot(b)->data);
  EXPECT_EQ(shared.available(), 3u);
}

}  // namespace
}  // namespace sluice
