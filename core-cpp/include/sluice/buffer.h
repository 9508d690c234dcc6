// Buffer: a fixed-capacity block of pooled memory with a used size and a 64-bit key.
//
// Ownership: a Buffer is move-only and owns one reference to its pool slot. Destroying a
// Buffer (or letting it go out of scope) returns the slot to the pool it came from;
// OutputStream::write() moves it on to the next filter. The payload bytes never move: the
// same memory travels from filter to filter inside a process, and between C++ and Java.
//
// Broadcast: when a stream's policy is broadcast, every consumer copy receives its own
// Buffer (own size and key) over the *same* payload. Such a buffer is shared
// (is_shared() is true while other holders remain): treat its bytes as read-only, or
// allocate a new buffer for modified data.
//
// Thread safety: a Buffer is owned by one thread at a time; hand it over by moving it.
// Releasing shared buffers from several threads concurrently is safe.
#ifndef SLUICE_BUFFER_H_
#define SLUICE_BUFFER_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace sluice {

namespace detail {
struct Slot;
class BufferAccess;
void release_slot(Slot* slot) noexcept;
bool slot_is_shared(const Slot* slot) noexcept;
// The size of a pool's per-block record (buffer/slot.h), which pools lay out in an array: the
// inline OutputStream::allocate finds a block's index from its record's address.
inline constexpr std::size_t kSlotBytes = 64;
// A buffer the runtime has taken off a stream's queue for a copy and not handed out yet
// (InputStream::read): the fields of the Buffer it becomes.
struct TakenBuffer {
  Slot* slot;
  std::byte* data;
  std::uint32_t capacity;
  std::uint32_t size;
  std::uint64_t key;
};
}  // namespace detail

class InputStream;
class OutputStream;

class Buffer {
 public:
  // An empty, invalid buffer (capacity 0). Real buffers come from OutputStream::allocate()
  // or InputStream::read().
  Buffer() noexcept = default;
  ~Buffer() { reset(); }

  Buffer(Buffer&& other) noexcept
      : slot_(other.slot_), data_(other.data_), capacity_(other.capacity_),
        size_(other.size_), key_(other.key_) {
    other.slot_ = nullptr;
    other.data_ = nullptr;
    other.capacity_ = other.size_ = 0;
  }
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      reset();
      slot_ = other.slot_;
      data_ = other.data_;
      capacity_ = other.capacity_;
      size_ = other.size_;
      key_ = other.key_;
      other.slot_ = nullptr;
      other.data_ = nullptr;
      other.capacity_ = other.size_ = 0;
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  // True for a buffer that holds a pool slot (not default-constructed, not moved from).
  bool valid() const noexcept { return slot_ != nullptr; }
  explicit operator bool() const noexcept { return valid(); }

  // The used bytes, [data(), data() + size()).
  std::span<std::byte> bytes() noexcept { return {data_, size_}; }
  std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }
  // The used bytes seen as characters, for text payloads.
  std::string_view text() const noexcept {
    return {reinterpret_cast<const char*>(data_), size_};
  }
  // The whole block; capacity() bytes are writable.
  std::byte* data() noexcept { return data_; }
  const std::byte* data() const noexcept { return data_; }

  std::size_t size() const noexcept { return size_; }
  std::size_t capacity() const noexcept { return capacity_; }

  // Sets the used size. REQUIRES: n <= capacity() (and, for n > 0, valid()); throws
  // sluice::Error otherwise.
  // Bytes are not cleared: growing exposes whatever the block held.
  void resize(std::size_t n) {
    if (n > capacity_) throw_too_big(n);
    size_ = static_cast<std::uint32_t>(n);
  }

  // The buffer's label. by_key streams send equal keys to the same consumer copy.
  // Default: 0 for a freshly allocated buffer.
  std::uint64_t key() const noexcept { return key_; }
  void set_key(std::uint64_t key) noexcept { key_ = key; }

  // True while another holder (a broadcast sibling) shares this payload.
  bool is_shared() const noexcept { return slot_ && detail::slot_is_shared(slot_); }

  // Returns the slot to its pool now; the buffer becomes invalid. Idempotent.
  void reset() noexcept {
    if (slot_) {
      detail::release_slot(slot_);
      slot_ = nullptr;
      data_ = nullptr;
      capacity_ = size_ = 0;
    }
  }

 private:
  friend class detail::BufferAccess;
  friend class InputStream;   // its inline read() builds a Buffer from a taken one
  friend class OutputStream;  // its inline write() moves one into a queue, allocate() makes one
  [[noreturn]] void throw_too_big(std::size_t n) const;
  Buffer(detail::Slot* slot, std::byte* data, std::uint32_t capacity, std::uint32_t size,
         std::uint64_t key) noexcept
      : slot_(slot), data_(data), capacity_(capacity), size_(size), key_(key) {}

  detail::Slot* slot_ = nullptr;
  std::byte* data_ = nullptr;
  std::uint32_t capacity_ = 0;
  std::uint32_t size_ = 0;
  std::uint64_t key_ = 0;
};

}  // namespace sluice

#endif  // SLUICE_BUFFER_H_
