// SendQueue: frames come out as the exact bytes a connection writes, in order, and every
// buffer goes home exactly once (copied at once, referenced after the write).
#include "net/send_queue.h"

#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "buffer/buffer_pool.h"
#include "net/frame.h"
#include "sync/run_signal.h"

namespace sluice::net {
namespace {

class SendQueueTest : public ::testing::Test {
 protected:
  static constexpr std::size_t kBlocks = 4;

  // A block from the pool, filled with `size` bytes of `fill`, as the queue's slot reference.
  detail::Slot* block(std::uint32_t size, char fill) {
    std::optional<Buffer> b = pool_.try_acquire();
    EXPECT_TRUE(b.has_value());
    b->resize(size);
    std::memset(b->data(), fill, size);
    return detail::BufferAccess::unwrap(*b);
  }

  static std::array<std::byte, kFrameHeaderSize> header(std::uint32_t stream, std::uint32_t size) {
    std::array<std::byte, kFrameHeaderSize> h;
    encode_frame(DataFrame{stream, 0, 0, 0, size}, h.data());
    return h;
  }

  static std::string bytes_of(const std::array<std::byte, kFrameHeaderSize>& h) {
    return std::string(reinterpret_cast<const char*>(h.data()), h.size());
  }

  // What a gathered write would put on the wire.
  static std::string wire(const SendQueue& q) {
    std::vector<boost::asio::const_buffer> buffers;
    q.gather(&buffers);
    std::string out;
    for (const auto& b : buffers) out.append(static_cast<const char*>(b.data()), b.size());
    return out;
  }

