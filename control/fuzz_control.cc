// libFuzzer target for the control decoder: arbitrary bytes through FrameDecoder, in two
// chunks split at the first byte's value, with the rules of fuzz_check.h checked (every
// decoded message round-trips; every rejection says why and is final).
// Built and run by scripts/fuzz.sh fuzz_control (see docs/protocol.md).
#include <cstddef>
#include <cstdint>

#include "control/fuzz_check.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::size_t split = size == 0 ? 0 : data[0] % (size + 1);
  (void)sluice::control::decode_checked(data, size, split, 1 << 16);
  return 0;
}
