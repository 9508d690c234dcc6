// The data-plane frame codec: round trips, and every field the decoder must refuse.
#include <gtest/gtest.h>

#include <random>

#include "net/frame.h"
#include "net_test_util.h"

namespace sluice::net {
namespace {

FrameDecoder decoder() {
  // Stream 0: 2 producers, 3 consumers, 1 KiB buffers, depth 16; stream 1: 1 -> 1, 64 B.
  return FrameDecoder({{2, 3, 1024, 16}, {1, 1, 64, 4}});
}

std::string decode_error(const FrameHeader& h, void (*tweak)(std::byte*) = nullptr) {
  std::byte raw[kHeaderSize];
  encode_header(h, raw);
  if (tweak != nullptr) tweak(raw);
  FrameHeader out;
  std::string error;
  return decoder().decode(raw, &out, &error) ? "" : error;
}

using test_util::header;

TEST(FrameTest, RoundTripsEveryFieldLittleEndian) {
  FrameHeader h = header(kData, 1, 0, 0, 0x0102030405060708ULL, 64);
  std::byte raw[kHeaderSize];
  encode_header(h, raw);
  EXPECT_EQ(raw[0], std::byte{0x53});
  EXPECT_EQ(raw[1], std::byte{0x4c});
  EXPECT_EQ(raw[2], std::byte{1});
  EXPECT_EQ(raw[3], std::byte{kData});
  EXPECT_EQ(raw[4], std::byte{1});
  EXPECT_EQ(raw[16], std::byte{0x08});
  EXPECT_EQ(raw[23], std::byte{0x01});
  EXPECT_EQ(raw[24], std::byte{64});
  FrameHeader out;
  std::string error;
  ASSERT_TRUE(decoder().decode(raw, &out, &error)) << error;
  EXPECT_EQ(out.flags, h.flags);
  EXPECT_EQ(out.stream, h.stream);
  EXPECT_EQ(out.key, h.key);
  EXPECT_EQ(out.size, h.size);
}

TEST(FrameTest, RefusesWhatIsMalformed) {
  EXPECT_NE(decode_error(header(kData, 0, 0, 0, 0, 10), [](std::byte* r) { r[0] = std::byte{'G'}; }).find("bad magic"),
            std::string::npos);
  EXPECT_NE(decode_error(header(kData, 0, 0, 0, 0, 10), [](std::byte* r) { r[2] = std::byte{9}; })
                .find("unsupported frame version 9"),
            std::string::npos);
  EXPECT_NE(decode_error(header(kData | kCredit, 0, 0, 0, 0, 0)).find("bad flags 0x5"), std::string::npos);
  EXPECT_NE(decode_error(header(0, 0, 0, 0, 0, 0)).find("bad flags"), std::string::npos);
  EXPECT_NE(decode_error(header(kData, 0, 0, 0, 0, 10), [](std::byte* r) { r[30] = std::byte{1}; }).find("reserved"),
            std::string::npos);
  EXPECT_EQ(decode_error(header(kData, 2, 0, 0, 0, 10)), "DATA for stream 2, but the topology has 2 streams");
  EXPECT_NE(decode_error(header(kData, 0, 2, 0, 0, 10)).find("producer copy 2"), std::string::npos);
  EXPECT_NE(decode_error(header(kData, 0, 0, 3, 0, 10)).find("consumer copy 3"), std::string::npos);
  EXPECT_EQ(decode_error(header(kData, 0, 0, 0, 0, 1025)),
            "DATA of 1025 bytes on stream 0 whose buffer_size is 1024 bytes");
  EXPECT_NE(decode_error(header(kData, 1, 0, 0, 0, 0xffffffffu)).find("buffer_size is 64"), std::string::npos);
  EXPECT_NE(decode_error(header(kEndOfWork, 0, 0, 0, 0, 5)).find("END_OF_WORK with a payload"), std::string::npos);
  EXPECT_NE(decode_error(header(kCredit, 0, 0, 0, 0, 0)).find("CREDIT of 0"), std::string::npos);
  EXPECT_NE(decode_error(header(kCredit, 0, 0, 0, 17, 0)).find("CREDIT of 17"), std::string::npos);
  EXPECT_NE(decode_error(header(kHello, 0, 0, 0, 0, 0)).find("HELLO with a 0-byte host name"), std::string::npos);
  EXPECT_NE(decode_error(header(kHello, 0, 0, 0, 0, 256)).find("256-byte host name"), std::string::npos);
  EXPECT_NE(decode_error(header(kBye, 1, 0, 0, 0, 0)).find("BYE with non-zero"), std::string::npos);
}

TEST(FrameTest, AcceptsWhatIsWellFormed) {
  EXPECT_EQ(decode_error(header(kData, 0, 1, 2, 77, 1024)), "");
  EXPECT_EQ(decode_error(header(kData, 0, 1, 2, 77, 0)), "");
  EXPECT_EQ(decode_error(header(kEndOfWork, 1, 0, 0, 0, 0)), "");
  EXPECT_EQ(decode_error(header(kCredit, 0, 0, 2, 16, 0)), "");
  EXPECT_EQ(decode_error(header(kHello, 0, 0, 0, 123, 255)), "");
  EXPECT_EQ(decode_error(header(kBye, 0, 0, 0, 0, 0)), "");
}

TEST(FrameTest, RandomHeadersNeverPassWithOutOfRangeFields) {
  std::mt19937_64 rng(7);
  FrameDecoder d = decoder();
  for (int i = 0; i < 200000; ++i) {
    std::byte raw[kHeaderSize];
    for (auto& b : raw) b = std::byte(rng() & 0xff);
    if (i % 2 == 0) {  // get past the magic and version half of the time
      raw[0] = std::byte{0x53};
      raw[1] = std::byte{0x4c};
      raw[2] = std::byte{1};
      raw[3] = std::byte(1u << (rng() % 5));
    }
    FrameHeader h;
    std::string error;
    if (!d.decode(raw, &h, &error)) {
      EXPECT_FALSE(error.empty());
      continue;
    }
    if (h.flags == kHello || h.flags == kBye) continue;
    ASSERT_LT(h.stream, 2u);
    ASSERT_LT(h.consumer, d.streams()[h.stream].consumers);
    if (h.flags == kData) {
      ASSERT_LE(h.size, d.streams()[h.stream].buffer_size);
    }
  }
}

}  // namespace
}  // namespace sluice::net
