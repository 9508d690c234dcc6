#include "bindings.h"

#include <mutex>
#include <vector>

#include "buffer/buffer_pool.h"
#include "buffer/slot.h"
#include "java_types.h"
#include "jni_util.h"

namespace sluice::jni {

namespace {

struct Binding {
  std::int32_t id;
};

struct Ids {
  std::mutex mu;  // guards both
  std::vector<std::int32_t> free;
  std::int32_t next = 0;
};

Ids& ids() {
  static Ids* instance = new Ids();  // outlives every pool, like the JVM
  return *instance;
}

std::int32_t take_id() {
  Ids& i = ids();
  std::lock_guard<std::mutex> lock(i.mu);
  if (i.free.empty()) return i.next++;
  std::int32_t id = i.free.back();
  i.free.pop_back();
  return id;
}

void give_back(std::int32_t id) {
  Ids& i = ids();
  std::lock_guard<std::mutex> lock(i.mu);
  i.free.push_back(id);
}

void delete_binding(void* binding) {
  auto* b = static_cast<Binding*>(binding);
  give_back(b->id);
  delete b;
}

jobject new_memory(JNIEnv* env, detail::Slot* slot) {
  jobject memory = env->NewDirectByteBuffer(slot->data, static_cast<jlong>(slot->capacity));
  check_pending(env);
  return memory;
}

std::int32_t bind(JNIEnv* env, detail::Slot* slot) {
  const std::int32_t id = take_id();
  try {
    jobject memory = new_memory(env, slot);
    env->CallStaticVoidMethod(types().bindings, types().bindings_put, static_cast<jint>(id), memory);
    env->DeleteLocalRef(memory);  // Bindings holds it now
    check_pending(env);
  } catch (...) {
    give_back(id);
    throw;
  }
  auto* binding = new Binding{id};
  void* expected = nullptr;
  if (!slot->binding.compare_exchange_strong(expected, binding, std::memory_order_acq_rel)) {
    // Bound meanwhile (cannot happen for an unshared block, which only its holder touches).
    delete binding;
    give_back(id);
    return static_cast<Binding*>(expected)->id;
  }
  return id;
}

}  // namespace

std::int32_t binding_id(JNIEnv* env, const Buffer& buffer) {
  detail::Slot* slot = detail::BufferAccess::slot(buffer);
  if (slot->refs.load(std::memory_order_acquire) > 1) return -1;
  void* binding = slot->binding.load(std::memory_order_acquire);
  return binding != nullptr ? static_cast<Binding*>(binding)->id : bind(env, slot);
}

jobject shared_buffer_object(JNIEnv* env, jobject peer, const Buffer& buffer) {
  jobject memory = new_memory(env, detail::BufferAccess::slot(buffer));
  jobject object = env->NewObject(types().buffer, types().buffer_new, peer, memory, JNI_TRUE);
  env->DeleteLocalRef(memory);
  check_pending(env);
  return object;
}

void install_binding_deleter() { BufferPool::set_binding_deleter(&delete_binding); }

}  // namespace sluice::jni
