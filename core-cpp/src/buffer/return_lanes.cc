#include "buffer/return_lanes.h"

#include <pthread.h>

#include <bit>
#include <new>

namespace sluice {

static_assert(sizeof(pthread_t) <= sizeof(std::uintptr_t), "a lane's owner may be a pthread_t");

std::uintptr_t ReturnLanes::this_thread_slow() noexcept { return static_cast<std::uintptr_t>(pthread_self()); }

std::size_t ReturnLanes::bytes_at_most(std::size_t count) noexcept {
  return kLanes * std::bit_ceil(count < 2 ? std::size_t{2} : count) * sizeof(detail::FreeCell);
}

ReturnLanes::~ReturnLanes() {
  for (auto& ring : rings_) delete ring.load(std::memory_order_relaxed);
}

ReturnLanes::Ring* ReturnLanes::claim(std::uintptr_t me) noexcept {
  for (std::size_t i = 0; i < kLanes; ++i) {
    std::uintptr_t owner = owners_[i].load(std::memory_order_relaxed);
    if (owner == me) return rings_[i].load(std::memory_order_relaxed);
    if (owner != 0 || !owners_[i].compare_exchange_strong(owner, me, std::memory_order_relaxed)) continue;
    // The lane is this thread's for the pool's life. Without memory for its ring it stays
    // claimed and empty: this thread's releases then go to the shared ring.
    Ring* ring = nullptr;
    try {
      ring = new Ring(capacity_);
    } catch (const std::bad_alloc&) {
    }
    rings_[i].store(ring, std::memory_order_release);  // takers see a whole ring or none
    return ring;
  }
  return nullptr;
}

std::size_t ReturnLanes::size_approx() const noexcept {
  std::size_t n = 0;
  for (std::size_t i = 0; i < kLanes; ++i) {
    if (const Ring* r = ring(i)) n += r->size_approx();
  }
  return n;
}

}  // namespace sluice
