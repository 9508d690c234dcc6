// BackgroundWriter: log lines on their way to a file descriptor (a daemon's stderr), written
// by a thread of its own, so that a log reader that stops reading (a `| less` left paused, a
// stuck collector) never stops the thread that logged: sluiced keeps serving its consoles.
//
// Bounded: up to `max_queued` bytes of lines wait (a longer line waits alone). Past that, while the descriptor takes
// lines, add() waits for room (a flood is slowed to the log's pace, and every line is kept, as
// with direct writes); once it has taken nothing for kStuckAfter, a line that does not fit is
// dropped and counted at once, and once the descriptor takes lines again, `note(n)` is written where they were (with n the
// lines dropped there). A line the descriptor refuses (a full disk: ENOSPC) is dropped and
// counted the same way, and said in the note before the next line it takes. Lines are written one write(2) each, in the order they were
// added, so they do not interleave with the lines of other processes writing to the same
// descriptor (a daemon and its children share one log; on a pipe, lines up to PIPE_BUF).
//
// The writer thread and the object live until the process ends (never destroyed: a thread
// stuck in write(2) cannot be joined); a fork()ed child has no such thread, and must not add.
//
// Thread safety: every method may be called from any thread.
#ifndef SLUICE_LOG_BACKGROUND_WRITER_H_
#define SLUICE_LOG_BACKGROUND_WRITER_H_

#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <string_view>

namespace sluice::logging {

class BackgroundWriter {
 public:
  using Clock = std::chrono::steady_clock;
  // How long the descriptor may take nothing before lines that do not fit are dropped.
  // A write into a full pipe ends only once its reader freed a page (4 KiB): a reader that
  // takes 4 KiB a second still counts as moving.
  static constexpr auto kStuckAfter = std::chrono::seconds(1);

  // The line (with its newline) that says `dropped` lines were not written.
  using Note = std::function<std::string(std::uint64_t dropped)>;

  // Starts the writer thread (detached). Throws std::system_error when there is no thread.
  BackgroundWriter(int fd, std::size_t max_queued, Note note);
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  // Queues `line` (its newline included); when max_queued bytes wait, waits for room, or
  // drops the line once the descriptor is stuck (kStuckAfter).
  void add(std::string_view line);
  // Waits until every line added so far is written, or `timeout` passed; whether all were.
  bool flush(std::chrono::milliseconds timeout);
  // Lines dropped since the start.
  std::uint64_t dropped() const;

 private:
  struct Entry {
    std::string line;
    std::uint64_t dropped_before = 0;  // lines dropped between the one before and this one
  };

  void run();

  const int fd_;
  const std::size_t max_queued_;
  const Note note_;
  mutable std::mutex mu_;  // guards the rest
  std::condition_variable added_;
  std::condition_variable room_;  // a line was written
  std::deque<Entry> lines_;
  std::size_t queued_bytes_ = 0;
  std::uint64_t dropped_ = 0;      // since the start
  std::uint64_t unnoted_ = 0;      // dropped after the last line queued
  std::uint64_t added_count_ = 0;  // lines queued since the start
  std::uint64_t done_count_ = 0;   // of those, written (or lost to a failed write)
  Clock::time_point last_progress_;  // the last line written (or the start)
};

}  // namespace sluice::logging

#endif  // SLUICE_LOG_BACKGROUND_WRITER_H_
