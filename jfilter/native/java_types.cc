#include "java_types.h"

#include <mutex>
#include <string>

#include "jni_util.h"
#include "org_sluice_Bindings.h"
#include "org_sluice_Bridge.h"
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
    {"org/sluice/InputStream", {SLUICE_NATIVE(InputStream, nRead, "(JI)I")}},
    {"org/sluice/OutputStream",
     {SLUICE_NATIVE(OutputStream, nAllocate, "(J)J"), SLUICE_NATIVE(OutputStream, nWrite, "(JJIJZ)J"),
      SLUICE_NATIVE(OutputStream, nTryAllocate, "(J)J"),
      SLUICE_NATIVE(OutputStream, nBufferSize, "(J)I"),
      SLUICE_NATIVE(OutputStream, nStreamLabel, "(J)Ljava/lang/String;")}},
    {"org/sluice/Context",
     {SLUICE_NATIVE(Context, nInput, "(JLjava/lang/String;)J"), SLUICE_NATIVE(Context, nOutput, "(JLjava/lang/String;)J"),
      SLUICE_NATIVE(Context, nHasInput, "(JLjava/lang/String;)Z"),
      SLUICE_NATIVE(Context, nHasOutput, "(JLjava/lang/String;)Z"),
      SLUICE_NATIVE(Context, nArg, "(JLjava/lang/String;Z)Ljava/lang/String;"),
      SLUICE_NATIVE(Context, nArgLong, "(JLjava/lang/String;)J"),
      SLUICE_NATIVE(Context, nArgDouble, "(JLjava/lang/String;)D"),
      SLUICE_NATIVE(Context, nArgBoolean, "(JLjava/lang/String;)Z"),
      SLUICE_NATIVE(Context, nArgPath, "(JLjava/lang/String;)Ljava/lang/String;"),
      SLUICE_NATIVE(Context, nWorkBytes, "(J)[B")}},
    {"org/sluice/Logger", {SLUICE_NATIVE(Logger, nLog, "(Ljava/lang/String;ILjava/lang/String;)V")}},
    {"org/sluice/Bridge", {SLUICE_NATIVE(Bridge, nExitFrom, "(Ljava/lang/Thread;)V")}},
    {"org/sluice/Bindings", {SLUICE_NATIVE(Bindings, nRelease, "(J)V")}},
};

void load(JNIEnv* env) {
  const JavaLookup java(env, "libsluice_jni.so");
  JavaTypes t{};
  t.filter = java.global_class("org/sluice/Filter");
  t.context = java.global_class("org/sluice/Context");
  t.peer = java.global_class("org/sluice/Peer");
  t.buffer = java.global_class("org/sluice/Buffer");
  t.bindings = java.global_class("org/sluice/Bindings");
  t.bridge = java.global_class("org/sluice/Bridge");
  t.sluice_exception = java.global_class("org/sluice/SluiceException");
  t.aborted_exception = java.global_class("org/sluice/AbortedException");
  t.illegal_state = java.global_class("java/lang/IllegalStateException");
  t.string = java.global_class("java/lang/String");
  t.filter_init = java.method(t.filter, "init", "(Lorg/sluice/Context;)V");
  t.filter_process = java.method(t.filter, "process", "(Lorg/sluice/Context;)V");
  t.filter_finalize = java.method(t.filter, "finalize", "(Lorg/sluice/Context;)V");
  t.context_new = java.method(t.context, "<init>", "(Lorg/sluice/Peer;JLjava/lang/String;J)V");
  t.context_expire = java.method(t.context, "expire", "()V");
  t.context_drop_read_ahead = java.method(t.context, "dropReadAhead", "(Ljava/lang/String;)V");
  t.peer_new = java.method(t.peer, "<init>",
                      "(Ljava/nio/ByteBuffer;Ljava/lang/String;IILjava/lang/String;Ljava/lang/String;)V");
  t.peer_expire = java.method(t.peer, "expire", "(IJ)Z");
  t.buffer_new = java.method(t.buffer, "<init>", "(Lorg/sluice/Peer;Ljava/nio/ByteBuffer;Z)V");
  t.buffer_handle = java.field(t.buffer, "handle", "J");
  t.bindings_put = java.static_method(t.bindings, "put", "(ILjava/nio/ByteBuffer;)V");
  t.bindings_keep = java.static_method(t.bindings, "keep", "(Ljava/nio/ByteBuffer;J)V");
  t.bindings_get = java.static_method(t.bindings, "get", "(I)Ljava/nio/ByteBuffer;");
  t.bridge_check = java.static_method(t.bridge, "check", "(Ljava/lang/String;[Ljava/lang/String;[Ljava/lang/String;)Ljava/lang/String;");
  t.bridge_create = java.static_method(t.bridge, "create",
                                  "(Ljava/lang/String;[Ljava/lang/String;Ljava/lang/String;)Lorg/sluice/Filter;");
  t.bridge_stack_trace = java.static_method(t.bridge, "stackTrace", "(Ljava/lang/Throwable;)Ljava/lang/String;");
  jclass throwable = java.global_class("java/lang/Throwable");
  t.throwable_to_string = java.method(throwable, "toString", "()Ljava/lang/String;");
  env->DeleteGlobalRef(throwable);
  t.thread = java.global_class("java/lang/Thread");
  t.thread_current = java.static_method(t.thread, "currentThread", "()Ljava/lang/Thread;");
  t.bridge_watch_exit = java.static_method(t.bridge, "watchExit", "()V");

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
