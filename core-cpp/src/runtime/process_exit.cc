#include "runtime/process_exit.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "log/backend.h"
#include "runtime/crash_report.h"

namespace sluice::process {

namespace {
std::atomic<bool> end_early{false};
std::atomic<bool> jvm_running{false};

// Flushes the log, stdout and stderr (skipping one whose lock another thread holds, where a flush
// could hang) and ends the process with `status` at once.
[[noreturn]] void flush_and_end(int status) {
  logging::flush_background(std::chrono::seconds(1));  // a daemon's log lines still waiting
  for (std::FILE* stream : {stdout, stderr}) {
    if (::ftrylockfile(stream) == 0) {
      ::fflush_unlocked(stream);
      ::funlockfile(stream);
    }
  }
  std::_Exit(status);
}

// exit() called on a thread that runs a filter copy: the copy ended the process. Named like
// a crash (crash_report.h). Returns whether it was one.
bool name_exit(int status) {
  const crash::CopyRecord* copy = crash::current();
  if (copy == nullptr) return false;
  char what[48];
  std::snprintf(what, sizeof what, "called exit(%d)", status);
  crash::report_event(what, copy);
  return true;
}
}  // namespace

void end_before_jvm_statics_at_exit() {
  if (end_early.exchange(true, std::memory_order_acq_rel)) return;
  // A copy that calls exit() ends the process at once with status 1: the status it chose
  // must not pass for one of the program's own (3 means "the topology is invalid"), and the
  // exit handlers and static destructors must not run under the copies still running.
  ::on_exit(
      [](int status, void*) {
        if (name_exit(status)) flush_and_end(1);
      },
      nullptr);
}

void jvm_started() {
  if (jvm_running.exchange(true, std::memory_order_acq_rel)) return;  // one JVM per process
  ::on_exit([](int status, void*) { finish(name_exit(status) ? 1 : status); }, nullptr);
}

void finish(int status) {
  if (!end_early.load(std::memory_order_acquire) || !jvm_running.load(std::memory_order_acquire)) return;
  flush_and_end(status);
}

}  // namespace sluice::process
