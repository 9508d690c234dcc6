#include "runtime/crash_report.h"

#include <errno.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <exception>
#include <string>
#include <cstring>
#include <mutex>

#include "runtime/write_all.h"
#include "text/shortened.h"

namespace sluice::crash {

namespace {

constexpr int kSignals[] = {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGABRT};

// initial-exec: reading it from the handler must not allocate (libsluice is loaded with
// the program, or by a JVM through dlopen, where the loader's static TLS reserve holds it).
thread_local const CopyRecord* current_record __attribute__((tls_model("initial-exec"))) = nullptr;

// The output as the handler reads it: plain bytes, never freed.
struct OutputData {
  char prefix[256];
  bool timestamp;
  int report_fd;
  int stdout_pipe;
  int stdout_to;
};
const OutputData kDefaultOutput = {"sluice: ", false, -1, -1, -1};
std::atomic<const OutputData*> output_data{&kDefaultOutput};

std::atomic<bool> installed{false};
// The thread that is writing a report (0: none), so a second crash waits for the first
// thread to end the process, and a crash inside the report does not start another.
std::atomic<pid_t> reporter{0};

pid_t thread_id() { return static_cast<pid_t>(::syscall(SYS_gettid)); }

const char* signal_name(int sig) {
  switch (sig) {
    case SIGSEGV: return "SIGSEGV";
    case SIGBUS: return "SIGBUS";
    case SIGFPE: return "SIGFPE";
    case SIGILL: return "SIGILL";
    case SIGABRT: return "SIGABRT";
    default: return nullptr;
  }
}

// Appends to a fixed buffer, cutting what does not fit. Async-signal-safe.
class LineWriter {
 public:
  // REQUIRES: size > 0 (room for the terminating NUL).
  LineWriter(char* out, std::size_t size) : out_(out), capacity_(size - 1) {}
  ~LineWriter() { out_[length_] = '\0'; }
  LineWriter& add(char c) {
    if (length_ < capacity_) out_[length_++] = c;
    return *this;
  }
  LineWriter& add(const char* text) {
    for (; text != nullptr && *text != '\0'; ++text) add(*text);
    return *this;
  }
  LineWriter& add(std::uint64_t value, int min_digits = 1) {
    char digits[24];
    int n = 0;
    do {
      digits[n++] = static_cast<char>('0' + value % 10);
      value /= 10;
    } while (value != 0 && n < 24);
    while (n < min_digits && n < 24) digits[n++] = '0';
    while (n > 0) add(digits[--n]);
    return *this;
  }
  LineWriter& add_int(long long value) {
    if (value < 0) {
      add('-');
      return add(static_cast<std::uint64_t>(-(value + 1)) + 1);
    }
    return add(static_cast<std::uint64_t>(value));
  }
  // Ends the text with a newline, over its last character when it is full.
  LineWriter& end_line() {
    if (length_ == capacity_ && length_ > 0) --length_;
    return add('\n');
  }
  std::size_t length() const { return length_; }

