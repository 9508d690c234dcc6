// libFuzzer target for the data-plane frame decoder (see scripts/fuzz.sh).
//
// Feeds the input as a connection's byte stream: header, payload, header... as the data
// plane reads it, stopping at the first refused header (the data plane closes the
// connection there). The decoder must never crash, read out of bounds or accept a header
// whose fields are out of range.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "net/frame.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace sluice::net;
  static const FrameDecoder decoder({{2, 3, 1024, 16}, {1, 1, 64, 4}, {4, 1, 65536, 32}});
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  std::size_t pos = 0;
  while (size - pos >= kHeaderSize) {
    FrameHeader h;
    std::string error;
    if (!decoder.decode(bytes + pos, &h, &error)) {
      if (error.empty()) std::abort();  // a refusal must say why
      return 0;
    }
    pos += kHeaderSize;
    if (h.flags != kHello && h.flags != kBye) {
      if (h.stream >= decoder.streams().size()) std::abort();
      const StreamLimits& s = decoder.streams()[h.stream];
      if (h.consumer >= s.consumers) std::abort();
      if (h.flags == kData && h.size > s.buffer_size) std::abort();
      if (h.flags == kCredit && (h.key == 0 || h.key > s.depth)) std::abort();
    } else if (h.flags == kHello && (h.size == 0 || h.size > kMaxHostName)) {
      std::abort();
    }
    if (h.size > size - pos) return 0;  // truncated payload: wait for more (end of input)
    pos += h.size;
  }
  return 0;
}
