#include "log/background_writer.h"

#include <unistd.h>

#include <cerrno>
#include <thread>
#include <utility>

namespace sluice::logging {

namespace {

// One write(2) for the line where the descriptor takes it whole (a pipe takes up to PIPE_BUF
// bytes at once); a failed write (ENOSPC: a full disk; EPIPE: the reader went) loses the line,
// as a direct write does. Whether the whole line was written.
bool write_line(int fd, const std::string& line) {
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

BackgroundWriter::BackgroundWriter(int fd, std::size_t max_queued, Note note)
    : fd_(fd), max_queued_(max_queued), note_(std::move(note)), last_progress_(Clock::now()) {
  std::thread([this] { run(); }).detach();
}

void BackgroundWriter::add(std::string_view line) {
  {
    std::unique_lock<std::mutex> lock(mu_);
    // A line longer than max_queued goes alone, once nothing else waits.
    while (queued_bytes_ > 0 && queued_bytes_ + line.size() > max_queued_) {
      // A reader that is taking lines holds the logger back, as a direct write would; one
      // that took nothing for kStuckAfter costs the line instead.
      const auto stuck_at = last_progress_ + kStuckAfter;
      if (Clock::now() >= stuck_at) {
        ++dropped_;
        ++unnoted_;
        return;
      }
      room_.wait_until(lock, stuck_at);
    }
    lines_.push_back(Entry{std::string(line), std::exchange(unnoted_, 0)});
    queued_bytes_ += line.size();
    ++added_count_;
  }
  added_.notify_one();
}

bool BackgroundWriter::flush(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mu_);
  const std::uint64_t target = added_count_;
  return room_.wait_for(lock, timeout, [&] { return done_count_ >= target; });
}

std::uint64_t BackgroundWriter::dropped() const {
  std::lock_guard<std::mutex> lock(mu_);
  return dropped_;
}

void BackgroundWriter::run() {
  std::unique_lock<std::mutex> lock(mu_);
  for (;;) {
    added_.wait(lock, [&] { return !lines_.empty(); });
    std::deque<Entry> batch;
    batch.swap(lines_);
    for (const Entry& entry : batch) {
      lock.unlock();
      const bool noted = entry.dropped_before == 0 || write_line(fd_, note_(entry.dropped_before));
      const bool written = write_line(fd_, entry.line);
      lock.lock();
      // A line the descriptor refused (a full disk) is dropped as one that did not fit is:
      // counted, and said where lines are written again.
      if (!noted) unnoted_ += entry.dropped_before;
      if (!written) {
        ++dropped_;
        ++unnoted_;
      }
      // Counted until written: the bound is on all that waits.
      queued_bytes_ -= entry.line.size();
      ++done_count_;
      last_progress_ = Clock::now();
      room_.notify_all();
    }
    // Lines dropped after the last one queued are said once nothing else waits.
    if (lines_.empty() && unnoted_ > 0) {
      const std::uint64_t unnoted = std::exchange(unnoted_, 0);
      lock.unlock();
      const bool noted = write_line(fd_, note_(unnoted));
      lock.lock();
      if (!noted) unnoted_ += unnoted;  // said with the next line the descriptor takes
    }
  }
}

}  // namespace sluice::logging
