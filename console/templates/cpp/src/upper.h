// What the Upper filter does to each buffer, kept apart from the filter so that a plain
// unit test can check it (test/upper_test.cc).
#ifndef UPPER_H_
#define UPPER_H_

#include <cctype>
#include <cstddef>
#include <span>

inline void to_upper(std::span<std::byte> bytes) {
  for (std::byte& b : bytes) b = std::byte(std::toupper(static_cast<unsigned char>(b)));
}

#endif  // UPPER_H_
