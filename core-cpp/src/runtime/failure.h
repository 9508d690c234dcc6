// Failure: why a run stopped, named precisely enough to act on.
#ifndef SLUICE_RUNTIME_FAILURE_H_
#define SLUICE_RUNTIME_FAILURE_H_

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

}  // namespace sluice

#endif  // SLUICE_RUNTIME_FAILURE_H_
