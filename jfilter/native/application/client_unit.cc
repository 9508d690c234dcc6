#include "application/client_unit.h"

#include <chrono>
#include <cstring>
#include <optional>
#include <system_error>
#include <utility>

#include "application/app_types.h"
#include "bindings.h"
#include "java_types.h"
#include "jni_util.h"
#include "jvm.h"
#include "sluice/error.h"

namespace sluice::jni {

ClientUnit::ClientUnit(JNIEnv* env, Unit unit, jobject java_unit)
    : unit_(std::move(unit)), java_(env->NewGlobalRef(java_unit)) {
  if (java_ == nullptr) throw Error("the JVM is out of memory (no global reference for a Unit)");
}

ClientUnit::~ClientUnit() {
  JNIEnv* env = nullptr;
  if (JavaVM* vm = jvm(); vm != nullptr && vm->GetEnv(reinterpret_cast<void**>(&env), JNI_VERSION_10) == JNI_OK) {
    env->DeleteGlobalRef(java_);
  }
}

jlong ClientUnit::read(JNIEnv* env, std::byte* mailbox) {
  // The Application's stop() discards, then drains what is left holding read_mu_ until the
  // unit ends (finish): a reader that comes after the discard throws now, not at that end.
  std::unique_lock<std::timed_mutex> reading(read_mu_, std::defer_lock);
  while (!reading.try_lock_for(std::chrono::milliseconds(10))) {
    std::lock_guard<std::mutex> lock(mu_);
    if (!discarded_.empty()) throw StaleHandle(discarded_);
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!discarded_.empty()) throw StaleHandle(discarded_);
    if (results_ended_) return 0;
  }
  std::optional<Buffer> buffer = unit_.results().read();
  std::lock_guard<std::mutex> lock(mu_);
  if (!discarded_.empty()) throw StaleHandle(discarded_);  // the buffer goes back to its pool
  if (!buffer) {
    results_ended_ = true;
    return 0;
  }
  const std::int32_t binding = binding_id(env, *buffer);
  const auto size = static_cast<std::uint32_t>(buffer->size());
  const std::uint64_t key = buffer->key();
  std::memcpy(mailbox, &binding, 4);
  std::memcpy(mailbox + 4, &size, 4);
  std::memcpy(mailbox + 8, &key, 8);
  return registry_.add_buffer(std::move(*buffer), binding);
}

jobject ClientUnit::shared(JNIEnv* env, jobject peer, jlong handle) {
  std::lock_guard<std::mutex> lock(mu_);
  jobject buffer = shared_buffer_object(env, peer, registry_.buffer(handle));
  jobject kept = env->NewGlobalRef(buffer);
  if (kept == nullptr) throw JavaPending{};
  registry_.keep_java(handle, kept);
  return buffer;
}

bool ClientUnit::release(JNIEnv* env, jlong handle) {
  Buffer released;  // destroyed after the lock: its pool may wake a producer
  std::lock_guard<std::mutex> lock(mu_);
  try {
    released = registry_.take_buffer(env, handle);
  } catch (const StaleHandle&) {
    return false;  // taken back already (Unit.close, Application.stop)
  }
  return reported_ && registry_.live_buffers() == 0;
}

bool ClientUnit::finish(JNIEnv* env) {
  std::optional<DetachedUnit> detached;
  {
    std::lock_guard<std::mutex> lock(mu_);
    detached = detached_;
  }
  if (detached) return report_to_java(env, detached->await_end());
  UnitReport report;
  {
    std::lock_guard<std::timed_mutex> reading(read_mu_);
    while (unit_.results().read()) {
    }
    report = unit_.wait();
  }
  return report_to_java(env, report);
}

void ClientUnit::close(JNIEnv* env, const std::string& why) {
  discard(env, why);
  detach(env);
}

void ClientUnit::detach(JNIEnv* env) {
  std::lock_guard<std::mutex> closing(detach_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (detached_) return;
  }
  try {
    DetachedUnit detached(unit_);
    std::lock_guard<std::mutex> lock(mu_);
    detached_ = std::move(detached);
  } catch (const std::system_error&) {
    end(env);  // no thread for the application's drainer: read and drop them here, waiting
  }
}

bool ClientUnit::finish_if_ended(JNIEnv* env) {
  std::optional<DetachedUnit> detached;
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (reported_) return registry_.live_buffers() == 0;
    detached = detached_;
  }
  if (!detached) return false;
  std::optional<UnitReport> report = detached->report_if_ended();
  return report && report_to_java(env, *report);
}

bool ClientUnit::report_to_java(JNIEnv* env, const UnitReport& report) {
  std::string why;
  {
    std::lock_guard<std::mutex> lock(mu_);
    results_ended_ = true;
    why = discarded_;
  }
  deliver(env, report, why);
  std::lock_guard<std::mutex> lock(mu_);
  reported_ = true;
  return registry_.live_buffers() == 0;
}

void ClientUnit::discard(JNIEnv* env, const std::string& why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!results_ended_ && discarded_.empty()) discarded_ = why;
  const JavaTypes& t = types();
  registry_.release_buffers(env, [&](std::int32_t binding, jlong handle, jobject shared) {
    // Mark the Java object released, so data() and size() throw IllegalStateException too.
    if (shared != nullptr) {
      env->SetLongField(shared, t.buffer_handle, 0);
    } else if (binding >= 0) {
      env->CallVoidMethod(java_, app_types().unit_expire, binding, handle);
      if (env->ExceptionCheck()) env->ExceptionClear();  // expire() cannot fail short of a VM error
    }
  });
}

void ClientUnit::deliver(JNIEnv* env, const UnitReport& report, const std::string& why) {
  LocalFrame frame(env, 16);
  jobject java_report = to_java(env, report);
  jstring reason = why.empty() ? nullptr : to_jstring(env, why);
  env->CallVoidMethod(java_, app_types().unit_ended, java_report, reason);
  check_pending(env);
}

}  // namespace sluice::jni
