// ResultsCheck: verifies the results of one unit of the test filters (test_filters/
// app_filters.cc): every buffer's bytes, order per source copy, completeness. For tests.
#ifndef SLUICE_APPLICATION_RESULTS_CHECK_H_
#define SLUICE_APPLICATION_RESULTS_CHECK_H_

#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "sluice/buffer.h"

namespace sluice {

class ResultsCheck {
 public:
  ResultsCheck(std::uint64_t unit, int copies, std::uint64_t count, std::uint64_t size)
      : unit_(unit), copies_(copies), count_(count), size_(size < 40 ? 40 : size) {}

  // Checks one result buffer; the first problem is kept.
  void add(const Buffer& b) { add(reinterpret_cast<const unsigned char*>(b.data()), b.size()); }
  void add(const unsigned char* data, std::size_t size) {
    if (!problem_.empty()) return;
    if (size != size_) return fail("a buffer of " + std::to_string(size) + " bytes, want " + std::to_string(size_));
    std::uint64_t head[5];
    std::memcpy(head, data, sizeof head);
    const std::uint64_t copy = head[2];
    const std::uint64_t seq = head[3];
    if (head[4] != unit_) return fail("a buffer of unit " + std::to_string(head[4]));
    if (copy >= static_cast<std::uint64_t>(copies_)) return fail("a buffer from copy " + std::to_string(copy));
    const int c = static_cast<int>(copy);
    if (seq != next_[c]) {
      return fail("copy " + std::to_string(copy) + ": sequence " + std::to_string(seq) + " after " +
                  std::to_string(next_[c]) + " (lost, duplicated or reordered)");
    }
    ++next_[c];
    ids_[c] = head[0];
    seen_[c] = head[1];
    for (std::uint64_t i = sizeof head; i < size; ++i) {
      const auto want = static_cast<unsigned char>((unit_ * 131 + copy * 31 + seq * 7 + i) & 0xff);
      if (data[i] != want) return fail("copy " + std::to_string(copy) + " sequence " + std::to_string(seq) + ": byte " +
                                       std::to_string(i) + " corrupt");
    }
  }

  // Every buffer so far was right (some may be missing yet: complete()).
  bool intact() const { return problem_.empty(); }

  bool complete() const {
    if (!problem_.empty()) return false;
    for (int c = 0; c < copies_; ++c) {
      auto it = next_.find(c);
      if ((it == next_.end() ? 0 : it->second) != count_) return false;
    }
    return true;
  }
  std::string problem() const {
    if (!problem_.empty()) return problem_;
    std::string out;
    for (int c = 0; c < copies_; ++c) {
      auto it = next_.find(c);
      out += "copy " + std::to_string(c) + ": " + std::to_string(it == next_.end() ? 0 : it->second) + "/" +
             std::to_string(count_) + " ";
    }
    return out;
  }
  const std::map<int, std::uint64_t>& object_ids() const { return ids_; }
  const std::map<int, std::uint64_t>& units_seen() const { return seen_; }

 private:
  void fail(const std::string& why) {
    if (problem_.empty()) problem_ = "unit " + std::to_string(unit_) + ": " + why;
  }
  const std::uint64_t unit_;
  const int copies_;
  const std::uint64_t count_;
  const std::uint64_t size_;
  std::map<int, std::uint64_t> next_;
  std::map<int, std::uint64_t> ids_;
  std::map<int, std::uint64_t> seen_;
  std::string problem_;
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_RESULTS_CHECK_H_
