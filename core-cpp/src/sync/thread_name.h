// name_this_thread: what `top -H`, perf, gdb and the crash report call the calling thread.
//
// Linux keeps 15 bytes of a thread's name; longer names are cut there. The runtime names its
// own threads "sluice-worker-N", "sluice-monitor" and "sluice-net-io", and a copy that runs on
// a thread of its own (a Java copy) after its filter: "NAME#COPY".
#ifndef SLUICE_SYNC_THREAD_NAME_H_
#define SLUICE_SYNC_THREAD_NAME_H_

#include <pthread.h>

#include <string>

namespace sluice {

inline void name_this_thread(const std::string& name) {
  ::pthread_setname_np(::pthread_self(), name.substr(0, 15).c_str());
}

}  // namespace sluice

#endif  // SLUICE_SYNC_THREAD_NAME_H_
