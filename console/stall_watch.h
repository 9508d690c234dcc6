// StallWatch: notices a run in which no buffer moves, and StallReport says where it is
// stuck: for every copy, the stream and the operation (read, write, allocate) it waits on,
// and on which host; or that it is busy in its own code, or done with the unit.
//
// The console feeds it the number of buffers moved so far (written plus read, over every
// stream and host) a few times a second while a unit of work runs. After `after` without
// a change it reports once per stall; when the user asked for it (--stall-timeout), the
// run fails with that report instead.
//
// Not thread-safe: one thread feeds it.
#ifndef SLUICE_CONSOLE_STALL_WATCH_H_
#define SLUICE_CONSOLE_STALL_WATCH_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runtime/engine.h"

namespace sluice::console {

class StallWatch {
 public:
  using Clock = std::chrono::steady_clock;
  enum class Verdict { kMoving, kReport, kFail };

  // Default: report after 10 s of no movement, never fail.
  StallWatch(std::chrono::milliseconds after, bool fail) : after_(after), fail_(fail) {}

  // A unit of work starts: the clock restarts.
  void start_unit(std::uint64_t moved);
  // `moved`: buffers written and read so far. kReport or kFail once per stall.
  Verdict observe(std::uint64_t moved);
  double quiet_seconds() const;
  // True from a kReport or kFail until buffers move again (or the next unit starts).
  bool stalled() const { return reported_; }
  bool fails() const { return fail_; }

 private:
  const std::chrono::milliseconds after_;
  const bool fail_;
  std::uint64_t last_moved_ = 0;
  Clock::time_point last_change_ = Clock::now();
  bool reported_ = false;
};

// Buffers written plus read, over every stream.
std::uint64_t buffers_moved(const std::vector<StreamStats>& streams);

// "no buffer has moved for 10.2 s; what each copy is doing:\n  join#0 on host b: waiting
// 10.1 s to read from srcz.out -> join.in2\n..." (one line per copy); then, when
// `in_flight` (HostStats::in_flight) is not empty, "\nwhat the data planes hold:" and it.
// `streams` (their queues now) tell a copy waiting for a free buffer whether its blocks are
// queued or in the hands of the copies that read them.
std::string stall_report(double quiet_seconds, const std::vector<CopyActivity>& copies,
                         const std::vector<StreamStats>& streams, const std::string& in_flight = "");

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_STALL_WATCH_H_
