// Test-only helpers for building raw data-plane frames (shared by the net_*_test.cc files).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "net/frame.h"

namespace sluice::net::test_util {

inline FrameHeader header(std::uint8_t flags, std::uint32_t stream = 0, std::uint32_t producer = 0,
                          std::uint32_t consumer = 0, std::uint64_t key = 0, std::uint32_t size = 0) {
  FrameHeader h;
  h.flags = flags;
  h.stream = stream;
  h.producer = producer;
  h.consumer = consumer;
  h.key = key;
  h.size = size;
  return h;
}

// h encoded, followed by payload's bytes.
inline std::vector<std::byte> frame(const FrameHeader& h, const std::string& payload = "") {
  std::vector<std::byte> out(kHeaderSize + payload.size());
  encode_header(h, out.data());
  std::memcpy(out.data() + kHeaderSize, payload.data(), payload.size());
  return out;
}

}  // namespace sluice::net::test_util
