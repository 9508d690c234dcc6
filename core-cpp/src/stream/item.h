// Item: what travels through a stream's queues: a buffer reference, or an end-of-work mark.
#ifndef SLUICE_STREAM_ITEM_H_
#define SLUICE_STREAM_ITEM_H_

#include <cstdint>

#include "buffer/slot.h"

namespace sluice {

struct Item {
  detail::Slot* slot = nullptr;  // owns one reference; nullptr marks end of work
  std::uint32_t size = 0;
  std::uint32_t producer = 0;    // the writing copy's index (for end-of-work accounting)
  std::uint64_t key = 0;

  bool is_end_of_work() const { return slot == nullptr; }
  static Item end_of_work(std::uint32_t producer) { return Item{nullptr, 0, producer, 0}; }
};

}  // namespace sluice

#endif  // SLUICE_STREAM_ITEM_H_
