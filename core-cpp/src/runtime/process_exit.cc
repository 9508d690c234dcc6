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

bool ends_before_jvm_statics_at_exit() { return end_early.load(std::memory_order_acquire); }

void jvm_started() { jvm_running.store(true, std::memory_order_release); }

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
