// ExitWatch: which filter copy called System.exit, for the JVM's exit hook (jvm.cc) to name
// it like a crash. HotSpot calls that hook on its VM thread, not on the caller's, so the
// caller is found from Java: a shutdown hook (org.sluice.Bridge.watchExit) runs while the
// calling thread waits in java.lang.Shutdown.exit, finds it among all threads by that frame,
// and passes it here (Bridge.nExitFrom); this side knows each copy thread it attached and
// where that thread keeps its crash record (runtime/crash_report.h). Runtime.halt runs no
// shutdown hook, so it names no copy.
//
// Only in a JVM sluice created (a JVM that loaded sluice has exit handling of its own).
// Thread safety: watch_exit and exit_caller from any thread; remember_copy_thread and
// forget_copy_thread on the copy's own thread (forget finds the entry by that thread's
// crash record slot).
#ifndef SLUICE_JNI_EXIT_WATCH_H_
#define SLUICE_JNI_EXIT_WATCH_H_

#include <jni.h>

#include "runtime/crash_report.h"

namespace sluice::jni {

// Installs the shutdown hook. Once, on a thread attached to the JVM sluice just created.
void watch_exit(JNIEnv* env);

// The calling thread runs a filter copy (it was just attached): remembered until forgotten.
void remember_copy_thread(JNIEnv* env);
void forget_copy_thread(JNIEnv* env);

// The record of the copy that called System.exit, read now (its stage and unit of work), or
// null when none was found.
const crash::CopyRecord* exit_caller();

}  // namespace sluice::jni

#endif  // SLUICE_JNI_EXIT_WATCH_H_
