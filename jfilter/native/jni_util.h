// JNI helpers for the Java bridge: strings, local frames, and exceptions in both directions.
//
// Exceptions never cross the language boundary (STYLE.md): a native method catches every C++
// exception and throws a Java one instead (throw_to_java); C++ that calls into Java checks for a
// pending Java exception after each call and turns it into a C++ one (rethrow_java_exception).
#ifndef SLUICE_JNI_JNI_UTIL_H_
#define SLUICE_JNI_JNI_UTIL_H_

#include <jni.h>

#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>

// libsluice_jni is built with hidden visibility. What the Application binding
// (libsluice_application_jni, jfilter/native/application/) shares with it is marked
// SLUICE_JNI_SHARED: one JVM holder, one table of pool-block ByteBuffers, one set of Java
// types per process, whichever library a JVM loaded first.
#define SLUICE_JNI_SHARED __attribute__((visibility("default")))

namespace sluice::jni {

// Thrown in C++ when a JNI call left a Java exception pending. A native method returns at
// once and lets the exception propagate into Java.
struct SLUICE_JNI_SHARED JavaPending {};

// Misuse of a Java-side object that the native side detects: a stale handle (a buffer after
// write/close, a stream after its unit of work), a call from a thread that is not the filter's.
// Becomes java.lang.IllegalStateException.
class SLUICE_JNI_SHARED StaleHandle : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Java strings <-> UTF-8. to_utf8(nullptr) is "". to_jstring throws JavaPending (out of memory).
SLUICE_JNI_SHARED std::string to_utf8(JNIEnv* env, jstring s);
SLUICE_JNI_SHARED jstring to_jstring(JNIEnv* env, std::string_view utf8);

inline void check_pending(JNIEnv* env) {
  if (env->ExceptionCheck()) throw JavaPending{};
}

// Call from a native method's `catch (...)` (guarded, below, does): throws the Java counterpart of the C++ exception
// being handled (StaleHandle -> IllegalStateException, sluice::Aborted -> AbortedException,
// any other exception -> SluiceException; JavaPending leaves the pending one).
SLUICE_JNI_SHARED void throw_to_java(JNIEnv* env) noexcept;

// The body of every native method (RocksDB's portal.h wraps its natives the same way):
// returns what `body()` returns; when `body` throws, the Java counterpart of the C++ exception
// is thrown (throw_to_java) and the method returns a value-initialised result (0, JNI_FALSE,
// nullptr), which Java never sees because the exception is pending.
//   JNIEXPORT jlong JNICALL Java_org_sluice_X_nY(JNIEnv* env, jclass, jlong handle) {
//     return sluice::jni::guarded(env, [&] { return ...; });
//   }
template <typename Body>
auto guarded(JNIEnv* env, Body&& body) noexcept -> std::invoke_result_t<Body&> {
  try {
    return body();
  } catch (...) {
    throw_to_java(env);
    if constexpr (!std::is_void_v<std::invoke_result_t<Body&>>) return {};
  }
}

// Call after a call into Java from C++: if a Java exception is pending, clears it and throws
// sluice::Aborted for an AbortedException, else sluice::Error whose message is the full Java
// stack trace.
void rethrow_java_exception(JNIEnv* env);

// Clears the pending Java exception, if any, and returns its toString() ("" when none was
// pending). For errors before the Java types are loaded (stack_trace needs them). Never throws.
std::string take_pending(JNIEnv* env);

// The full stack trace of `t`, as Throwable.printStackTrace writes it. Never throws.
std::string stack_trace(JNIEnv* env, jthrowable t);

// Local references made between construction and destruction are freed at destruction.
// For C++ code that calls into Java on a thread without Java frames (local references would
// otherwise live until the thread detaches).
class SLUICE_JNI_SHARED LocalFrame {
 public:
  LocalFrame(JNIEnv* env, jint capacity);
  ~LocalFrame() { env_->PopLocalFrame(nullptr); }
  LocalFrame(const LocalFrame&) = delete;
  LocalFrame& operator=(const LocalFrame&) = delete;

 private:
  JNIEnv* env_;
};

// Looks up what a native library's start-up needs from the jfilter jar. A miss throws
// sluice::Error naming what the JVM lacks (with the pending Java exception) and saying that
// the jar must match `library` (the .so doing the lookup). Classes are global references,
// owned by the caller for the rest of the process.
class SLUICE_JNI_SHARED JavaLookup {
 public:
  JavaLookup(JNIEnv* env, const char* library) : env_(env), library_(library) {}
  jclass global_class(const char* name) const;
  jmethodID method(jclass type, const char* name, const char* signature) const;
  jmethodID static_method(jclass type, const char* name, const char* signature) const;
  jfieldID field(jclass type, const char* name, const char* signature) const;
  [[noreturn]] void missing(const std::string& what) const;

 private:
  JNIEnv* const env_;
  const char* const library_;
};

}  // namespace sluice::jni

#endif  // SLUICE_JNI_JNI_UTIL_H_
