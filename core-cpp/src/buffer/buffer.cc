// The out-of-line parts of sluice::Buffer.
#include <string>

#include "buffer/buffer_pool.h"
#include "buffer/slot.h"

namespace sluice {

void Buffer::throw_too_big(std::size_t n) const {
  if (slot_ == nullptr) {
    // Capacity 0 because there is no block at all: the buffer was moved (written) or reset.
    throw Error("Buffer::resize(" + std::to_string(n) + ") of an invalid (moved-from or reset) buffer; allocate() a "
                "new one, or resize before write() takes it");
  }
  // The pool is named after its stream ("a.out -> b.in"): the buffer_size to raise.
  const std::string stream = slot_ != nullptr && slot_->pool != nullptr ? slot_->pool->name() : "";
  throw Error("Buffer::resize(" + std::to_string(n) + ") exceeds the buffer's capacity of " +
              std::to_string(capacity_) + " bytes; raise the buffer_size of " +
              (stream.empty() ? std::string("its stream") : "stream " + stream) + " in the topology");
}

namespace detail {

void release_slot(Slot* slot) noexcept {
  // Sole owner (the common case): no other holder can appear, so skip the atomic RMW, and
  // the slot goes home with refs == 1 as it is: nothing written to its line.
  if (slot->refs.load(std::memory_order_acquire) == 1) {
    slot->pool->release(slot);
  } else if (slot->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    slot->refs.store(1, std::memory_order_relaxed);  // the last of several holders
    slot->pool->release(slot);
  }
}

bool slot_is_shared(const Slot* slot) noexcept {
  return slot->refs.load(std::memory_order_acquire) > 1;
}

}  // namespace detail
}  // namespace sluice
