#include "net/frame.h"

#include <cstring>

namespace sluice::net {

namespace {

void put16(std::byte* p, std::uint16_t v) noexcept {
  p[0] = std::byte(v & 0xff);
  p[1] = std::byte(v >> 8);
}
void put32(std::byte* p, std::uint32_t v) noexcept {
  for (int i = 0; i < 4; ++i) p[i] = std::byte((v >> (8 * i)) & 0xff);
}
void put64(std::byte* p, std::uint64_t v) noexcept {
  for (int i = 0; i < 8; ++i) p[i] = std::byte((v >> (8 * i)) & 0xff);
}
std::uint32_t get32(const std::byte* p) noexcept {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint32_t>(p[i]);
  return v;
}
std::uint64_t get64(const std::byte* p) noexcept {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | std::to_integer<std::uint64_t>(p[i]);
  return v;
}

std::string hex(std::uint64_t v) {
  static const char digits[] = "0123456789abcdef";
  std::string s;
  do {
    s.insert(s.begin(), digits[v & 0xf]);
    v >>= 4;
  } while (v != 0);
  return "0x" + s;
}

const char* flag_name(std::uint8_t flags) {
  switch (flags) {
    case kData: return "DATA";
    case kEndOfWork: return "END_OF_WORK";
    case kCredit: return "CREDIT";
    case kHello: return "HELLO";
    case kBye: return "BYE";
    default: return "?";
  }
}

}  // namespace

void encode_header(const FrameHeader& h, std::byte* out) noexcept {
  out[0] = std::byte(kMagic0);
  out[1] = std::byte(kMagic1);
  out[2] = std::byte(kVersion);
  out[3] = std::byte(h.flags);
  put32(out + 4, h.stream);
  put32(out + 8, h.producer);
  put32(out + 12, h.consumer);
  put64(out + 16, h.key);
  put32(out + 24, h.size);
  put32(out + 28, 0);
}

bool FrameDecoder::decode(const std::byte* in, FrameHeader* out, std::string* error) const {
  auto fail = [&](std::string message) {
    *error = std::move(message);
    return false;
  };
  const auto m0 = std::to_integer<std::uint8_t>(in[0]);
  const auto m1 = std::to_integer<std::uint8_t>(in[1]);
  if (m0 != kMagic0 || m1 != kMagic1) {
    return fail("bad magic " + hex(std::uint64_t{m0} << 8 | m1) + " (expected 0x534c): not a sluice data connection");
  }
  const auto version = std::to_integer<std::uint8_t>(in[2]);
  if (version != kVersion) {
    return fail("unsupported frame version " + std::to_string(version) + " (this side speaks " +
                std::to_string(kVersion) + "); run the same sluice version on every host");
  }
  FrameHeader h;
  h.flags = std::to_integer<std::uint8_t>(in[3]);
  h.stream = get32(in + 4);
  h.producer = get32(in + 8);
  h.consumer = get32(in + 12);
  h.key = get64(in + 16);
  h.size = get32(in + 24);
  const std::uint32_t reserved = get32(in + 28);
  if (h.flags != kData && h.flags != kEndOfWork && h.flags != kCredit && h.flags != kHello &&
      h.flags != kBye) {
    return fail("bad flags " + hex(h.flags) +
                " (expected exactly one of DATA=1, END_OF_WORK=2, CREDIT=4, HELLO=8, BYE=16)");
  }
  if (reserved != 0) return fail("reserved header field is " + hex(reserved) + ", expected 0");
  if (h.flags == kHello) {
    if (h.size == 0 || h.size > kMaxHostName) {
      return fail("HELLO with a " + std::to_string(h.size) + "-byte host name (expected 1.." +
                  std::to_string(kMaxHostName) + ")");
    }
    *out = h;
    return true;
  }
  if (h.flags == kBye) {
    if (h.stream != 0 || h.producer != 0 || h.consumer != 0 || h.key != 0 || h.size != 0) {
      return fail("BYE with non-zero fields (expected a bare header)");
    }
    *out = h;
    return true;
  }
  const std::string what = flag_name(h.flags);
  if (h.stream >= streams_.size()) {
    return fail(what + " for stream " + std::to_string(h.stream) + ", but the topology has " +
                std::to_string(streams_.size()) + " streams");
  }
  const StreamLimits& s = streams_[h.stream];
  if (h.flags != kCredit && h.producer >= s.producers) {
    return fail(what + " from producer copy " + std::to_string(h.producer) + " on stream " +
                std::to_string(h.stream) + ", which has " + std::to_string(s.producers) + " producer copies");
  }
  if (h.consumer >= s.consumers) {
    return fail(what + " for consumer copy " + std::to_string(h.consumer) + " on stream " +
                std::to_string(h.stream) + ", which has " + std::to_string(s.consumers) + " consumer copies");
  }
  switch (h.flags) {
    case kData:
      if (h.size > s.buffer_size) {
        return fail("DATA of " + std::to_string(h.size) + " bytes on stream " + std::to_string(h.stream) +
                    " whose buffer_size is " + std::to_string(s.buffer_size) + " bytes");
      }
      break;
    case kEndOfWork:
      if (h.size != 0 || h.key != 0) return fail("END_OF_WORK with a payload or key (expected neither)");
      break;
    case kCredit:
      if (h.size != 0) return fail("CREDIT with a " + std::to_string(h.size) + "-byte payload (expected none)");
      if (h.producer != 0) return fail("CREDIT with producer " + std::to_string(h.producer) + " (expected 0)");
      if (h.key == 0 || h.key > s.depth) {
        return fail("CREDIT of " + std::to_string(h.key) + " on stream " + std::to_string(h.stream) +
                    " (expected 1.." + std::to_string(s.depth) + ")");
      }
      break;
    default:
      break;
  }
  *out = h;
  return true;
}

}  // namespace sluice::net
