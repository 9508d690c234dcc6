// name_this_thread: what `top -H`, perf, gdb and the crash report call the calling thread.
//
// Linux keeps 15 bytes of a thread's name. The runtime names its own threads "sluice-wkr-N"
// (N < 64), "sluice-monitor" and "sluice-net-io", and a copy that runs on a thread of its own
// (a Java copy) after its filter, "NAME#COPY", where NAME is cut so that #COPY stays (filter
// names are ASCII identifiers, so the cut never splits a character).
#ifndef SLUICE_SYNC_THREAD_NAME_H_
#define SLUICE_SYNC_THREAD_NAME_H_

#include <pthread.h>

#include <cstddef>
#include <string>

namespace sluice {

// `name` cut to what fits before `suffix`, which is kept whole.
inline void name_this_thread(const std::string& name, const std::string& suffix = "") {
  constexpr std::size_t kMax = 15;
  const std::size_t room = suffix.size() < kMax ? kMax - suffix.size() : 0;
  ::pthread_setname_np(::pthread_self(), (name.substr(0, room) + suffix).substr(0, kMax).c_str());
}

}  // namespace sluice

#endif  // SLUICE_SYNC_THREAD_NAME_H_
