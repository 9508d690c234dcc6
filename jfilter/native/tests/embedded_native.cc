// libsluice_test_jni.so, the JUnit tests' hook into the runtime: org.sluice.Embedded.nRun
// runs a topology through the embedded runtime from the test JVM, exactly as the console runs
// it. Embedded.java lives in the test sources (jfilter/src/test) and this library in the test
// build only, so neither the jfilter jar nor libsluice_jni.so ships them.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "java_types.h"
#include "jni_util.h"
#include "jvm.h"
#include "org_sluice_Embedded.h"
#include "register_natives.h"
#include "runtime/backends.h"
#include "runtime/engine.h"
#include "topology/topology.h"

// Returns [failure, filter, copy, stage, message, (stream label, buffers)...]; the first five
// are null when every unit of work finished.
JNIEXPORT jobjectArray JNICALL Java_org_sluice_Embedded_nRun(JNIEnv* env, jclass, jstring yaml, jstring base_dir) {
  using namespace sluice;
  return jni::guarded(env, [&] {
    topo::Topology topology =
        topo::parse_topology_text(jni::to_utf8(env, yaml), "embedded.yaml", jni::to_utf8(env, base_dir));
    check_loadable(topology);
    std::optional<Failure> failure;
    std::vector<StreamStats> streams;
    {
      Engine engine(topology);
      failure = engine.start();
      for (std::size_t i = 0; i < topology.work.size() && !failure; ++i) failure = engine.run_unit(i, topology.work[i]);
      streams = engine.stream_stats();
    }
    std::vector<std::optional<std::string>> fields(5);
    if (failure) {
      fields = {failure->str(), failure->filter, std::to_string(failure->copy), failure->stage, failure->message};
    }
    for (const StreamStats& s : streams) {
      fields.emplace_back(s.label);
      fields.emplace_back(std::to_string(s.buffers));
    }
    jobjectArray out = env->NewObjectArray(static_cast<jsize>(fields.size()), jni::types().string, nullptr);
    jni::check_pending(env);
    for (std::size_t i = 0; i < fields.size(); ++i) {
      if (!fields[i]) continue;
      jstring s = jni::to_jstring(env, *fields[i]);
      env->SetObjectArrayElement(out, static_cast<jsize>(i), s);
      env->DeleteLocalRef(s);
    }
    return out;
  });
}

// Loaded by Embedded.load (System.load): adopt the test JVM for the runtime, as
// libsluice_jni's own JNI_OnLoad would (this library links it), then register nRun.
extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) != JNI_OK) return JNI_ERR;
  static const JNINativeMethod kEmbedded[] = {
      SLUICE_NATIVE(Embedded, nRun, "(Ljava/lang/String;Ljava/lang/String;)[Ljava/lang/String;")};
  try {
    sluice::jni::adopt_jvm(vm, env);
    sluice::jni::register_natives(env, "org/sluice/Embedded", kEmbedded);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libsluice_test_jni: %s\n", e.what());
    return JNI_ERR;
  }
  return JNI_VERSION_10;
}
