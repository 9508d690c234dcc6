// WaitRecord: what one filter copy is waiting for right now, if anything: which operation
// (read, write, allocate) on which stream, since when. Its ports fill it on their slow
// path only (when they are about to wait), so it costs nothing while data flows; the
// console reads it when no buffer has moved for a while, to say where a run is stuck.
//
// Thread safety: written by the copy's thread, read from any thread. The three fields
// are read one at a time, so a reader may see a mix of two waits: fine for a report.
#ifndef SLUICE_STREAM_WAIT_RECORD_H_
#define SLUICE_STREAM_WAIT_RECORD_H_

#include <atomic>
#include <cstdint>
#include <string>

#include "sync/waiter.h"

namespace sluice {

struct WaitRecord {
  std::atomic<const char*> op{nullptr};             // "read", "write", "allocate"; null: not waiting
  std::atomic<const std::string*> stream{nullptr};  // the stream's label; outlives the record
  // When the wait began, by Waiter::coarse_now_ns(): every wait of a task switch stamps it,
  // and readers want seconds. A reader's now_ns() may run up to a tick ahead of the stamp,
  // so a wait reads up to a tick long, never negative.
  std::atomic<std::uint64_t> since_ns{0};

  // How long the copy has been waiting on `stream` at `now_ns` (Waiter::coarse_now_ns), or 0
  // when it is not waiting, or waiting on another stream.
  std::uint64_t waiting_on(const std::string* stream, std::uint64_t now_ns) const noexcept {
    if (op.load(std::memory_order_acquire) == nullptr || this->stream.load(std::memory_order_relaxed) != stream) return 0;
    const std::uint64_t since = since_ns.load(std::memory_order_relaxed);
    return now_ns > since ? now_ns - since : 0;
  }

  // Marks a wait for the life of the scope. `record` may be null (ports made by tests).
  class Scope {
   public:
    Scope(WaitRecord* record, const char* op, const std::string* stream) noexcept : record_(record) {
      if (record_ == nullptr) return;
      record_->since_ns.store(Waiter::coarse_now_ns(), std::memory_order_relaxed);
      record_->stream.store(stream, std::memory_order_relaxed);
      record_->op.store(op, std::memory_order_release);
    }
    ~Scope() {
      if (record_ != nullptr) record_->op.store(nullptr, std::memory_order_release);
    }
    Scope(const Scope&) = delete;
    Scope& operator=(const Scope&) = delete;

   private:
    WaitRecord* record_;
  };
};

}  // namespace sluice

#endif  // SLUICE_STREAM_WAIT_RECORD_H_
