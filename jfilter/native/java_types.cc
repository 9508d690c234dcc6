#include "java_types.h"

#include <mutex>
#include <string>

#include "jni_util.h"
#include "org_sluice_Buffer.h"
#include "org_sluice_Context.h"
#include "org_sluice_InputStream.h"
#include "org_sluice_Logger.h"
#include "org_sluice_OutputStream.h"
#include "register_natives.h"
#include "sluice/error.h"

namespace sluice::jni {

namespace {

JavaTypes loaded;
std::once_flag once;

struct NativeClass {
  const char* name;
  std::initializer_list<JNINativeMethod> methods;
};

// Checked against the classes when registered (register_natives.h).
const NativeClass kNatives[] = {
    {"org/sluice/Buffer",
     {SLUICE_NATIVE(Buffer, nClose, "(J)V"), SLUICE_NATIVE(Buffer, nShared, "(Lorg/sluice/Peer;J)Lorg/sluice/Buffer;")}},
    {"org/sluice/InputStream", {SLUICE_NATIVE(InputStream, nRead, "(J)J")}},
    {"org/sluice/OutputStream",
     {SLUICE_NATIVE(OutputStream, nAllocate, "(J)J"), SLUICE_NATIVE(OutputStream, nWrite, "(JJIJ)V"),
      SLUICE_NATIVE(OutputStream, nBufferSize, "(J)I")}},
    {"org/sluice/Context",
     {SLUICE_NATIVE(Context, nInput, "(JLjava/lang/String;)J"), SLUICE_NATIVE(Context, nOutput, "(JLjava/lang/String;)J"),
      SLUICE_NATIVE(Context, nHasInput, "(JLjava/lang/String;)Z"),
      SLUICE_NATIVE(Context, nHasOutput, "(JLjava/lang/String;)Z"),
      SLUICE_NATIVE(Context, nArg, "(JLjava/lang/String;Z)Ljava/lang/String;"),
      SLUICE_NATIVE(Context, nArgLong, "(JLjava/lang/String;)J"),
      SLUICE_NATIVE(Context, nArgDouble, "(JLjava/lang/String;)D"),
      SLUICE_NATIVE(Context, nArgBoolean, "(JLjava/lang/String;)Z"),
      SLUICE_NATIVE(Context, nArgPath, "(JLjava/lang/String;)Ljava/lang/String;")}},
    {"org/sluice/Logger", {SLUICE_NATIVE(Logger, nLog, "(Ljava/lang/String;ILjava/lang/String;)V")}},
};

// Throws sluice::Error naming what is missing, with the Java exception's description.
[[noreturn]] void missing(JNIEnv* env, const std::string& what) {
  const std::string pending = take_pending(env);
  const std::string why = pending.empty() ? "" : ": " + pending;
  throw Error("the JVM lacks " + what + why +
              "; the sluice jfilter jar on its class path must match this libsluice_jni.so (rebuild both: make)");
}

jclass global_class(JNIEnv* env, const char* name) {
  jclass local = env->FindClass(name);
  if (local == nullptr) missing(env, std::string("class ") + name);
  auto global = static_cast<jclass>(env->NewGlobalRef(local));
  env->DeleteLocalRef(local);
  return global;
}

jmethodID method(JNIEnv* env, jclass type, const char* name, const char* signature) {
  jmethodID id = env->GetMethodID(type, name, signature);
  if (id == nullptr) missing(env, std::string("method ") + name + signature);
  return id;
}

jmethodID static_method(JNIEnv* env, jclass type, const char* name, const char* signature) {
  jmethodID id = env->GetStaticMethodID(type, name, signature);
  if (id == nullptr) missing(env, std::string("static method ") + name + signature);
  return id;
}

void load(JNIEnv* env) {
  JavaTypes t{};
  t.filter = global_class(env, "org/sluice/Filter");
  t.context = global_class(env, "org/sluice/Context");
  t.peer = global_class(env, "org/sluice/Peer");
  t.buffer = global_class(env, "org/sluice/Buffer");
  t.bindings = global_class(env, "org/sluice/Bindings");
  t.bridge = global_class(env, "org/sluice/Bridge");
  t.sluice_exception = global_class(env, "org/sluice/SluiceException");
  t.aborted_exception = global_class(env, "org/sluice/AbortedException");
  t.illegal_state = global_class(env, "java/lang/IllegalStateException");
  t.string = global_class(env, "java/lang/String");
  t.filter_init = method(env, t.filter, "init", "(Lorg/sluice/Context;)V");
  t.filter_process = method(env, t.filter, "process", "(Lorg/sluice/Context;)V");
  t.filter_finalize = method(env, t.filter, "finalize", "(Lorg/sluice/Context;)V");
  t.context_new = method(env, t.context, "<init>", "(Lorg/sluice/Peer;JLjava/lang/String;J)V");
  t.context_expire = method(env, t.context, "expire", "()V");
  t.peer_new = method(env, t.peer, "<init>",
                      "(Ljava/nio/ByteBuffer;Ljava/lang/String;IILjava/lang/String;Ljava/lang/String;)V");
  t.peer_expire = method(env, t.peer, "expire", "(IJ)V");
  t.buffer_new = method(env, t.buffer, "<init>", "(Lorg/sluice/Peer;Ljava/nio/ByteBuffer;Z)V");
  t.buffer_handle = env->GetFieldID(t.buffer, "handle", "J");
  if (t.buffer_handle == nullptr) missing(env, "field org.sluice.Buffer.handle");
  t.bindings_put = static_method(env, t.bindings, "put", "(ILjava/nio/ByteBuffer;)V");
  t.bridge_check = static_method(env, t.bridge, "check", "(Ljava/lang/String;[Ljava/lang/String;)Ljava/lang/String;");
  t.bridge_create = static_method(env, t.bridge, "create",
                                  "(Ljava/lang/String;[Ljava/lang/String;Ljava/lang/String;)Lorg/sluice/Filter;");
  t.bridge_stack_trace = static_method(env, t.bridge, "stackTrace", "(Ljava/lang/Throwable;)Ljava/lang/String;");
  jclass throwable = env->FindClass("java/lang/Throwable");
  if (throwable == nullptr) missing(env, "class java/lang/Throwable");
  t.throwable_to_string = method(env, throwable, "toString", "()Ljava/lang/String;");
  env->DeleteLocalRef(throwable);

  for (const NativeClass& c : kNatives) register_natives(env, c.name, c.methods);
  loaded = t;
}

}  // namespace

const JavaTypes& types() { return loaded; }

void load_types(JNIEnv* env) {
  // call_once: a throwing load leaves the flag unset, so a later JVM attempt may retry.
  std::call_once(once, [env] { load(env); });
}

}  // namespace sluice::jni
