#include "console/status_sampler.h"

#include <pthread.h>

#include <chrono>

namespace sluice::console {

StatusSampler::StatusSampler(RunStatus* status, std::function<void(RunStatus&)> sample)
    : status_(status), sample_(std::move(sample)) {
  if (status_ != nullptr) thread_ = std::thread([this] { loop(); });
}

StatusSampler::~StatusSampler() {
  if (status_ == nullptr) return;
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  wake_.notify_all();
  thread_.join();
}

void StatusSampler::loop() {
  pthread_setname_np(pthread_self(), "sluice-ui-feed");
  std::unique_lock<std::mutex> lock(mu_);
  do {
    sample_(*status_);
  } while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; }));
}

}  // namespace sluice::console
