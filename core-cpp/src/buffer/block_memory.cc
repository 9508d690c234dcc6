#include "buffer/block_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace sluice {

BlockMemory::BlockMemory(std::size_t bytes, std::size_t alignment) : bytes_(bytes) {
  if (bytes >= kOwnMappingBytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    data_ = static_cast<std::byte*>(p);
    mapped_ = true;
  } else {
    data_ = static_cast<std::byte*>(std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment));
    if (data_ == nullptr) return;
  }
  // Touch every page now: page faults belong to setup, not to the first unit of work, and
  // the memory the pool needs is committed before anything runs.
  std::memset(data_, 0, bytes);
}

void BlockMemory::reset() noexcept {
  if (data_ == nullptr) return;
  if (mapped_) {
    ::munmap(data_, bytes_);
  } else {
    std::free(data_);
  }
  data_ = nullptr;
}

}  // namespace sluice
