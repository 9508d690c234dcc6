#include "stream/input_port.h"

namespace sluice {

std::optional<Buffer> InputPort::read_more() {
  // Here when the last run is all read, or the run was aborted with some left.
  if (aborted_->load(std::memory_order_acquire)) {
    release_taken();
    throw Aborted();
  }
  if (const std::size_t n = channel_.take_run(run_.data(), run_size_); n != 0) {
    std::uint64_t bytes = 0;
    for (std::size_t i = 0; i < n; ++i) bytes += run_[i].size;
    counters_.buffers.add(n);
    counters_.bytes.add(bytes);
    taken_ = run_.data() + 1;
    taken_end_ = run_.data() + n;
    const detail::TakenBuffer& first = run_[0];
    return detail::BufferAccess::wrap(first.slot, first.data, first.capacity, first.size, first.key);
  }
  std::uint64_t blocked = 0;
  std::optional<Buffer> buffer = channel_.pop(&blocked, waiting_);
  if (blocked != 0) counters_.blocked_ns.add(blocked);
  if (buffer) {
    counters_.buffers.add(1);
    counters_.bytes.add(buffer->size());
  }
  return buffer;
}

std::uint64_t InputPort::release_taken() noexcept {
  const auto left = static_cast<std::uint64_t>(taken_end_ - taken_);
  for (; taken_ != taken_end_; ++taken_) detail::release_slot(taken_->slot);
  taken_ = taken_end_ = nullptr;
  return left;
}

}  // namespace sluice
