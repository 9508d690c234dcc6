// org.sluice.Embedded.nRun: runs a topology through the embedded runtime from a JVM that loaded
// this library (the JUnit tests), exactly as the console runs it.
#include <optional>
#include <string>
#include <vector>

#include "java_types.h"
#include "jni_util.h"
#include "org_sluice_Embedded.h"
#include "runtime/backends.h"
#include "runtime/engine.h"
#include "topology/topology.h"

// Returns [failure, filter, copy, stage, message, (stream label, buffers)...]; the first five
// are null when every unit of work finished.
JNIEXPORT jobjectArray JNICALL Java_org_sluice_Embedded_nRun(JNIEnv* env, jclass, jstring yaml, jstring base_dir) {
  using namespace sluice;
  try {
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
  } catch (...) {
    jni::throw_to_java(env);
    return nullptr;
  }
}
