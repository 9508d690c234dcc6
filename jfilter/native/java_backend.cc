// JavaBackend: `lang: java` for the runtime. This library registers it when it is loaded
// (by the runtime's dlopen, or by a JVM's System.load), so libsluice itself stays JNI-free.
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "bindings.h"
#include "java_types.h"
#include "jni_util.h"
#include "jvm.h"
#include "proxy_filter.h"
#include "runtime/language_backend.h"
#include "runtime/backends.h"
#include "sluice/error.h"

namespace sluice::jni {

namespace {

jobjectArray string_array(JNIEnv* env, const std::vector<std::string>& strings) {
  jobjectArray array = env->NewObjectArray(static_cast<jsize>(strings.size()), types().string, nullptr);
  check_pending(env);
  for (std::size_t i = 0; i < strings.size(); ++i) {
    jstring s = to_jstring(env, strings[i]);
    env->SetObjectArrayElement(array, static_cast<jsize>(i), s);
    env->DeleteLocalRef(s);
  }
  return array;
}

class JavaBackend final : public LanguageBackend {
 public:
  void prepare(const topo::Topology& topology) override {
    try {
      ensure_jvm(topology);
    } catch (const std::exception& e) {
      std::lock_guard<std::mutex> lock(mu_);
      prepare_error_ = e.what();
      throw;
    }
  }

  void check(const topo::FilterSpec& spec) override {
    if (jvm() == nullptr) {
      std::lock_guard<std::mutex> lock(mu_);
      throw Error(prepare_error_.empty() ? "the JVM was not started" : prepare_error_);
    }
    ScopedEnv scoped;
    JNIEnv* env = scoped.get();
    LocalFrame frame(env, 16);
    std::vector<std::string> arg_keys;  // for the class's @RequiredArgs
    for (const auto& [key, value] : spec.args) arg_keys.push_back(key);
    jstring problem;
    try {
      problem = static_cast<jstring>(env->CallStaticObjectMethod(types().bridge, types().bridge_check,
                                                                 to_jstring(env, spec.class_name),
                                                                 string_array(env, spec.classpath),
                                                                 string_array(env, arg_keys)));
    } catch (const JavaPending&) {
      problem = nullptr;
    }
    rethrow_java_exception(env);
    if (problem != nullptr) throw Error(to_utf8(env, problem));
  }

  std::unique_ptr<Filter> create(const topo::FilterSpec& spec) override {
    JNIEnv* env = thread_env();
    if (env == nullptr) throw Error("internal: a Java filter created on a thread that thread_started() did not attach");
    LocalFrame frame(env, 16);
    jobject filter;
    try {
      filter = env->CallStaticObjectMethod(types().bridge, types().bridge_create, to_jstring(env, spec.class_name),
                                           string_array(env, spec.classpath), to_jstring(env, "sluice " + spec.name));
    } catch (const JavaPending&) {
      filter = nullptr;
    }
    rethrow_java_exception(env);
    return std::make_unique<JavaFilter>(env, filter);
  }

  void thread_started() override { attach_thread(); }
  void thread_stopping() override { detach_thread(); }

 private:
  std::mutex mu_;  // guards prepare_error_
  std::string prepare_error_;
};

[[maybe_unused]] const bool registered = [] {
  install_binding_deleter();
  return register_backend(topo::Lang::kJava, [] { return std::make_unique<JavaBackend>(); });
}();

}  // namespace

}  // namespace sluice::jni

// Loaded by a running JVM (System.load): adopt it and register the natives.
extern "C" JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM* vm, void*) {
  JNIEnv* env = nullptr;
  if (vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) != JNI_OK) return JNI_ERR;
  try {
    sluice::jni::adopt_jvm(vm, env);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "libsluice_jni: %s\n", e.what());
    return JNI_ERR;
  }
  return JNI_VERSION_10;
}
