// libFuzzer target for the control decoder: arbitrary bytes through FrameDecoder, in two
// chunks split at the first byte's value, until it asks for more or rejects them.
// Build with clang and -DSLUICE_BUILD_FUZZERS=ON; run (see docs/protocol.md):
//   build-fuzz/core-cpp/src/control/fuzz_control -max_total_time=60
#include <cstddef>
#include <cstdint>

#include "control/codec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  sluice::control::FrameDecoder decoder(1 << 16);
  sluice::control::Envelope envelope;
  const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
  decoder.feed(data, split);
  while (decoder.next(&envelope) == sluice::control::FrameDecoder::Status::kMessage) {
    (void)sluice::control::kind(envelope);
  }
  decoder.feed(data + split, size - split);
  while (decoder.next(&envelope) == sluice::control::FrameDecoder::Status::kMessage) {
    (void)sluice::control::encode(envelope);
  }
  return 0;
}
