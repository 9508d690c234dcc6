// StatusSampler: feeds a RunStatus four times a second from a thread of its own ("sluice-ui-
// feed", beside the server's "sluice-ui"), so the --ui page's twice-a-second polls always
// find fresh rates. What a sample is comes from the caller: the Engine's counters for
// `sluice run`, the Application's for `sluice serve`.
//
// Thread safety: `sample` runs on the sampler's thread only; it must be safe to call
// alongside whatever the caller's threads do. Destroying the sampler stops and joins it.
#ifndef SLUICE_CONSOLE_STATUS_SAMPLER_H_
#define SLUICE_CONSOLE_STATUS_SAMPLER_H_

#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>

#include "console/run_status.h"

namespace sluice::console {

class StatusSampler {
 public:
  // Does nothing when `status` is null (no --ui). `status` must outlive the sampler.
  StatusSampler(RunStatus* status, std::function<void(RunStatus&)> sample);
  ~StatusSampler();
  StatusSampler(const StatusSampler&) = delete;
  StatusSampler& operator=(const StatusSampler&) = delete;

 private:
  void loop();

  RunStatus* const status_;
  const std::function<void(RunStatus&)> sample_;
  std::mutex mu_;  // guards stop_
  std::condition_variable wake_;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_STATUS_SAMPLER_H_
