// Failure: why a run stopped, named precisely enough to act on.
#ifndef SLUICE_RUNTIME_FAILURE_H_
#define SLUICE_RUNTIME_FAILURE_H_

#include <cstddef>
#include <cstdint>
#include <string>

namespace sluice {

struct Failure {
  std::string filter;    // "" when not a filter's fault (e.g. cancelled)
  int copy = -1;
  std::string host;
  std::uint64_t unit = 0;  // unit of work index
  std::string stage;     // create, init, process, finalize, or what the runtime was doing
  std::string message;   // the exception's message (for Java, with the stack trace)
  // How the process that ran the failed copies ended, when its end is the failure: a signal's
  // name ("SIGSEGV", "SIGABRT", "SIGKILL"), "exit(7)" or "System.exit(3)" when a filter ended
  // it, "JVM ended (status 3)" when the JVM did outside any copy. "" when no process ended (an
  // exception, a lost connection, cancelled, a timeout).
  std::string crash{};

  // "filter 'count' copy 1 on host local failed in process (unit of work 0): message", or
  // the message alone when it names the copy itself ("filter 'count' copy 1 on host b
  // crashed with SIGSEGV in ...", a crash line) or no filter failed.
  std::string str() const;
};

// The most of a failure's message a run keeps (a filter chooses the message: a Java
// exception's may hold a 15 MB payload twice). A failure's message is kept this long by the
// run that records it, embedded or on an app daemon, so that a log line, `/api/status`, the
// reply to `sluice submit` and the frame to the console stay bounded.
inline constexpr std::size_t kFailureMessageMax = std::size_t{64} << 10;

// `message` when it has at most kFailureMessageMax bytes (or a few more: one cut already);
// else its first kFailureMessageMax bytes (never ending inside a UTF-8 sequence) and
// "\n... (N bytes in all: cut to 64 KiB)".
std::string cut_failure_message(std::string message);

}  // namespace sluice

#endif  // SLUICE_RUNTIME_FAILURE_H_
