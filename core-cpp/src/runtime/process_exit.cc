#include "runtime/process_exit.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>

namespace sluice::process {

namespace {
std::atomic<bool> end_early{false};
std::atomic<bool> jvm_running{false};
}  // namespace

void end_before_jvm_statics_at_exit() { end_early.store(true, std::memory_order_release); }

void jvm_started() {
  if (jvm_running.exchange(true, std::memory_order_acq_rel)) return;  // one JVM per process
  ::on_exit([](int status, void*) { finish(status); }, nullptr);
}

void finish(int status) {
  if (!end_early.load(std::memory_order_acquire) || !jvm_running.load(std::memory_order_acquire)) return;
  for (std::FILE* stream : {stdout, stderr}) {
    if (::ftrylockfile(stream) == 0) {
      ::fflush_unlocked(stream);
      ::funlockfile(stream);
    }
  }
  std::_Exit(status);
}

}  // namespace sluice::process