  RunSignal signal_;
  BufferPool pool_{"a.out -> b.in", 4096, kBlocks, signal_};
};

TEST_F(SendQueueTest, SmallPayloadsAreCopiedAndTheirBuffersHandedBackAtOnce) {
  SendQueue q;
  detail::Slot* s = block(100, 'x');
  const auto h = header(1, 100);
  EXPECT_EQ(q.append(h.data(), s->data, 100, s), s);  // copied: the caller releases it
  detail::release_slot(s);
  EXPECT_EQ(pool_.available(), kBlocks);
  EXPECT_EQ(q.frames(), 1u);
  EXPECT_EQ(wire(q), bytes_of(h) + std::string(100, 'x'));
}

TEST_F(SendQueueTest, BigPayloadsAreWrittenFromTheirBufferAndReleasedByClear) {
  SendQueue q;
  const std::uint32_t big = SendQueue::kCopyMax + 1;
  detail::Slot* small = block(10, 'a');
  detail::Slot* large = block(big, 'b');
  const auto h1 = header(1, 10), h2 = header(2, big), h3 = header(3, 0);
  detail::release_slot(q.append(h1.data(), small->data, 10, small));
  EXPECT_EQ(q.append(h2.data(), large->data, big, large), nullptr);  // the queue keeps it
  EXPECT_EQ(q.append(h3.data(), nullptr, 0, nullptr), nullptr);
  EXPECT_EQ(pool_.available(), kBlocks - 1);
  std::vector<boost::asio::const_buffer> buffers;
  q.gather(&buffers);
  ASSERT_EQ(buffers.size(), 3u);  // bytes, the big buffer itself, bytes
  EXPECT_EQ(buffers[1].data(), large->data);
  EXPECT_EQ(wire(q), bytes_of(h1) + std::string(10, 'a') + bytes_of(h2) + std::string(big, 'b') + bytes_of(h3));
  q.clear();
  EXPECT_TRUE(q.empty());
  EXPECT_EQ(pool_.available(), kBlocks);
}

TEST_F(SendQueueTest, APartlyWrittenFrameGoesBeforeEverythingQueuedWithoutItsWrittenPart) {
  const std::uint32_t big = SendQueue::kCopyMax + 100;
  for (const std::uint32_t size : {std::uint32_t{100}, big}) {
    for (const std::size_t done : {std::size_t{0}, std::size_t{7}, kFrameHeaderSize, kFrameHeaderSize + 50}) {
      SCOPED_TRACE("payload " + std::to_string(size) + ", written " + std::to_string(done));
      SendQueue q;
      detail::Slot* later = block(big, 'l');
      const auto hl = header(9, big);
      EXPECT_EQ(q.append(hl.data(), later->data, big, later), nullptr);
      detail::Slot* first = block(size, 'f');
      const auto hf = header(1, size);
      detail::Slot* back = q.prepend_rest(hf.data(), first->data, size, first, done);
      EXPECT_EQ(back, size <= SendQueue::kCopyMax ? first : nullptr);
      if (back != nullptr) detail::release_slot(back);
      const std::string whole = bytes_of(hf) + std::string(size, 'f');
      EXPECT_EQ(wire(q), whole.substr(done) + bytes_of(hl) + std::string(big, 'l'));
      EXPECT_EQ(q.frames(), 2u);
      q.clear();
      EXPECT_EQ(pool_.available(), kBlocks);
    }
  }
}

TEST_F(SendQueueTest, ARestPrependedToAnEmptyQueueIsAllItHolds) {
  const std::uint32_t big = SendQueue::kCopyMax + 100;
  for (const std::uint32_t size : {std::uint32_t{0}, SendQueue::kCopyMax, big}) {
    for (const std::size_t done : {std::size_t{0}, std::size_t{5}, kFrameHeaderSize, kFrameHeaderSize + 1}) {
      if (done >= kFrameHeaderSize + size) continue;  // that frame was written whole
      SCOPED_TRACE("payload " + std::to_string(size) + ", written " + std::to_string(done));
      SendQueue q;
      detail::Slot* s = block(size, 'p');
      const auto h = header(4, size);
      detail::Slot* back = q.prepend_rest(h.data(), s->data, size, s, done);
      EXPECT_EQ(back, size <= SendQueue::kCopyMax ? s : nullptr);
      if (back != nullptr) detail::release_slot(back);
      EXPECT_EQ(wire(q), (bytes_of(h) + std::string(size, 'p')).substr(done));
      q.clear();
      EXPECT_EQ(pool_.available(), kBlocks);
    }
  }
}

TEST_F(SendQueueTest, TwoBigPayloadsAndAnEmptyOneKeepTheirPlaces) {
  SendQueue q;
  const std::uint32_t big = SendQueue::kCopyMax + 1;
  detail::Slot* one = block(big, '1');
  detail::Slot* empty = block(0, 'e');
  detail::Slot* two = block(big, '2');
  const auto h1 = header(1, big), he = header(2, 0), h2 = header(3, big);
  EXPECT_EQ(q.append(h1.data(), one->data, big, one), nullptr);
  detail::release_slot(q.append(he.data(), empty->data, 0, empty));  // copied (nothing to copy)
  EXPECT_EQ(q.append(h2.data(), two->data, big, two), nullptr);
  EXPECT_EQ(wire(q), bytes_of(h1) + std::string(big, '1') + bytes_of(he) + bytes_of(h2) + std::string(big, '2'));
  EXPECT_EQ(q.frames(), 3u);
  q.clear();
  EXPECT_EQ(pool_.available(), kBlocks);
}

TEST_F(SendQueueTest, SwapMovesEverythingAndDestructionReleasesWhatIsLeft) {
  {
    SendQueue a, b;
    detail::Slot* large = block(SendQueue::kCopyMax + 1, 'z');
    const auto h = header(1, SendQueue::kCopyMax + 1);
    a.append(h.data(), large->data, SendQueue::kCopyMax + 1, large);
    a.swap(b);
    EXPECT_TRUE(a.empty());
    EXPECT_EQ(b.frames(), 1u);
    EXPECT_EQ(pool_.available(), kBlocks - 1);
  }
  EXPECT_EQ(pool_.available(), kBlocks);
}

}  // namespace
}  // namespace sluice::net
