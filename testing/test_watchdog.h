// Helpers for the stream and buffer tests (core-cpp/src/*/..._test.cc): a watchdog that aborts
// a run that blocks, a pop that refuses to block, and how a call ended.
#ifndef SLUICE_TESTING_TEST_WATCHDOG_H_
#define SLUICE_TESTING_TEST_WATCHDOG_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

#include "sluice/error.h"
#include "stream/input_channel.h"
#include "sync/run_signal.h"

namespace sluice::testing {

// Aborts the run when a test blocks far longer than it ever should, so that a bug makes the
// blocked call throw Aborted (a failure) instead of hanging the suite.
class Watchdog {
 public:
  explicit Watchdog(RunSignal& signal)
      : thread_([this, &signal] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!done_cv_.wait_for(lock, std::chrono::seconds(10), [this] { return done_; })) {
            ADD_FAILURE() << "the test blocked for 10 s; aborting its run";
            signal.abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    done_cv_.notify_one();
    thread_.join();
  }

 private:
  std::mutex mu_;  // guards done_
  std::condition_variable done_cv_;
  bool done_ = false;
  std::thread thread_;
};

// pop() on the test's own thread: throws (failing the test) instead of blocking forever when
// the channel holds nothing and has not ended.
inline std::optional<Buffer> pop_now(InputChannel& channel) {
  if (!channel.ended() && channel.queued() == 0 && !channel.holds_mark()) {
    throw std::logic_error("the channel is empty: pop() would block");
  }
  std::uint64_t blocked = 0;
  return channel.pop(&blocked);
}

// Runs f and tells how it ended: 1: it returned, 2: it threw Aborted, 3: it threw anything else.
template <typename F>
int outcome_of(F&& f) {
  try {
    f();
    return 1;
  } catch (const Aborted&) {
    return 2;
  } catch (...) {
    return 3;
  }
}

}  // namespace sluice::testing

#endif  // SLUICE_TESTING_TEST_WATCHDOG_H_
