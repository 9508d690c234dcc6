// The JVM holder: the one JVM of this process, created when the first topology with Java filters
// is prepared (never for a topology without), or adopted when one already runs here.
//
// Creation: libjvm.so is dlopen'ed (not linked), so that loading this library into a running
// JVM (the JUnit tests) never drags in a second libjvm; it is found at $SLUICE_JVM_LIBRARY,
// $JAVA_HOME/lib/server/libjvm.so, or the JDK this library was built against. The JVM gets the
// jfilter jar as its class path ($SLUICE_JFILTER_JAR, else next to the installed library in
// ../share/sluice/jfilter.jar, else the build tree's, else the install prefix's), -Xrs (signals
// stay the console's), the topology's jvm: heap (-Xmx) and options, then $SLUICE_JVM_OPTIONS.
// It is created on a thread of its own, which detaches afterwards, and lives until the process
// exits. sluice's crash handlers are installed just before, so that the JVM chains to them
// (runtime/crash_report.h). Filter classes load through a class loader per topology classpath (org.sluice.Bridge),
// so one JVM serves any topology.
//
// Adoption: when this library is loaded by a JVM (System.load), JNI_OnLoad adopts that JVM;
// when some other code created one in the process, JNI_GetCreatedJavaVMs finds it. Either way
// the topology's jvm: settings cannot apply, and a warning says so.
//
// Thread safety: all functions are safe from any thread.
#ifndef SLUICE_JNI_JVM_H_
#define SLUICE_JNI_JVM_H_

#include <jni.h>

#include "jni_util.h"
#include "topology/topology.h"

namespace sluice::jni {

// Makes sure the JVM runs: creates or adopts it the first time; later, warns when `topology`
// asks for jvm: settings other than those the JVM started with. Throws sluice::Error saying
// why the JVM cannot start (libjvm or the jfilter jar not found, options refused) and what to
// do; once creation failed, every later call throws the same error.
void ensure_jvm(const topo::Topology& topology);

// The JVM, or nullptr before ensure_jvm/adopt_jvm.
SLUICE_JNI_SHARED JavaVM* jvm();

// Adopts the JVM that loaded this library (JNI_OnLoad). Throws sluice::Error.
SLUICE_JNI_SHARED void adopt_jvm(JavaVM* vm, JNIEnv* env);

// For copy threads: attach the calling thread once (as a daemon) and keep its JNIEnv, detach
// at the end. thread_env() is that JNIEnv, or nullptr on a thread not attached this way.
void attach_thread();
void detach_thread();
JNIEnv* thread_env();

// The calling thread's JNIEnv for the life of the object: attaches a thread that is not
// attached yet (and detaches it again at the end). Throws sluice::Error.
class ScopedEnv {
 public:
  explicit ScopedEnv(JavaVM* vm = jvm());
  ~ScopedEnv();
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;
  JNIEnv* get() const { return env_; }

 private:
  JavaVM* vm_;
  JNIEnv* env_ = nullptr;
  bool attached_ = false;
};

}  // namespace sluice::jni

#endif  // SLUICE_JNI_JVM_H_