 private:
  char* out_;
  std::size_t capacity_;
  std::size_t length_ = 0;
};

// "2026-11-21T12:57:12.397Z " (civil date from days: H. Hinnant's algorithm).
void add_timestamp(LineWriter& w) {
  timespec now{};
  ::clock_gettime(CLOCK_REALTIME, &now);
  const long long secs = now.tv_sec;
  long long days = secs / 86400;
  long long rem = secs % 86400;
  if (rem < 0) {
    rem += 86400;
    --days;
  }
  const long long z = days + 719468;
  const long long era = (z >= 0 ? z : z - 146096) / 146097;
  const long long doe = z - era * 146097;
  const long long yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const long long doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const long long mp = (5 * doy + 2) / 153;
  const long long day = doy - (153 * mp + 2) / 5 + 1;
  const long long month = mp < 10 ? mp + 3 : mp - 9;
  const long long year = yoe + era * 400 + (month <= 2 ? 1 : 0);
  w.add(static_cast<std::uint64_t>(year), 4).add('-').add(static_cast<std::uint64_t>(month), 2).add('-');
  w.add(static_cast<std::uint64_t>(day), 2).add('T').add(static_cast<std::uint64_t>(rem / 3600), 2).add(':');
  w.add(static_cast<std::uint64_t>(rem / 60 % 60), 2).add(':').add(static_cast<std::uint64_t>(rem % 60), 2);
  w.add('.').add(static_cast<std::uint64_t>(now.tv_nsec / 1000000), 3).add("Z ");
}

// Copies what the filters' stdout pipe holds now to where it goes. Async-signal-safe.
void drain_stdout_pipe(const OutputData* out) {
  if (out->stdout_pipe < 0 || out->stdout_to < 0) return;
  char chunk[4096];
  for (;;) {
    const ssize_t n = ::read(out->stdout_pipe, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // empty (EAGAIN), or no writer left
    write_all(out->stdout_to, chunk, static_cast<std::size_t>(n));
  }
}

void write_report(int sig, bool stack_overflow) {
  const OutputData* out = output_data.load(std::memory_order_acquire);
  char line[1024];
  const std::size_t line_length = format_line(line, sizeof line, sig, current_record, stack_overflow);
  char full[1536];
  LineWriter w(full, sizeof full);
  if (out->timestamp) add_timestamp(w);
  w.add(out->prefix).add(line);
  // A pipe whose reader is gone must not end the process by SIGPIPE instead: blocked for
  // the rest of the handler. When it returns, the crash signal (a lower number) is delivered
  // before a SIGPIPE left pending.
  sigset_t pipe_only;
  ::sigemptyset(&pipe_only);
  ::sigaddset(&pipe_only, SIGPIPE);
  ::pthread_sigmask(SIG_BLOCK, &pipe_only, nullptr);
  drain_stdout_pipe(out);
  write_all(STDERR_FILENO, full, w.length());
  if (out->report_fd >= 0) write_all(out->report_fd, line, line_length);
}

// The signal's default action: restore it, send the signal to this thread again and return.
// The signal is delivered as soon as the thread unblocks it (on return from the handler at
// the latest); a fault that is not pending any more happens again when its instruction runs
// again. Either way the process dies by `sig`, as it would have without us.
void die_by(int sig) {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  ::sigemptyset(&dfl.sa_mask);
  ::sigaction(sig, &dfl, nullptr);
  ::syscall(SYS_tgkill, ::getpid(), thread_id(), sig);
}

// Whether a SIGSEGV faulted at the stack pointer: the stack ran into its guard page (a call
// pushing its return address, or a stack-clash probe of a large frame, page by page), rather
// than a bad pointer, which lands anywhere else.
bool at_stack_pointer(int sig, const siginfo_t* info, const void* context) {
  if (sig != SIGSEGV || info == nullptr || context == nullptr) return false;
  const auto* uc = static_cast<const ucontext_t*>(context);
#if defined(__x86_64__)
  const auto sp = static_cast<std::uintptr_t>(uc->uc_mcontext.gregs[REG_RSP]);
#elif defined(__aarch64__)
  const auto sp = static_cast<std::uintptr_t>(uc->uc_mcontext.sp);
#else
  return false;
#endif
  const auto fault = reinterpret_cast<std::uintptr_t>(info->si_addr);
  constexpr std::uintptr_t kNear = 64 * 1024;  // a probe's page, a red zone, a pushed frame
  return fault + kNear >= sp && fault <= sp + kNear;
}

// What std::terminate was given, for the SIGABRT line that follows it: written by
// on_terminate (ordinary code, before it aborts), read by the signal handler. Across hosts it is
// the only place the reason reaches the console (the default terminate handler's words go to
// the host's log alone).
char terminate_note[480];
std::atomic<bool> terminate_noted{false};

void on_terminate() {
  std::string what;
  if (const std::exception_ptr e = std::current_exception()) {
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      what = std::string("an exception nothing caught: ") + x.what();
    } catch (...) {
      what = "an exception nothing caught, of a type not derived from std::exception";
    }
  } else {
    what = "called with no exception (a std::thread destroyed while joinable, say)";
  }
  // One line, nothing a terminal acts on (the text is a filter's), cut whole.
  for (char& c : what) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  what = text::printable(what, false);
  what.resize(text::utf8_cut(what, sizeof terminate_note - 1));
  std::snprintf(terminate_note, sizeof terminate_note, "%s", what.c_str());
  terminate_noted.store(true, std::memory_order_release);
  // Not libstdc++'s handler: it writes what() raw ("terminate called after throwing ..."), an
  // escape sequence and forged lines included; the line this abort brings says it instead.
  std::abort();
}

void on_crash(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  const pid_t self = thread_id();
  pid_t expected = 0;
  if (reporter.compare_exchange_strong(expected, self)) {
    write_report(sig, at_stack_pointer(sig, info, context));
  } else if (expected != self) {
    // Another thread is reporting its crash and ends the process in a moment; its report is
    // the one to read. (expected == self: our own report crashed; give up on it.)
    for (int i = 0; i < 200; ++i) {
      timespec pause{0, 10 * 1000 * 1000};
      ::nanosleep(&pause, nullptr);
    }
  }
  die_by(sig);
  errno = saved_errno;
}

bool has_handler(int sig) {
  struct sigaction old {};
  if (::sigaction(sig, nullptr, &old) != 0) return true;  // cannot tell: leave it alone
  return old.sa_handler != SIG_DFL && old.sa_handler != SIG_IGN;
}

}  // namespace

const CopyRecord* set_current(const CopyRecord* record) {
  const CopyRecord* previous = current_record;
  current_record = record;
  return previous;
}

const CopyRecord* current() { return current_record; }

const CopyRecord* const* current_slot() { return &current_record; }

AltStack::AltStack() {
  stack_t existing{};
  if (::sigaltstack(nullptr, &existing) != 0 || (existing.ss_flags & SS_DISABLE) == 0) return;
  const std::size_t page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  const std::size_t stack = std::max<std::size_t>(64 * 1024, SIGSTKSZ);
  const std::size_t size = page + (stack + page - 1) / page * page;
  void* base = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
  if (base == MAP_FAILED) return;
  ::mprotect(base, page, PROT_NONE);  // a guard page below: an overflow faults, not corrupts
  stack_t alt{};
  alt.ss_sp = static_cast<char*>(base) + page;
  alt.ss_size = size - page;
  alt.ss_flags = 0;
  if (::sigaltstack(&alt, nullptr) != 0) {
    ::munmap(base, size);
    return;
  }
  base_ = base;
  size_ = size;
}

AltStack::~AltStack() {
  if (base_ == nullptr) return;
  stack_t off{};
  off.ss_flags = SS_DISABLE;
  ::sigaltstack(&off, nullptr);
  ::munmap(base_, size_);
}

void set_output(const Output& output) {
  auto* data = new OutputData{};  // never freed: the handler may read it at any time
  std::strncpy(data->prefix, output.prefix.c_str(), sizeof data->prefix - 1);
  data->timestamp = output.timestamp;
  data->report_fd = output.report_fd;
  data->stdout_pipe = output.stdout_pipe;
  data->stdout_to = output.stdout_to;
  output_data.store(data, std::memory_order_release);
}

bool install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (int sig : kSignals) {
      if (has_handler(sig)) return;  // the process has crash handling of its own (a JVM)
    }
    struct sigaction action {};
    action.sa_sigaction = on_crash;
    // SA_ONSTACK: on the copy thread's AltStack, so a stack overflow is reported too.
    // No SA_RESETHAND: HotSpot keeps a copy of this action to chain to, and on seeing that flag
    // drops its copy after the first chained call; a second thread crashing at the same moment
    // then went to HotSpot's own fatal-error report and the process died by SIGABRT, unnamed.
    // A crash inside the handler still ends the process: the same signal is blocked while the
    // handler runs (the kernel kills on a blocked fault), and another one finds `reporter` set.
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    ::sigemptyset(&action.sa_mask);
    for (int sig : kSignals) ::sigaction(sig, &action, nullptr);
    std::set_terminate(on_terminate);
    installed.store(true, std::memory_order_release);
  });
  return installed.load(std::memory_order_acquire);
}

