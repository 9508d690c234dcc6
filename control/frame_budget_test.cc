// The shared budget of large frames in arrival (FrameDecoder::share_large_frame_budget): a
// peer with the token made sluiced and sluice serve hold 16 MiB per connection it opened.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "control/codec.h"

namespace sluice::control {
namespace {

// A frame header that declares `length` bytes of body (none of which follow).
std::string header_of(std::uint32_t length) {
  return std::string{static_cast<char>(length >> 24), static_cast<char>(length >> 16), static_cast<char>(length >> 8),
                     static_cast<char>(length)};
}

std::unique_ptr<FrameDecoder> announcing(std::uint32_t length, bool budgeted = true) {
  auto d = std::make_unique<FrameDecoder>();
  if (budgeted) d->share_large_frame_budget();
  const std::string h = header_of(length);
  d->feed(h.data(), h.size());
  return d;
}

TEST(FrameBudget, LargeFramesInArrivalShareOneBudgetAndTheOneOverItIsBusy) {
  const std::uint32_t big = 16u << 20;  // kMaxFrame
  std::vector<std::unique_ptr<FrameDecoder>> held;
  Envelope out;
  for (std::size_t i = 0; i < kLargeFrameBudget / (big + kHeaderSize); ++i) {
    held.push_back(announcing(big));
    ASSERT_EQ(held.back()->next(&out), FrameDecoder::Status::kNeedMore) << i << ": " << held.back()->error();
  }
  auto over = announcing(big);
  ASSERT_EQ(over->next(&out), FrameDecoder::Status::kError);
  EXPECT_TRUE(over->busy());
  EXPECT_NE(over->error().find("busy: other connections are sending"), std::string::npos) << over->error();
  // Small frames are not counted; a client's decoder (not sharing) is not held back.
  auto small = announcing(1000);
  EXPECT_EQ(small->next(&out), FrameDecoder::Status::kNeedMore);
  auto client = announcing(big, false);
  EXPECT_EQ(client->next(&out), FrameDecoder::Status::kNeedMore);
  // A connection that goes gives its share back.
  held.pop_back();
  auto next = announcing(big);
  EXPECT_EQ(next->next(&out), FrameDecoder::Status::kNeedMore) << next->error();
}

TEST(FrameBudget, AFrameThatArrivesWholeGivesItsShareBack) {
  Envelope message;
  message.mutable_start_unit()->set_payload(std::string(1u << 20, 'p'));
  const std::string body = message.SerializeAsString();
  const std::string frame = header_of(static_cast<std::uint32_t>(body.size())) + body;
  // 400 connections that each took a 1 MiB frame and stay open: past the budget unless each
  // gave its share back when its frame was whole.
  std::vector<std::unique_ptr<FrameDecoder>> open;
  for (int round = 0; round < 400; ++round) {
    open.push_back(std::make_unique<FrameDecoder>());
    FrameDecoder& d = *open.back();
    d.share_large_frame_budget();
    d.feed(frame.data(), frame.size() / 2);
    Envelope out;
    ASSERT_EQ(d.next(&out), FrameDecoder::Status::kNeedMore) << round << ": " << d.error();
    d.feed(frame.data() + frame.size() / 2, frame.size() - frame.size() / 2);
    ASSERT_EQ(d.next(&out), FrameDecoder::Status::kMessage) << round << ": " << d.error();
    EXPECT_EQ(out.start_unit().payload().size(), 1u << 20);
  }
}

}  // namespace
}  // namespace sluice::control
