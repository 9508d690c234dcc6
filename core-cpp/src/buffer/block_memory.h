// BlockMemory: the one contiguous region that holds a pool's blocks.
//
// A region of kOwnMappingBytes or more is a mapping of its own (mmap), given back to the
// system the moment it is freed. Through malloc it would not be: glibc raises its mmap
// threshold to the size of the last large block it freed, so the next deployment's pools
// come from the heap, between small allocations that outlive them (a failed unit's kept
// pool bookkeeping, buffer/pool_refuge.h), and a long-lived `sluice serve` that replaces its
// deployment after each failed unit grew by tens of KiB of RSS a unit until the heap's holes
// happened to fit. Smaller regions come from aligned_alloc: a page and a mapping each would
// cost more than the blocks.
//
// Ownership: owns the region; neither copied nor moved. share() makes another owner (a
// language binding's view of the memory, which may outlive the pool: a Java ByteBuffer kept
// past its buffer must read stale bytes, never crash the JVM). The region is given back when
// the last owner lets go; reset() while others hold it gives back its pages (a mapping of its
// own reads as zeros from then on) and leaves the address range to them.
// Thread safety: none (the pool's owner only), but a share may be dropped on any thread.
#ifndef SLUICE_BUFFER_BLOCK_MEMORY_H_
#define SLUICE_BUFFER_BLOCK_MEMORY_H_

#include <cstddef>
#include <memory>

namespace sluice {

class BlockMemory {
 public:
  // At or above this many bytes the region is a mapping of its own.
  static constexpr std::size_t kOwnMappingBytes = 128 * 1024;

  // `bytes` zeroed and committed (every page touched), aligned to `alignment` (at most a
  // page). Null (get() == nullptr) when the system has no memory for it.
  BlockMemory(std::size_t bytes, std::size_t alignment);
  ~BlockMemory() { reset(); }
  BlockMemory(const BlockMemory&) = delete;
  BlockMemory& operator=(const BlockMemory&) = delete;

  std::byte* get() const noexcept { return region_.get(); }
  explicit operator bool() const noexcept { return region_ != nullptr; }
  // Gives the region back (to the system when it is a mapping of its own), or, while a share
  // holds it, its pages (above).
  void reset() noexcept;
  // Another owner of the region (null when there is none): the region stays mapped (or
  // allocated) as long as the share is held.
  std::shared_ptr<const void> share() const noexcept { return region_; }

 private:
  std::shared_ptr<std::byte> region_;
  std::size_t bytes_ = 0;
  bool mapped_ = false;
};

}  // namespace sluice

#endif  // SLUICE_BUFFER_BLOCK_MEMORY_H_
