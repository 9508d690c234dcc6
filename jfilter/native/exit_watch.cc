#include "exit_watch.h"

#include <atomic>
#include <mutex>
#include <vector>

#include "java_types.h"
#include "jni_util.h"
#include "org_sluice_Bridge.h"

namespace sluice::jni {

namespace {

struct CopyThread {
  jobject thread;                          // a global reference to its java.lang.Thread
  const crash::CopyRecord* const* record;  // where that thread keeps its current record
};

struct Watch {
  std::mutex mu;  // guards threads
  std::vector<CopyThread> threads;
  std::atomic<const crash::CopyRecord* const*> caller{nullptr};
};

Watch& watch() {
  static Watch* instance = new Watch();  // read by the exit hook: never destroyed
  return *instance;
}

// java.lang.Thread.currentThread(), or null (with no exception left pending).
jobject current_thread(JNIEnv* env) {
  jobject thread = env->CallStaticObjectMethod(types().thread, types().thread_current);
  if (env->ExceptionCheck()) {
    env->ExceptionClear();
    return nullptr;
  }
  return thread;
}

}  // namespace

void watch_exit(JNIEnv* env) {
  // Without the watch, System.exit is still reported, unnamed: a failure here is cleared.
  env->CallStaticVoidMethod(types().bridge, types().bridge_watch_exit);
  if (env->ExceptionCheck()) env->ExceptionClear();
}

void remember_copy_thread(JNIEnv* env) {
  jobject thread = current_thread(env);
  if (thread == nullptr) return;
  jobject global = env->NewGlobalRef(thread);
  env->DeleteLocalRef(thread);
  std::lock_guard<std::mutex> lock(watch().mu);
  watch().threads.push_back(CopyThread{global, crash::current_slot()});
}

void forget_copy_thread(JNIEnv* env) {
  const crash::CopyRecord* const* mine = crash::current_slot();
  std::lock_guard<std::mutex> lock(watch().mu);
  auto& threads = watch().threads;
  for (auto it = threads.begin(); it != threads.end(); ++it) {
    if (it->record == mine) {
      env->DeleteGlobalRef(it->thread);
      threads.erase(it);
      return;
    }
  }
}

const crash::CopyRecord* exit_caller() {
  const crash::CopyRecord* const* slot = watch().caller.load(std::memory_order_acquire);
  return slot != nullptr ? *slot : nullptr;
}

}  // namespace sluice::jni

JNIEXPORT void JNICALL Java_org_sluice_Bridge_nExitFrom(JNIEnv* env, jclass, jobject thread) {
  return sluice::jni::guarded(env, [&] {
    auto& w = sluice::jni::watch();
    std::lock_guard<std::mutex> lock(w.mu);
    for (const auto& t : w.threads) {
      if (env->IsSameObject(t.thread, thread)) {
        w.caller.store(t.record, std::memory_order_release);
        return;
      }
    }
  });
}
