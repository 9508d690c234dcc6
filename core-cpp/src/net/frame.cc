#include "net/frame.h"

#include <boost/endian/conversion.hpp>

namespace sluice::net {

namespace {

// The header's fields as they sit on the wire, whatever the kind.
struct WireHeader {
  std::uint8_t kind = 0;
  std::uint32_t stream = 0;
  std::uint32_t producer = 0;
  std::uint32_t consumer = 0;
  std::uint64_t word = 0;
  std::uint32_t size = 0;
};

// Little-endian on the wire, one load or store a field (Boost.Endian's). Built byte by byte,
// the header's fields were read back whole from those stores, a store-forwarding stall:
// encode_frame was ~3 % of the whole graph's CPU across two daemons.
void put32(std::byte* p, std::uint32_t v) noexcept {
  boost::endian::store_little_u32(reinterpret_cast<unsigned char*>(p), v);
}
void put64(std::byte* p, std::uint64_t v) noexcept {
  boost::endian::store_little_u64(reinterpret_cast<unsigned char*>(p), v);
}
std::uint32_t get32(const std::byte* p) noexcept {
  return boost::endian::load_little_u32(reinterpret_cast<const unsigned char*>(p));
}
std::uint64_t get64(const std::byte* p) noexcept {
  return boost::endian::load_little_u64(reinterpret_cast<const unsigned char*>(p));
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

WireHeader to_wire(const Frame& frame) noexcept {
  WireHeader w;
  w.kind = static_cast<std::uint8_t>(kind_of(frame));
  w.size = payload_size(frame);
  if (const auto* d = std::get_if<DataFrame>(&frame)) {
    w.stream = d->stream;
    w.producer = d->producer;
    w.consumer = d->consumer;
    w.word = d->key;
  } else if (const auto* e = std::get_if<EndOfWorkFrame>(&frame)) {
    w.stream = e->stream;
    w.producer = e->producer;
    w.consumer = e->consumer;
  } else if (const auto* c = std::get_if<CreditFrame>(&frame)) {
    w.stream = c->stream;
    w.consumer = c->consumer;
    w.word = c->credits;
  } else if (const auto* h = std::get_if<HelloFrame>(&frame)) {
    w.word = h->fingerprint;
  }
  return w;
}

}  // namespace

const char* frame_kind_name(FrameKind kind) noexcept {
  switch (kind) {
    case FrameKind::kData: return "DATA";
    case FrameKind::kEndOfWork: return "END_OF_WORK";
    case FrameKind::kCredit: return "CREDIT";
    case FrameKind::kHello: return "HELLO";
    case FrameKind::kAuth: return "AUTH";
    case FrameKind::kPing: return "PING";
    case FrameKind::kBye: return "BYE";
  }
  return "?";
}

FrameKind kind_of(const Frame& frame) noexcept {
  static constexpr FrameKind kinds[] = {FrameKind::kData, FrameKind::kEndOfWork, FrameKind::kCredit,
                                        FrameKind::kHello, FrameKind::kAuth, FrameKind::kPing,
                                        FrameKind::kBye};
  return kinds[frame.index()];
}

std::uint32_t payload_size(const Frame& frame) noexcept {
  if (const auto* d = std::get_if<DataFrame>(&frame)) return d->size;
  if (const auto* h = std::get_if<HelloFrame>(&frame)) return h->payload_size();
  if (std::holds_alternative<AuthFrame>(frame)) return static_cast<std::uint32_t>(kProofSize);
  return 0;
}

void encode_frame(const Frame& frame, std::byte* out) noexcept {
  const WireHeader w = to_wire(frame);
  out[0] = std::byte(kMagic0);
  out[1] = std::byte(kMagic1);
  out[2] = std::byte(kWireVersion);
  out[3] = std::byte(w.kind);
  put32(out + 4, w.stream);
  put32(out + 8, w.producer);
  put32(out + 12, w.consumer);
  put64(out + 16, w.word);
  put32(out + 24, w.size);
  put32(out + 28, 0);
}

bool DataFrameDecoder::decode(const std::byte* in, Frame* out, std::string* error) const {
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
  if (version != kWireVersion) {
    return fail("unsupported frame version " + std::to_string(version) + " (this side speaks " +
                std::to_string(kWireVersion) + "); run the same sluice version on every host");
  }
  WireHeader w;
  w.kind = std::to_integer<std::uint8_t>(in[3]);
  w.stream = get32(in + 4);
  w.producer = get32(in + 8);
  w.consumer = get32(in + 12);
  w.word = get64(in + 16);
  w.size = get32(in + 24);
  const std::uint32_t reserved = get32(in + 28);
  if (w.kind < static_cast<std::uint8_t>(FrameKind::kData) || w.kind > static_cast<std::uint8_t>(FrameKind::kBye)) {
    return fail("unknown frame kind " + std::to_string(w.kind) +
                " (expected DATA=1, END_OF_WORK=2, CREDIT=3, HELLO=4, AUTH=5, PING=6 or BYE=7)");
  }
  if (reserved != 0) return fail("reserved header field is " + hex(reserved) + ", expected 0");
  const auto kind = static_cast<FrameKind>(w.kind);
  // A C string, not a std::string: this runs once a frame, and only a failure needs the text.
  const char* const what = frame_kind_name(kind);
  auto unused_must_be_zero = [&](bool stream, bool producer, bool consumer, bool word, bool size) {
    if ((stream && w.stream != 0) || (producer && w.producer != 0) || (consumer && w.consumer != 0) ||
        (word && w.word != 0) || (size && w.size != 0)) {
      return fail(std::string(what) + " with a field it does not use set (expected zero there)");
    }
    return true;
  };

  switch (kind) {
    case FrameKind::kHello:
      if (!unused_must_be_zero(true, true, true, false, false)) return false;
      if (w.size <= kNonceSize || w.size > kNonceSize + kMaxHostName) {
        return fail("HELLO with a " + std::to_string(w.size) + "-byte payload (expected a " +
                    std::to_string(kNonceSize) + "-byte nonce and a 1.." + std::to_string(kMaxHostName) +
                    "-byte host name)");
      }
      *out = HelloFrame{w.word, static_cast<std::uint32_t>(w.size - kNonceSize)};
      return true;
    case FrameKind::kAuth:
      if (!unused_must_be_zero(true, true, true, true, false)) return false;
      if (w.size != kProofSize) {
        return fail("AUTH with a " + std::to_string(w.size) + "-byte proof (expected " + std::to_string(kProofSize) + ")");
      }
      *out = AuthFrame{};
      return true;
    case FrameKind::kPing:
    case FrameKind::kBye:
      if (!unused_must_be_zero(true, true, true, true, true)) return false;
      if (kind == FrameKind::kPing) {
        *out = PingFrame{};
      } else {
        *out = ByeFrame{};
      }
      return true;
    default:
      break;
  }

  if (w.stream >= streams_.size()) {
    return fail(std::string(what) + " for stream " + std::to_string(w.stream) + ", but the topology has " +
                std::to_string(streams_.size()) + " streams");
  }
  const StreamLimits& s = streams_[w.stream];
  if (kind != FrameKind::kCredit && w.producer >= s.producers) {
    return fail(std::string(what) + " from producer copy " + std::to_string(w.producer) + " on stream " +
                std::to_string(w.stream) + ", which has " + std::to_string(s.producers) + " producer copies");
  }
  if (w.consumer >= s.consumers) {
    return fail(std::string(what) + " for consumer copy " + std::to_string(w.consumer) + " on stream " +
                std::to_string(w.stream) + ", which has " + std::to_string(s.consumers) + " consumer copies");
  }
  switch (kind) {
    case FrameKind::kData:
      if (w.size > s.buffer_size) {
        return fail("DATA of " + std::to_string(w.size) + " bytes on stream " + std::to_string(w.stream) +
                    " whose buffer_size is " + std::to_string(s.buffer_size) + " bytes");
      }
      *out = DataFrame{w.stream, w.producer, w.consumer, w.word, w.size};
      return true;
    case FrameKind::kEndOfWork:
      if (!unused_must_be_zero(false, false, false, true, true)) return false;
      *out = EndOfWorkFrame{w.stream, w.producer, w.consumer};
      return true;
    default:  // kCredit
      if (!unused_must_be_zero(false, true, false, false, true)) return false;
      if (w.word == 0 || w.word > s.window) {
        return fail("CREDIT of " + std::to_string(w.word) + " on stream " + std::to_string(w.stream) +
                    " (expected 1.." + std::to_string(s.window) + ")");
      }
      *out = CreditFrame{w.stream, w.consumer, static_cast<std::uint32_t>(w.word)};
      return true;
  }
}

}  // namespace sluice::net
