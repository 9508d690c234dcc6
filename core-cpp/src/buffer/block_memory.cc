#include "buffer/block_memory.h"

#include <sys/mman.h>

#include <cstdlib>
#include <cstring>

namespace sluice {

BlockMemory::BlockMemory(std::size_t bytes, std::size_t alignment) : bytes_(bytes) {
  std::byte* data = nullptr;
  if (bytes >= kOwnMappingBytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return;
    data = static_cast<std::byte*>(p);
    mapped_ = true;
    region_ = std::shared_ptr<std::byte>(data, [bytes](std::byte* d) { ::munmap(d, bytes); });
  } else {
    data = static_cast<std::byte*>(std::aligned_alloc(alignment, (bytes + alignment - 1) / alignment * alignment));
    if (data == nullptr) return;
    region_ = std::shared_ptr<std::byte>(data, [](std::byte* d) { std::free(d); });
  }
  // Touch every page now: page faults belong to setup, not to the first unit of work, and
  // the memory the pool needs is committed before anything runs.
  std::memset(data, 0, bytes);
}

void BlockMemory::reset() noexcept {
  if (region_ == nullptr) return;
  // Shared: the pages go now, the range when the last share does. (A heap region cannot give
  // back its pages alone; it is below kOwnMappingBytes.)
  if (mapped_ && region_.use_count() > 1) ::madvise(region_.get(), bytes_, MADV_DONTNEED);
  region_.reset();
}

}  // namespace sluice
