// Sequenced buffers: a header (producer, sequence number, checksum) in front of a payload
// that depends on both, so a consumer can prove nothing was lost, duplicated, reordered
// or corrupted on the way. Used by the Produce/Consume examples, the tests and the
// benchmarks. Buffers smaller than the header carry no header and cannot be checked.
#ifndef SLUICE_EXAMPLES_SEQUENCED_H_
#define SLUICE_EXAMPLES_SEQUENCED_H_

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace sequenced {

struct Header {
  std::uint32_t magic;
  std::uint32_t producer;  // producing copy
  std::uint64_t seq;       // 0, 1, 2... per producer and unit of work
  std::uint64_t checksum;  // of the payload after the header
};
inline constexpr std::uint32_t kMagic = 0x51ce5e9u;

inline std::uint64_t mix(std::uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// A checksum that sees every byte and its position, eight bytes at a time.
inline std::uint64_t checksum(const std::byte* data, std::size_t size) {
  std::uint64_t sum = size;
  std::size_t i = 0;
  for (; i + 8 <= size; i += 8) {
    std::uint64_t word;
    std::memcpy(&word, data + i, 8);
    sum = (sum ^ word) * 0x100000001b3ULL + i;
  }
  for (; i < size; ++i) sum = (sum ^ static_cast<std::uint8_t>(data[i])) * 0x100000001b3ULL + i;
  return mix(sum);
}

// Fills `size` bytes with a pattern of (producer, seq) and writes the header in front.
// Returns false (and writes nothing checkable) when size < sizeof(Header).
inline bool fill(std::byte* data, std::size_t size, std::uint32_t producer, std::uint64_t seq) {
  if (size < sizeof(Header)) {
    if (size > 0) std::memcpy(data, &seq, size < 8 ? size : 8);
    return false;
  }
  std::uint64_t state = mix(seq * 1315423911u + producer);
  std::byte* payload = data + sizeof(Header);
  const std::size_t payload_size = size - sizeof(Header);
  for (std::size_t i = 0; i < payload_size; i += 8) {
    state = mix(state + i);
    std::memcpy(payload + i, &state, payload_size - i < 8 ? payload_size - i : 8);
  }
  Header header{kMagic, producer, seq, checksum(payload, payload_size)};
  std::memcpy(data, &header, sizeof header);
  return true;
}

enum class Verdict { kOk, kTooSmall, kBadMagic, kBadChecksum };

// Reads the header of a filled buffer and checks its payload.
inline Verdict check(const std::byte* data, std::size_t size, Header* header) {
  if (size < sizeof(Header)) return Verdict::kTooSmall;
  std::memcpy(header, data, sizeof *header);
  if (header->magic != kMagic) return Verdict::kBadMagic;
  if (checksum(data + sizeof(Header), size - sizeof(Header)) != header->checksum) {
    return Verdict::kBadChecksum;
  }
  return Verdict::kOk;
}

}  // namespace sequenced

#endif  // SLUICE_EXAMPLES_SEQUENCED_H_
