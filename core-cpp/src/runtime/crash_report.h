// Crash reports: when a filter crashes the process (SIGSEGV, SIGBUS, SIGFPE, SIGILL, abort),
// name it before the process dies:
//   filter 'count' copy 1 on host b crashed with SIGSEGV in process (unit of work 3)
//
// Whoever runs a copy keeps a CopyRecord (filter, copy, host, unit of work, stage) and makes
// it the current record of the thread the copy runs on. Handlers installed once per process
// read the crashing thread's current record, write the line with async-signal-safe code only
// (write(2) to stderr, and to a report fd when one is set), then let the signal's default
// action end the process: it dies by that signal, with a core dump if the system makes one.
//
// The JVM: HotSpot takes SIGSEGV, SIGBUS, SIGFPE and SIGILL for itself (implicit null checks,
// safepoints, stack banging). A handler installed before the JVM is created is kept and called
// for the signals HotSpot does not recognise as its own (signal chaining, on by default); one
// installed after the JVM replaces HotSpot's and breaks Java. So install_handlers() must run
// before the JVM is created (the JVM holder calls it), and it never replaces a handler that is
// already there: in a process that has crash handlers of its own (sluice loaded into a running
// JVM, as in the JUnit tests; a sanitizer) it installs none, and crashes are that owner's to
// report (HotSpot's hs_err file). See docs/runtime.md, "Crash attribution".
//
// Thread safety: every function may be called from any thread. A CopyRecord's unit and
// stage are atomics, written by the copy's runner and read by the handler.
#ifndef SLUICE_RUNTIME_CRASH_REPORT_H_
#define SLUICE_RUNTIME_CRASH_REPORT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice::crash {

// What one filter copy is doing, readable from a signal handler.
struct CopyRecord {
  // `filter` and `host` are not copied: they must outlive the record (the Engine points them
  // at its topology and options).
  CopyRecord(const char* filter_name, int copy_index, const char* host_name)
      : filter(filter_name), copy(copy_index), host(host_name) {}
  CopyRecord(const CopyRecord&) = delete;
  CopyRecord& operator=(const CopyRecord&) = delete;

  const char* const filter;
  const int copy;
  const char* const host;
  std::atomic<std::uint64_t> unit{0};
  // create, init, process, end of work, finalize, idle, destroy. Must point to storage that
  // lives as long as the process (a string literal).
  std::atomic<const char*> stage{"create"};
};

// Makes `record` the calling thread's current copy (nullptr: none), and returns the one it
// replaces. The record must stay alive while it is current.
const CopyRecord* set_current(const CopyRecord* record);
const CopyRecord* current();
// Where the calling thread keeps its current record: another thread may read it through
// this while the calling thread lives (the JVM's exit hook, for the thread that called
// System.exit and waits for the process to end).
const CopyRecord* const* current_slot();

// Makes `record` current for the life of the object, then restores the previous one.
class ScopedCurrent {
 public:
  explicit ScopedCurrent(const CopyRecord* record) : previous_(set_current(record)) {}
  ~ScopedCurrent() { set_current(previous_); }
  ScopedCurrent(const ScopedCurrent&) = delete;
  ScopedCurrent& operator=(const ScopedCurrent&) = delete;

 private:
  const CopyRecord* previous_;
};

// An alternate signal stack for the calling thread, for the life of the object, so that the
// handler can still run when a filter overflowed the thread's own stack. Leaves a thread that
// already has one alone. Construct and destroy on the same thread.
class AltStack {
 public:
  AltStack();
  ~AltStack();
  AltStack(const AltStack&) = delete;
  AltStack& operator=(const AltStack&) = delete;

  // False when the thread had one already, or the memory could not be mapped.
  bool installed() const { return base_ != nullptr; }

 private:
  void* base_ = nullptr;  // the mapping: a guard page, then the stack
  std::size_t size_ = 0;
};

// Where the crash line goes.
struct Output {
  // Written before the line on stderr. Default: "sluice: " (the console's messages).
  std::string prefix = "sluice: ";
  // Start the stderr line with the UTC time, as the daemons' log lines do
  // ("2026-11-21T12:57:12.397Z "). Default: false.
  bool timestamp = false;
  // Also write the bare line (no time, no prefix) here, e.g. the app daemon's crash pipe to
  // sluiced. Not owned. Default: -1, none.
  int report_fd = -1;
  // A pipe the filters' stdout goes through (its read end, non-blocking), and where its
  // bytes go: what it holds is copied there first, so the filters' last lines come out
  // before the report (console/stdout_above_progress.h). Not owned. Default: -1, -1, none.
  int stdout_pipe = -1;
  int stdout_to = -1;
};
// Replaces the output. Call it at startup (each call keeps a copy for the rest of the process).
void set_output(const Output& output);

// Installs the handlers for SIGSEGV, SIGBUS, SIGFPE, SIGILL and SIGABRT unless one of them
// already has a handler (SIG_DFL and SIG_IGN do not count), and a std::terminate handler that
// notes why it was called (an exception's what()) for the SIGABRT line, " (std::terminate:
// an exception nothing caught: ...)", escaped as text::printable does, in place of the
// default handler's raw "terminate called after throwing ...". The first call decides; later
// calls return what it did. Returns whether sluice's handlers are installed.
bool install_handlers();
bool handlers_installed();

// The line for a crash by `sig` (no time, no prefix, with '\n') into out[0, size): for a
// copy, "filter 'x' copy 1 on host b crashed with SIGSEGV in process (unit of work 3)";
// without one (record == nullptr), "crashed with SIGSEGV outside any filter (thread 'name',
// tid 1234)" for the calling thread. `stack_overflow` (the fault was at the stack pointer)
// adds " (stack overflow: ...)" after the signal's name. Async-signal-safe. Returns the length;
// the text is cut to fit but always ends with '\n' and a NUL (REQUIRES: size >= 2).
std::size_t format_line(char* out, std::size_t size, int sig, const CopyRecord* record, bool stack_overflow = false);
// The same line for another way a copy ends the process, `what` in place of "crashed with
// SIGSEGV": "filter 'x' copy 1 on host b called System.exit(3) in process (unit of work 3)".
std::size_t format_event_line(char* out, std::size_t size, const char* what, const CopyRecord* record);

// Writes format_event_line's line for `record` where a crash line goes (stderr with the
// output's prefix and time, and the report fd), or `what` alone when `record` is null: for
// a process about to end for a reason other than a signal (the JVM's System.exit).
// Async-signal-safe.
void report_event(const char* what, const CopyRecord* record);

}  // namespace sluice::crash

#endif  // SLUICE_RUNTIME_CRASH_REPORT_H_
