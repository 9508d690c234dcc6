#include "buffer/buffer_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <thread>
#include <type_traits>

namespace sluice {

namespace {
// Blocks start on cache-line boundaries so that neighbouring buffers written by
// different threads never share a line.
constexpr std::size_t kAlignment = 64;

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }
}  // namespace

BufferPool::BufferPool(std::string name, std::size_t buffer_size, std::size_t count,
                       RunSignal& signal, bool single_acquirer)
    : name_(std::move(name)),
      buffer_size_(buffer_size),
      stride_(round_up(buffer_size, kAlignment)),
      single_acquirer_(single_acquirer),
      memory_(stride_ * count, kAlignment),
      slots_(count),
      free_(count),
      returns_(count),
      not_empty_(signal) {
  if (!memory_) {
    throw Error("cannot allocate " + std::to_string(stride_ * count) + " bytes for the pool of " +
                name_ + "; lower its buffer_size or depth");
  }
  for (std::size_t i = 0; i < count; ++i) {
    detail::Slot& slot = slots_[i];
    slot.data = memory_.get() + i * stride_;
    slot.capacity = static_cast<std::uint32_t>(buffer_size);
    slot.pool = this;
    slot.refs.store(1, std::memory_order_relaxed);  // free (slot.h)
    free_.try_push(&slot);
  }
  allocate_lane_.slots = reinterpret_cast<const std::byte*>(slots_.data());
  allocate_lane_.memory = memory_.get();
  allocate_lane_.stride = stride_;
  allocate_lane_.capacity = static_cast<std::uint32_t>(buffer_size_);
  take_next_from(free_);
}

namespace {
std::atomic<BufferPool::BindingDeleter> binding_deleter{nullptr};
}  // namespace

void BufferPool::set_binding_deleter(BindingDeleter deleter) noexcept {
  binding_deleter.store(deleter, std::memory_order_release);
}

BufferPool::~BufferPool() {
  BindingDeleter deleter = binding_deleter.load(std::memory_order_acquire);
  if (deleter == nullptr) return;
  for (detail::Slot& slot : slots_) {
    if (void* binding = slot.binding.load(std::memory_order_acquire)) deleter(binding);
  }
}

bool BufferPool::free_memory_if_all_back() noexcept {
  if (!memory_) return true;
  // Nobody takes blocks any more, so the count only grows.
  if (available() < slots_.size()) return false;
  // Take every block out of the rings: a take acquires what its releaser published, so each
  // holder's last use of the memory happens before the free below. All there: free it.
  std::vector<detail::Slot*> taken;
  taken.reserve(slots_.size());
  for (detail::Slot* slot = nullptr; taken.size() < slots_.size() && take_from_any(slot);) taken.push_back(slot);
  if (taken.size() < slots_.size()) {
    for (detail::Slot* slot : taken) {
      if (!free_.try_push(slot)) push_when_room(slot);
    }
    return false;
  }
  for (detail::Slot& slot : slots_) slot.data = nullptr;
  allocate_lane_.memory = nullptr;
  memory_.reset();
  // The slot records go too (at 256 B, two thirds of what a retired pool kept: a long-lived
  // serve kept ~100 KiB per failed unit across hosts), and with them what a language binding
  // hung on a block (the Java bridge's ids, whose views it then lets go of as the ids are
  // reused): every block is back, so no Java object reaches a block through its record any
  // more, and an embedded serve with a Java filter kept ~30-90 KiB per failed unit until
  // stop() otherwise. A releaser leaves its slot alone once it has pushed it back, and the
  // takes above saw every push; the rings and the waiter stay, as a releaser still touches
  // them after its push.
  if (const BindingDeleter deleter = binding_deleter.load(std::memory_order_acquire)) {
    for (detail::Slot& slot : slots_) {
      if (void* binding = slot.binding.exchange(nullptr, std::memory_order_acq_rel)) deleter(binding);
    }
  }
  std::vector<detail::Slot>().swap(slots_);
  allocate_lane_.slots = nullptr;
  return true;
}

Buffer BufferPool::acquire(std::uint64_t* blocked_ns) {
  not_empty_.throw_if_aborted();
  detail::Slot* slot = nullptr;
  std::uint64_t slept = not_empty_.wait([&] { return take(slot); });
  if (blocked_ns != nullptr) *blocked_ns += slept;
  return fresh(slot);
}

// The lane's positions are the ring's (std::size_t) seen as the public header's uint64_t.
static_assert(std::is_same_v<std::size_t, std::uint64_t>, "AllocateLane and FreeCell assume LP64");

void BufferPool::take_next_from(Ring& ring) noexcept {
  current_ = &ring;
  allocate_lane_.cells = ring.cells();
  allocate_lane_.mask = ring.capacity() - 1;
  allocate_lane_.head = &ring.head();
}

bool BufferPool::take_from_another(detail::Slot*& slot) noexcept {
  // Each ring once, the one just found empty last.
  if (current_ != &free_ && free_.try_pop_single(slot)) {
    take_next_from(free_);
    return true;
  }
  for (std::size_t i = 0; i < ReturnLanes::kLanes; ++i) {
    Ring* ring = returns_.ring(i);
    if (ring != nullptr && ring != current_ && ring->try_pop_single(slot)) {
      take_next_from(*ring);
      return true;
    }
  }
  return current_->try_pop_single(slot);
}

void BufferPool::push_when_room(detail::Slot* slot) noexcept {
  while (!free_.try_push(slot)) std::this_thread::yield();
}

bool BufferPool::take_from_any(detail::Slot*& slot) noexcept {
  if (free_.try_pop(slot)) return true;
  for (std::size_t i = 0; i < ReturnLanes::kLanes; ++i) {
    Ring* ring = returns_.ring(i);
    if (ring != nullptr && ring->try_pop(slot)) return true;
  }
  return false;
}

}  // namespace sluice
