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
  static const DataFrameDecoder decoder({{2, 3, 1024, 16}, {1, 1, 64, 4}, {4, 1, 65536, 32}});
  const auto* bytes = reinterpret_cast<const std::byte*>(data);
  std::size_t pos = 0;
  while (size - pos >= kFrameHeaderSize) {
    Frame f;
    std::string error;
    if (!decoder.decode(bytes + pos, &f, &error)) {
      if (error.empty()) std::abort();  // a refusal must say why
      return 0;
    }
    pos += kFrameHeaderSize;
    auto limits = [&](std::uint32_t stream) -> const StreamLimits& {
      if (stream >= decoder.streams().size()) std::abort();
      return decoder.streams()[stream];
    };
    if (const auto* d = std::get_if<DataFrame>(&f)) {
      const StreamLimits& s = limits(d->stream);
      if (d->producer >= s.producers || d->consumer >= s.consumers || d->size > s.buffer_size) std::abort();
    } else if (const auto* e = std::get_if<EndOfWorkFrame>(&f)) {
      const StreamLimits& s = limits(e->stream);
      if (e->producer >= s.producers || e->consumer >= s.consumers) std::abort();
    } else if (const auto* c = std::get_if<CreditFrame>(&f)) {
      const StreamLimits& s = limits(c->stream);
      if (c->consumer >= s.consumers || c->credits == 0 || c->credits > s.window) std::abort();
    } else if (const auto* h = std::get_if<HelloFrame>(&f)) {
      if (h->name_size == 0 || h->name_size > kMaxHostName) std::abort();
    }
    const std::uint32_t payload = payload_size(f);
    if (payload > size - pos) return 0;  // truncated payload: wait for more (end of input)
    pos += payload;
  }
  return 0;
}
