// Slot: one block of a BufferPool, and BufferAccess, the runtime's way in and out of Buffer.
#ifndef SLUICE_BUFFER_SLOT_H_
#define SLUICE_BUFFER_SLOT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "sluice/buffer.h"

namespace sluice {
class BufferPool;

namespace detail {

// A pool block. `refs` counts the Buffers (and in-flight queue items) that hold it; the
// last release puts it back on its pool's free list. A free slot keeps refs == 1, so that
// taking it writes nothing here and an unshared buffer's whole trip (acquire, write, read,
// release) only ever reads this line: producer and consumer on two cores then share it
// instead of pulling it back and forth twice per buffer. Everything else is fixed at pool
// creation, except `binding`, an opaque non-null token a language binding may set once per
// slot (the Java bridge keeps the block's id there) and which the pool hands back to the binding
// when it is destroyed.
// Cache-line aligned: a slot's line is still written now and then (the count of a
// broadcast block, a binding set once), and a neighbour's writes must not evict it.
struct alignas(64) Slot {
  std::byte* data = nullptr;
  std::uint32_t capacity = 0;
  std::atomic<std::uint32_t> refs{1};  // 1 while free, too (above)
  BufferPool* pool = nullptr;
  std::atomic<void*> binding{nullptr};
};
static_assert(sizeof(Slot) == kSlotBytes, "the inline OutputStream::allocate computes indices with kSlotBytes");

// Builds and takes apart Buffers; only the runtime uses this.
class BufferAccess {
 public:
  // Wraps a slot reference the caller owns into a Buffer (which now owns it).
  static Buffer wrap(Slot* slot, std::uint32_t size, std::uint64_t key) noexcept {
    return Buffer(slot, slot->data, slot->capacity, size, key);
  }
  // wrap() for a caller that knows the block's memory and capacity (its pool): the slot
  // itself is not read.
  static Buffer wrap(Slot* slot, std::byte* data, std::uint32_t capacity, std::uint32_t size,
                     std::uint64_t key) noexcept {
    return Buffer(slot, data, capacity, size, key);
  }
  // Takes the slot reference out of the Buffer, leaving it invalid; the caller owns it.
  static Slot* unwrap(Buffer& buffer) noexcept {
    Slot* slot = buffer.slot_;
    buffer.slot_ = nullptr;
    buffer.data_ = nullptr;
    buffer.capacity_ = buffer.size_ = 0;
    return slot;
  }
  static Slot* slot(const Buffer& buffer) noexcept { return buffer.slot_; }
  static std::uint32_t size(const Buffer& buffer) noexcept { return buffer.size_; }
};

}  // namespace detail
}  // namespace sluice

#endif  // SLUICE_BUFFER_SLOT_H_