bool handlers_installed() { return installed.load(std::memory_order_acquire); }

std::size_t format_line(char* out, std::size_t size, int sig, const CopyRecord* record, bool stack_overflow) {
  if (size < 2) return 0;
  const char* name = signal_name(sig);
  char what[128];
  LineWriter n(what, sizeof what - 1);
  n.add("crashed with ");
  if (name != nullptr) {
    n.add(name);
  } else {
    n.add("signal ").add_int(sig);
  }
  if (stack_overflow) n.add(" (stack overflow: recursion too deep, or a local array larger than the stack)");
  what[n.length()] = '\0';
  const std::size_t length = format_event_line(out, size, what, record);
  if (sig != SIGABRT || !terminate_noted.load(std::memory_order_acquire) || length == 0) return length;
  // After the line, in place of its newline: why std::terminate aborted.
  LineWriter w(out + length - 1, size - (length - 1));
  w.add(" (std::terminate: ").add(terminate_note).add(")").end_line();
  return length - 1 + w.length();
}

std::size_t format_event_line(char* out, std::size_t size, const char* what, const CopyRecord* record) {
  if (size < 2) return 0;
  LineWriter w(out, size);
  if (record != nullptr) {
    w.add("filter '").add(record->filter).add("' copy ").add_int(record->copy).add(" on host ").add(record->host);
    w.add(" ").add(what).add(" in ").add(record->stage.load(std::memory_order_relaxed));
    w.add(" (unit of work ").add(record->unit.load(std::memory_order_relaxed)).add(")").end_line();
  } else {
    char thread_name[17] = {};
    ::prctl(PR_GET_NAME, thread_name, 0, 0, 0);
    w.add(what).add(" outside any filter (thread '").add(thread_name).add("', tid ");
    w.add_int(thread_id()).add(")").end_line();
  }
  return w.length();
}

void report_event(const char* what, const CopyRecord* record) {
  const OutputData* out = output_data.load(std::memory_order_acquire);
  char line[1024];
  std::size_t line_length = 0;
  if (record != nullptr) {
    line_length = format_event_line(line, sizeof line, what, record);
  } else {
    LineWriter w(line, sizeof line - 1);
    w.add(what).end_line();
    line_length = w.length();
  }
  char full[1536];
  LineWriter w(full, sizeof full);
  if (out->timestamp) add_timestamp(w);
  w.add(out->prefix).add(line);
  drain_stdout_pipe(out);
  write_all(STDERR_FILENO, full, w.length());
  if (out->report_fd >= 0) write_all(out->report_fd, line, line_length);
}

}  // namespace sluice::crash
