// The Java classes, methods and fields the bridge uses, looked up once per JVM right after it
// is created or adopted (classes held as global references), and the registration of every
// native method with RegisterNatives.
#ifndef SLUICE_JNI_JAVA_TYPES_H_
#define SLUICE_JNI_JAVA_TYPES_H_

#include <jni.h>

#include "jni_util.h"

namespace sluice::jni {

struct JavaTypes {
  jclass filter, context, peer, buffer, bindings, bridge;
  jclass sluice_exception, aborted_exception, illegal_state, string;
  jmethodID filter_init, filter_process, filter_finalize;
  jmethodID context_new, context_expire, context_drop_read_ahead;
  jmethodID peer_new, peer_expire;
  jmethodID buffer_new;
  jfieldID buffer_handle;
  jmethodID bindings_put, bindings_keep, bindings_get;
  jmethodID bridge_check, bridge_create, bridge_stack_trace;
  jmethodID throwable_to_string;
  jclass thread;                   // java.lang.Thread (exit_watch.h)
  jmethodID thread_current;        // Thread.currentThread()
  jmethodID bridge_watch_exit;     // Bridge.watchExit()
};

// REQUIRES: load_types() succeeded (the JVM holder guarantees this before any filter runs).
SLUICE_JNI_SHARED const JavaTypes& types();

// Looks up everything in JavaTypes through `env`'s class loader and registers the native
// methods of org.sluice. Idempotent per process (the JVM lives until exit). Throws
// sluice::Error saying what is missing (e.g. jfilter.jar not on the class path) and clears the
// Java exception.
void load_types(JNIEnv* env);

}  // namespace sluice::jni

#endif  // SLUICE_JNI_JAVA_TYPES_H_
