#include "stream/input_port.h"

namespace sluice {

std::optional<Buffer> InputPort::read_more() {
  // Here when the last run is all read, or the run was aborted with some left.
  end_run();
  if (aborted_->load(std::memory_order_acquire)) throw Aborted();
  // Without read-ahead (run_size_ 1) a buffer is popped, so that its cell is free at once
  // and the writers, which look for the most room, see this copy as busy only while the
  // buffer waits in its queue.
  if (const InputChannel::Run run = run_size_ == 1 ? InputChannel::Run{} : channel_.take_run(copies_.data(), run_size_);
      run.count != 0) {
    run_ = run;
    if (!run.in_place) counters_.in_hand.set(run.count);  // no longer in the queue
    taken_ = run.cells;
    taken_end_ = run.cells + run.count;
    return read();  // the first of the run (or Aborted, as any read would)
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

std::uint64_t InputPort::end_run() noexcept {
  if (run_.count == 0) return 0;
  // read() handed out the run's first `read`; it is never past the end (taken_ <= taken_end_).
  const std::size_t read = static_cast<std::size_t>(taken_ - run_.cells);
  std::uint64_t bytes = 0;
  for (std::size_t i = 0; i < read; ++i) bytes += run_.cells[i].value.size;
  counters_.buffers.add(read);
  counters_.bytes.add(bytes);
  for (std::size_t i = read; i < run_.count; ++i) detail::release_slot(run_.cells[i].value.slot);
  const std::uint64_t left = run_.count - read;
  if (run_.in_place) {
    channel_.end_run();
  } else {
    counters_.in_hand.set(0);
  }
  run_ = {};
  taken_ = taken_end_ = nullptr;
  return left;
}

}  // namespace sluice
