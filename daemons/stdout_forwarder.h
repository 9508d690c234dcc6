// StdoutForwarder: what an app daemon's filters write to stdout, on its way to the console's
// stdout, as an embedded run prints it there (mpirun and srun forward their ranks' stdout
// the same way). Made before any other thread or a JVM: it points fd 1 at a pipe
// (line-buffered, as on a terminal) and a thread of its own reads that pipe into a batch,
// which goes up with the filter log lines (FilterLog.output; sluiced relays it): taken by
// the app daemon's control loop every 250 ms and at every stage's end, and by the reader
// itself, through `send`, once kSendAt bytes are waiting (so output does not wait for a
// control loop busy starting filters, and flows at the connection's speed).
//
// Bounded: past kMaxPending bytes not yet taken, the reader stops reading, the pipe fills
// and the filters' writes wait. stderr is left alone: it is sluiced's log.
//
// Thread safety: take() and drain() from any thread; one mutex guards the batch and the reads
// of the pipe, so bytes leave in the order they were written. `send` is called from the
// reader thread with no lock held.
#ifndef SLUICE_DAEMONS_STDOUT_FORWARDER_H_
#define SLUICE_DAEMONS_STDOUT_FORWARDER_H_

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace sluice::daemon {

class StdoutForwarder {
 public:
  static constexpr std::size_t kSendAt = std::size_t{64} << 10;
  static constexpr std::size_t kMaxPending = std::size_t{1} << 20;

  // Points fd 1 at the pipe and starts the reader; `send` takes the batch and sends it (the
  // app daemon's flush). Throws sluice::Error, with fd 1 as it was, when there is no pipe or
  // thread to be had.
  explicit StdoutForwarder(std::function<void()> send);
  ~StdoutForwarder();
  StdoutForwarder(const StdoutForwarder&) = delete;
  StdoutForwarder& operator=(const StdoutForwarder&) = delete;

  // Sets what the reader calls once kSendAt bytes wait (none until then).
  void set_send(std::function<void()> send);

  // Reads what the pipe holds now, so that every line the filters ended before this call is
  // in the batch (then take(true) sends all of it).
  void drain();
  // The batch: whole lines only unless `everything` (the end of a stage: then also the
  // start of a line that reached the pipe unended) or kMaxPending bytes wait without a
  // newline. "" when there is nothing to send.
  std::string take(bool everything);

 private:
  void read_loop();
  // Reads what the pipe holds without waiting, until kMaxPending bytes are pending. False
  // at the end of the pipe (every write end closed: a filter closed stdout). REQUIRES: mu_.
  bool read_available();

  int read_fd_ = -1;
  std::mutex mu_;  // guards pending_, send_ and the reads of read_fd_
  std::condition_variable taken_;
  std::string pending_;
  std::function<void()> send_;
  std::atomic<bool> stop_{false};
  std::thread reader_;
};

}  // namespace sluice::daemon

#endif  // SLUICE_DAEMONS_STDOUT_FORWARDER_H_
