// StdoutForwarder: what an app daemon's filters write to stdout, on its way to the console's
// stdout, as an embedded run prints it there (mpirun and srun forward their ranks' stdout
// the same way). Made before any thread or JVM: it points fd 1 at a pipe (line-buffered, as
// on a terminal) and a thread of its own reads that pipe into a batch, which the app daemon's
// control loop sends up with the filter log lines (FilterLog.output; sluiced relays it).
//
// Nothing is dropped: past kMaxPending bytes not yet sent, the thread stops reading, the
// pipe fills and the filters' writes wait (backpressure, as a slow terminal would give).
// stderr is left alone: it is sluiced's log.
//
// Thread safety: take() and drain() from any thread; one mutex guards the batch and the reads
// of the pipe, so bytes leave in the order they were written.
#ifndef SLUICE_DAEMONS_STDOUT_FORWARDER_H_
#define SLUICE_DAEMONS_STDOUT_FORWARDER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <mutex>
#include <string>
#include <thread>

namespace sluice::daemon {

class StdoutForwarder {
 public:
  static constexpr std::size_t kMaxPending = std::size_t{1} << 20;

  // Points fd 1 at the pipe and starts the reader. Throws sluice::Error when there is no
  // pipe or thread to be had.
  StdoutForwarder();
  ~StdoutForwarder();
  StdoutForwarder(const StdoutForwarder&) = delete;
  StdoutForwarder& operator=(const StdoutForwarder&) = delete;

  // Reads what the pipe holds now, so that every whole line the filters wrote before this
  // call is in the batch (then take(true) sends all of it). A line not ended yet comes later.
  void drain();
  // The batch: whole lines only unless `everything` (the end of a stage) or a line longer
  // than kMaxPending is pending. "" when there is nothing to send.
  std::string take(bool everything);

 private:
  void read_loop();
  // Reads what the pipe holds without waiting, up to about `limit` bytes. REQUIRES: mu_ held.
  void read_available(std::size_t limit);

  int read_fd_ = -1;
  std::mutex mu_;  // guards pending_ and the reads of read_fd_
  std::condition_variable taken_;
  std::string pending_;
  std::atomic<bool> stop_{false};
  std::thread reader_;
};

}  // namespace sluice::daemon

#endif  // SLUICE_DAEMONS_STDOUT_FORWARDER_H_
