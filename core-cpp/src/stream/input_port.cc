#include "stream/input_port.h"

namespace sluice {

std::optional<Buffer> InputPort::read_more() {
  // Here when the last run is all read, or the run was aborted with some left.
  owner_.check();
  end_run();
  if (aborted_->load(std::memory_order_acquire)) throw Aborted();
  if (const std::size_t n = channel_.take_run(run_.data(), run_size_); n != 0) {
    run_length_ = n;
    counters_.in_hand.set(n);
    taken_ = run_.data() + 1;
    taken_end_ = run_.data() + n;
    const detail::TakenBuffer& first = run_[0];
    return detail::BufferAccess::wrap(first.slot, first.data, first.capacity, first.size, first.key);
  }
  std::uint64_t blocked = 0;
  std::optional<Buffer> buffer;
  counting_aborted_wait(counters_.blocked_ns, [&] { buffer = channel_.pop(&blocked, waiting_); });
  if (blocked != 0) counters_.blocked_ns.add(blocked);
  if (buffer) {
    counters_.buffers.add(1);
    counters_.bytes.add(buffer->size());
  }
  return buffer;
}

std::uint64_t InputPort::end_run() noexcept {
  if (run_length_ == 0) return 0;
  // read() handed out run_[0, read); it is never past the end (taken_ <= taken_end_).
  const std::size_t read = static_cast<std::size_t>(taken_ - run_.data());
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < read; ++i) bytes += run_[i].size;
  counters_.buffers.add(read);
  counters_.bytes.add(bytes);
  for (std::size_t i = read; i < run_length_; ++i) detail::release_slot(run_[i].slot);
  const std::uint64_t left = run_length_ - read;
  counters_.in_hand.set(0);
  run_length_ = 0;
  taken_ = taken_end_ = nullptr;
  return left;
}

}  // namespace sluice
