#include "buffer/pool_refuge.h"

#include <utility>

namespace sluice {

void PoolRefuge::adopt(std::unique_ptr<BufferPool> pool) {
  if (!pool) return;
  pool->outlive_run();
  pools_.push_back(std::move(pool));
  sweep();
}

void PoolRefuge::sweep() {
  // Pools whose memory is gone gather at the front, so a sweep looks only at the others.
  for (std::size_t i = waiting_; i < pools_.size(); ++i) {
    if (pools_[i]->free_memory_if_all_back()) std::swap(pools_[i], pools_[waiting_++]);
  }
}

std::size_t PoolRefuge::memory_bytes() const {
  std::size_t bytes = 0;
  for (std::size_t i = waiting_; i < pools_.size(); ++i) bytes += pools_[i]->memory_bytes();
  return bytes;
}

}  // namespace sluice
