#include "console/result_pump.h"

#include <algorithm>
#include <optional>

#include "control/codec.h"

namespace sluice::console {

void UnitJob::abandon(const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (abandoned_) return;
    abandoned_ = true;
    abandoned_why_ = why;
  }
  room_.notify_all();
  unit_.cancel();  // no-op once the unit ended
}

bool UnitJob::abandoned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_;
}

std::string UnitJob::abandoned_why() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_why_;
}

void UnitJob::written(std::size_t bytes) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    in_flight_ -= std::min(bytes, in_flight_);
  }
  room_.notify_all();
}

void UnitJob::drop_results() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    dropped_ = true;
  }
  room_.notify_all();
}

bool UnitJob::sending() const {
  std::lock_guard<std::mutex> lock(mu_);
  return !abandoned_ && !dropped_;
}

bool UnitJob::wait_for_room() {
  std::unique_lock<std::mutex> lock(mu_);
  room_.wait(lock, [&] { return abandoned_ || dropped_ || in_flight_ < kResultWindow; });
  return !abandoned_ && !dropped_;
}

void UnitJob::queued(std::size_t bytes) {
  std::lock_guard<std::mutex> lock(mu_);
  in_flight_ += bytes;
}

ResultPump::ResultPump(Ended ended) : ended_(std::move(ended)) {
  thread_ = std::thread([this] { run(); });
}

ResultPump::~ResultPump() { finish(); }

void ResultPump::add(std::shared_ptr<UnitJob> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    jobs_.push_back(std::move(job));
  }
  changed_.notify_all();
}

void ResultPump::drop_all_results() {
  std::lock_guard<std::mutex> lock(mu_);
  if (current_) current_->drop_results();
  for (const auto& job : jobs_) job->drop_results();
}

void ResultPump::finish() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    finishing_ = true;
  }
  changed_.notify_all();
  if (thread_.joinable()) thread_.join();
}

void ResultPump::run() {
  for (;;) {
    std::shared_ptr<UnitJob> job;
    {
      std::unique_lock<std::mutex> lock(mu_);
      changed_.wait(lock, [&] { return finishing_ || !jobs_.empty(); });
      if (jobs_.empty()) return;
      job = std::move(jobs_.front());
      jobs_.pop_front();
      current_ = job;
    }
    forward(*job);
    UnitReport report;
    try {
      report = job->unit_.wait();
    } catch (const std::exception& e) {  // not expected: the unit's state is the Application's
      report.index = job->index();
      report.stage = "serve";
      report.message = e.what();
    }
    if (std::shared_ptr<ResultSink> sink = job->sink_.lock()) sink->ended(report);
    {
      std::lock_guard<std::mutex> lock(mu_);
      current_.reset();
    }
    ended_(job, report);
  }
}

void ResultPump::forward(UnitJob& job) {
  try {
    InputStream& results = job.unit_.results();
    while (std::optional<Buffer> buffer = results.read()) {
      if (!job.sending()) continue;  // cancelled, or serve is going down: what is left goes nowhere
      std::shared_ptr<ResultSink> sink = job.sink_.lock();
      if (!sink) {
        job.abandon("the client's session closed");
        continue;
      }
      const auto* data = reinterpret_cast<const char*>(buffer->data());
      const std::size_t size = buffer->size();
      std::size_t at = 0;
      do {  // an empty buffer is one empty chunk
        if (!job.wait_for_room()) break;
        const std::size_t n = std::min(kResultChunk, size - at);
        control::Envelope e;
        control::ResultChunk* chunk = e.mutable_result_chunk();
        chunk->set_data(data + at, n);
        chunk->set_key(buffer->key());
        chunk->set_more(at + n < size);
        std::string frame = control::encode(e);
        job.queued(frame.size());
        sink->deliver(std::move(frame));
        at += n;
      } while (at < size);
    }
  } catch (const std::exception& e) {
    job.abandon(e.what());  // wait() says how the unit ended
  }
}

}  // namespace sluice::console
