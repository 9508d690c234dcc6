#include "bindings.h"

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "buffer/buffer_pool.h"
#include "buffer/slot.h"
#include "java_types.h"
#include "jni_util.h"
#include "org_sluice_Bindings.h"

namespace sluice::jni {

namespace {

// A slot's `binding` is its block's id itself, as a non-null token (id + 1), not a pointer to
// an object holding it: every buffer that crosses into Java needs the id, and following a
// pointer to a separate allocation missed the cache on nearly every one (binding_id was 13 % of
// a Java forward's samples in a graph across two daemons).
void* token_of(std::int32_t id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id) + 1); }
std::int32_t id_of(void* token) { return static_cast<std::int32_t>(reinterpret_cast<std::uintptr_t>(token) - 1); }

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

void delete_binding(void* binding) { give_back(id_of(binding)); }

// A direct ByteBuffer over the block, which keeps the pool's memory mapped for as long as it
// (or any view made from it: a duplicate, a slice) is reachable: Bindings.keep gives it a share
// of the memory that a Cleaner lets go of once the ByteBuffer is garbage. A view kept past its
// buffer, or past the pool (an Application closed), then reads stale bytes or zeros instead of
// crashing the JVM (DESIGN.md: a stale handle is an exception, never a crash).
jobject new_memory(JNIEnv* env, detail::Slot* slot) {
  jobject memory = env->NewDirectByteBuffer(slot->data, static_cast<jlong>(slot->capacity));
  check_pending(env);
  if (slot->pool == nullptr) return memory;
  auto* share = new std::shared_ptr<const void>(slot->pool->share_memory());
  env->CallStaticVoidMethod(types().bindings, types().bindings_keep, memory, reinterpret_cast<jlong>(share));
  if (env->ExceptionCheck()) {
    delete share;  // not kept: the Cleaner was not registered
    env->DeleteLocalRef(memory);
    check_pending(env);
  }
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
  void* expected = nullptr;
  if (!slot->binding.compare_exchange_strong(expected, token_of(id), std::memory_order_acq_rel)) {
    // Bound meanwhile (cannot happen for an unshared block, which only its holder touches).
    give_back(id);
    return id_of(expected);
  }
  return id;
}

}  // namespace

std::int32_t binding_id(JNIEnv* env, const Buffer& buffer) {
  detail::Slot* slot = detail::BufferAccess::slot(buffer);
  if (slot->refs.load(std::memory_order_acquire) > 1) return -1;
  void* binding = slot->binding.load(std::memory_order_acquire);
  return binding != nullptr ? id_of(binding) : bind(env, slot);
}

jobject shared_buffer_object(JNIEnv* env, jobject peer, const Buffer& buffer) {
  // The block's own ByteBuffer (made once per block, as an unshared one's), which this holder's
  // fresh Buffer sees read-only: no ByteBuffer, share of the memory or Cleaner per read. Its
  // holders may bind it at once from several threads: bind() keeps one id.
  detail::Slot* slot = detail::BufferAccess::slot(buffer);
  void* binding = slot->binding.load(std::memory_order_acquire);
  const std::int32_t id = binding != nullptr ? id_of(binding) : bind(env, slot);
  jobject memory = env->CallStaticObjectMethod(types().bindings, types().bindings_get, static_cast<jint>(id));
  check_pending(env);
  jobject object = env->NewObject(types().buffer, types().buffer_new, peer, memory, JNI_TRUE);
  env->DeleteLocalRef(memory);
  check_pending(env);
  return object;
}

void install_binding_deleter() { BufferPool::set_binding_deleter(&delete_binding); }

}  // namespace sluice::jni

// Bindings' Cleaner, once a block's ByteBuffer and every view of it are garbage: lets go of
// the share of the pool's memory that new_memory gave it (the last share unmaps it).
JNIEXPORT void JNICALL Java_org_sluice_Bindings_nRelease(JNIEnv*, jclass, jlong share) {
  delete reinterpret_cast<std::shared_ptr<const void>*>(share);
}
