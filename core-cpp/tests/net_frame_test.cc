// The data-plane frame codec: round trips, and every field the decoder must refuse.
#include <gtest/gtest.h>

#include <random>

#include "net/frame.h"
#include "net_test_util.h"

namespace sluice::net {
namespace {

using test_util::RawHeader;
using test_util::raw_frame;

DataFrameDecoder decoder() {
  // Stream 0: 2 producers, 3 consumers, 1 KiB buffers, credit window 16; stream 1: 1 -> 1, 64 B.
  return DataFrameDecoder({{2, 3, 1024, 16}, {1, 1, 64, 4}});
}

std::string decode_error(const RawHeader& h, void (*tweak)(std::byte*) = nullptr) {
  std::vector<std::byte> raw = raw_frame(h);
  if (tweak != nullptr) tweak(raw.data());
  Frame out;
  std::string error;
  return decoder().decode(raw.data(), &out, &error) ? "" : error;
}

constexpr std::uint8_t kData = 1, kEnd = 2, kCredit = 3, kHello = 4, kAuth = 5, kPing = 6, kBye = 7;

TEST(FrameTest, RoundTripsEveryKindWithItsNamedFields) {
  const std::vector<Frame> frames = {
      DataFrame{1, 0, 0, 0x0102030405060708ULL, 64},
      EndOfWorkFrame{0, 1, 2},
      CreditFrame{0, 2, 16},
      HelloFrame{0xfeedULL, 3},
      AuthFrame{},
      PingFrame{},
      ByeFrame{},
  };
  for (const Frame& f : frames) {
    std::byte raw[kFrameHeaderSize];
    encode_frame(f, raw);
    Frame out;
    std::string error;
    ASSERT_TRUE(decoder().decode(raw, &out, &error)) << frame_kind_name(kind_of(f)) << ": " << error;
    EXPECT_EQ(out.index(), f.index());
    EXPECT_EQ(payload_size(out), payload_size(f));
  }
  Frame out;
  std::string error;
  std::byte raw[kFrameHeaderSize];
  encode_frame(DataFrame{1, 0, 0, 0x0102030405060708ULL, 64}, raw);
  EXPECT_EQ(raw[0], std::byte{0x53});
  EXPECT_EQ(raw[1], std::byte{0x4c});
  EXPECT_EQ(raw[2], std::byte{kWireVersion});
  EXPECT_EQ(raw[3], std::byte{kData});
  EXPECT_EQ(raw[4], std::byte{1});
  EXPECT_EQ(raw[16], std::byte{0x08});
  EXPECT_EQ(raw[23], std::byte{0x01});
  EXPECT_EQ(raw[24], std::byte{64});
  ASSERT_TRUE(decoder().decode(raw, &out, &error));
  const auto& data = std::get<DataFrame>(out);
  EXPECT_EQ(data.stream, 1u);
  EXPECT_EQ(data.key, 0x0102030405060708ULL);
  EXPECT_EQ(data.size, 64u);

  encode_frame(CreditFrame{0, 2, 16}, raw);
  ASSERT_TRUE(decoder().decode(raw, &out, &error));
  EXPECT_EQ(std::get<CreditFrame>(out).credits, 16u);
  EXPECT_EQ(std::get<CreditFrame>(out).consumer, 2u);

  encode_frame(HelloFrame{0xfeedULL, 3}, raw);
  ASSERT_TRUE(decoder().decode(raw, &out, &error));
  EXPECT_EQ(std::get<HelloFrame>(out).fingerprint, 0xfeedULL);
  EXPECT_EQ(std::get<HelloFrame>(out).name_size, 3u);
  EXPECT_EQ(payload_size(out), kNonceSize + 3);
}

TEST(FrameTest, RefusesWhatIsMalformed) {
  auto has = [](const std::string& error, const std::string& what) { return error.find(what) != std::string::npos; };
  EXPECT_TRUE(has(decode_error({kData, 0, 0, 0, 0, 10}, [](std::byte* r) { r[0] = std::byte{'G'}; }), "bad magic"));
  EXPECT_TRUE(has(decode_error({kData, 0, 0, 0, 0, 10}, [](std::byte* r) { r[2] = std::byte{9}; }),
                  "unsupported frame version 9"));
  EXPECT_TRUE(has(decode_error({0, 0, 0, 0, 0, 0}), "unknown frame kind 0"));
  EXPECT_TRUE(has(decode_error({8, 0, 0, 0, 0, 0}), "unknown frame kind 8"));
  EXPECT_TRUE(has(decode_error({kData, 0, 0, 0, 0, 10}, [](std::byte* r) { r[30] = std::byte{1}; }), "reserved"));
  EXPECT_EQ(decode_error({kData, 2, 0, 0, 0, 10}), "DATA for stream 2, but the topology has 2 streams");
  EXPECT_TRUE(has(decode_error({kData, 0, 2, 0, 0, 10}), "producer copy 2"));
  EXPECT_TRUE(has(decode_error({kData, 0, 0, 3, 0, 10}), "consumer copy 3"));
  EXPECT_EQ(decode_error({kData, 0, 0, 0, 0, 1025}), "DATA of 1025 bytes on stream 0 whose buffer_size is 1024 bytes");
  EXPECT_TRUE(has(decode_error({kData, 1, 0, 0, 0, 0xffffffffu}), "buffer_size is 64"));
  EXPECT_TRUE(has(decode_error({kEnd, 0, 0, 0, 0, 5}), "END_OF_WORK with a field it does not use"));
  EXPECT_TRUE(has(decode_error({kEnd, 0, 0, 0, 7, 0}), "END_OF_WORK with a field it does not use"));
  EXPECT_TRUE(has(decode_error({kCredit, 0, 0, 0, 0, 0}), "CREDIT of 0"));
  EXPECT_TRUE(has(decode_error({kCredit, 0, 0, 0, 17, 0}), "CREDIT of 17"));
  EXPECT_TRUE(has(decode_error({kCredit, 0, 1, 0, 4, 0}), "CREDIT with a field it does not use"));
  EXPECT_TRUE(has(decode_error({kHello, 0, 0, 0, 0, 32}), "HELLO with a 32-byte payload"));
  EXPECT_TRUE(has(decode_error({kHello, 0, 0, 0, 0, 32 + 256}), "HELLO with a 288-byte payload"));
  EXPECT_TRUE(has(decode_error({kHello, 1, 0, 0, 0, 40}), "HELLO with a field it does not use"));
  EXPECT_TRUE(has(decode_error({kAuth, 0, 0, 0, 0, 31}), "AUTH with a 31-byte proof"));
  EXPECT_TRUE(has(decode_error({kPing, 0, 0, 0, 1, 0}), "PING with a field it does not use"));
  EXPECT_TRUE(has(decode_error({kBye, 1, 0, 0, 0, 0}), "BYE with a field it does not use"));
}

TEST(FrameTest, AcceptsWhatIsWellFormed) {
  EXPECT_EQ(decode_error({kData, 0, 1, 2, 77, 1024}), "");
  EXPECT_EQ(decode_error({kData, 0, 1, 2, 77, 0}), "");
  EXPECT_EQ(decode_error({kEnd, 1, 0, 0, 0, 0}), "");
  EXPECT_EQ(decode_error({kCredit, 0, 0, 2, 16, 0}), "");
  EXPECT_EQ(decode_error({kHello, 0, 0, 0, 123, 32 + 255}), "");
  EXPECT_EQ(decode_error({kAuth, 0, 0, 0, 0, 32}), "");
  EXPECT_EQ(decode_error({kPing, 0, 0, 0, 0, 0}), "");
  EXPECT_EQ(decode_error({kBye, 0, 0, 0, 0, 0}), "");
}

TEST(FrameTest, RandomHeadersNeverPassWithOutOfRangeFields) {
  std::mt19937_64 rng(7);
  DataFrameDecoder d = decoder();
  int accepted = 0;
  for (int i = 0; i < 200000; ++i) {
    std::byte raw[kFrameHeaderSize];
    for (auto& b : raw) b = std::byte(rng() & 0xff);
    if (i % 2 == 0) {  // get past the magic and version half of the time, with small fields
      raw[0] = std::byte{0x53};
      raw[1] = std::byte{0x4c};
      raw[2] = std::byte{kWireVersion};
      raw[3] = std::byte(1 + rng() % 7);
      std::memset(raw + 4, 0, kFrameHeaderSize - 4);
      for (int at : {4, 8, 12}) raw[at] = std::byte(rng() % 4);
      if (rng() % 2 == 0) raw[16] = std::byte(rng() % 20);
      const std::uint32_t size = static_cast<std::uint32_t>(rng() % 1100);
      raw[24] = std::byte(size & 0xff);
      raw[25] = std::byte(size >> 8);
    }
    Frame f;
    std::string error;
    if (!d.decode(raw, &f, &error)) {
      EXPECT_FALSE(error.empty());
      continue;
    }
    ++accepted;
    if (const auto* data = std::get_if<DataFrame>(&f)) {
      ASSERT_LT(data->stream, 2u);
      ASSERT_LT(data->producer, d.streams()[data->stream].producers);
      ASSERT_LT(data->consumer, d.streams()[data->stream].consumers);
      ASSERT_LE(data->size, d.streams()[data->stream].buffer_size);
    } else if (const auto* credit = std::get_if<CreditFrame>(&f)) {
      ASSERT_LT(credit->stream, 2u);
      ASSERT_GE(credit->credits, 1u);
      ASSERT_LE(credit->credits, d.streams()[credit->stream].window);
    } else if (const auto* hello = std::get_if<HelloFrame>(&f)) {
      ASSERT_GE(hello->name_size, 1u);
      ASSERT_LE(hello->name_size, kMaxHostName);
    }
  }
  EXPECT_GT(accepted, 100);  // the generator does reach well-formed headers
}

}  // namespace
}  // namespace sluice::net
