#include "stream/input_channel.h"

namespace sluice {

InputChannel::InputChannel(std::size_t depth, int upstream_copies, RunSignal& signal,
                           Waiter& room)
    : upstream_copies_(upstream_copies),
      ring_(depth),
      not_empty_(signal),
      room_(room) {}

InputChannel::~InputChannel() {
  // Give back buffers nobody read (after an aborted run).
  Item item;
  while (ring_.try_pop(item)) {
    if (!item.is_end_of_work()) detail::release_slot(item.slot);
  }
}

bool InputChannel::try_push(const Item& item) noexcept {
  // The ring's capacity is the bound (depth rounded up to a power of two). Checking it
  // through the ring's cells, not its head index, keeps the consumer's index out of the
  // producer's cache on every push.
  if (!ring_.try_push(item)) return false;
  not_empty_.notify();
  return true;
}

std::size_t InputChannel::free_room() const noexcept {
  std::size_t used = ring_.size_approx();
  return used >= ring_.capacity() ? 0 : ring_.capacity() - used;
}

std::optional<Buffer> InputChannel::pop(std::uint64_t* blocked_ns) {
  not_empty_.throw_if_aborted();
  while (marks_seen_ < upstream_copies_) {
    Item item;
    if (!ring_.try_pop(item)) {
      *blocked_ns += not_empty_.wait([&] { return ring_.try_pop(item); });
    }
    if (observer_ != nullptr) observer_->popped(*this, item);
    room_.notify();
    if (item.is_end_of_work()) {
      ++marks_seen_;
      continue;
    }
    return detail::BufferAccess::wrap(item.slot, item.size, item.key);
  }
  return std::nullopt;
}

std::uint64_t InputChannel::drain() {
  std::uint64_t discarded = 0;
  std::uint64_t ignored = 0;
  while (auto buffer = pop(&ignored)) ++discarded;
  return discarded;
}

}  // namespace sluice
