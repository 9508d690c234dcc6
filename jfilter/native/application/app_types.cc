#include "application/app_types.h"

#include <mutex>
#include <string>
#include <vector>

#include "java_types.h"
#include "jni_util.h"
#include "org_sluice_Application.h"
#include "org_sluice_Unit.h"
#include "register_natives.h"
#include "sluice/error.h"

namespace sluice::jni {

namespace {

AppTypes loaded;
std::once_flag once;

// Checked against the classes when registered (register_natives.h).
const JNINativeMethod kApplication[] = {
    SLUICE_NATIVE(Application, nOpen,
                  "(Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;ZIZ)J"),
    SLUICE_NATIVE(Application, nName, "(J)Ljava/lang/String;"),
    SLUICE_NATIVE(Application, nRemote, "(J)Z"),
    SLUICE_NATIVE(Application, nStart, "(J)V"),
    SLUICE_NATIVE(Application, nSubmit, "(J[BLorg/sluice/Unit;)[J"),
    SLUICE_NATIVE(Application, nStop, "(JZ)V"),
    SLUICE_NATIVE(Application, nClose, "(J)V"),
    SLUICE_NATIVE(Application, nUnitsEnded, "(J)J"),
};

const JNINativeMethod kUnit[] = {
    SLUICE_NATIVE(Unit, nRead, "(JLjava/nio/ByteBuffer;)J"),
    SLUICE_NATIVE(Unit, nShared, "(JLorg/sluice/Peer;J)Lorg/sluice/Buffer;"),
    SLUICE_NATIVE(Unit, nRelease, "(JJ)V"),
    SLUICE_NATIVE(Unit, nFinish, "(J)V"),
    SLUICE_NATIVE(Unit, nResultsEnded, "(J)V"),
    SLUICE_NATIVE(Unit, nClose, "(J)V"),
    SLUICE_NATIVE(Unit, nCancel, "(J)V"),
};

void load(JNIEnv* env) {
  const JavaLookup java(env, "libsluice_application_jni.so");
  AppTypes t{};
  t.unit_report = java.global_class("org/sluice/UnitReport");
  t.unit_report_new = java.method(t.unit_report, "<init>",
                             "(JLjava/lang/String;ZDLjava/lang/String;ILjava/lang/String;Ljava/lang/String;"
                             "Ljava/lang/String;Ljava/lang/String;Ljava/lang/String;[Ljava/lang/String;[J[J[Ljava/lang/String;)V");
  jclass unit = java.global_class("org/sluice/Unit");
  t.unit_ended = java.method(unit, "ended", "(Lorg/sluice/UnitReport;Ljava/lang/String;)V");
  t.unit_expire = java.method(unit, "expire", "(IJ)V");
  env->DeleteGlobalRef(unit);
  register_natives(env, "org/sluice/Application", kApplication);
  register_natives(env, "org/sluice/Unit", kUnit);
  loaded = t;
}

}  // namespace

const AppTypes& app_types() { return loaded; }

void load_app_types(JNIEnv* env) {
  std::call_once(once, [env] { load(env); });
}

jobject to_java(JNIEnv* env, const UnitReport& report) {
  const auto n = static_cast<jsize>(report.streams.size());
  jobjectArray names = env->NewObjectArray(n, types().string, nullptr);
  check_pending(env);
  std::vector<jlong> buffers(report.streams.size());
  std::vector<jlong> bytes(report.streams.size());
  for (jsize i = 0; i < n; ++i) {
    const UnitStreamCount& s = report.streams[static_cast<std::size_t>(i)];
    jstring name = to_jstring(env, s.stream);
    env->SetObjectArrayElement(names, i, name);
    env->DeleteLocalRef(name);
    buffers[static_cast<std::size_t>(i)] = static_cast<jlong>(s.buffers);
    bytes[static_cast<std::size_t>(i)] = static_cast<jlong>(s.bytes);
  }
  jlongArray java_buffers = env->NewLongArray(n);
  check_pending(env);
  env->SetLongArrayRegion(java_buffers, 0, n, buffers.data());
  jlongArray java_bytes = env->NewLongArray(n);
  check_pending(env);
  env->SetLongArrayRegion(java_bytes, 0, n, bytes.data());
  const auto hosts = static_cast<jsize>(report.partial_counts.size());
  jobjectArray partial = env->NewObjectArray(hosts, types().string, nullptr);
  check_pending(env);
  for (jsize i = 0; i < hosts; ++i) {
    jstring host = to_jstring(env, report.partial_counts[static_cast<std::size_t>(i)]);
    env->SetObjectArrayElement(partial, i, host);
    env->DeleteLocalRef(host);
  }
  const AppTypes& t = app_types();
  jobject out = env->NewObject(t.unit_report, t.unit_report_new, static_cast<jlong>(report.index),
                               to_jstring(env, report.work), static_cast<jboolean>(report.finished),
                               static_cast<jdouble>(report.seconds), to_jstring(env, report.filter),
                               static_cast<jint>(report.copy), to_jstring(env, report.host), to_jstring(env, report.stage),
                               to_jstring(env, report.message), to_jstring(env, report.crash),
                               to_jstring(env, report.str()), names, java_buffers,
                               java_bytes, partial);
  check_pending(env);
  return out;
}

}  // namespace sluice::jni
