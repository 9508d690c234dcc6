// HandleTable: the native objects that Java Application and Unit objects name by handle.
//
// A handle is an id from a 64-bit counter that never repeats, so the handle of an object that
// was removed names nothing: a stale handle is a lookup that fails (the caller turns that into
// IllegalStateException or a no-op), never freed memory. find() returns a shared_ptr, which
// keeps the object alive for the rest of the call even when another thread removes it meanwhile
// (Application.close() on one thread while Unit.read() returns on another).
//
// Thread safety: every method may be called from any thread.
#ifndef SLUICE_JNI_APPLICATION_HANDLE_TABLE_H_
#define SLUICE_JNI_APPLICATION_HANDLE_TABLE_H_

#include <jni.h>

#include <memory>
#include <mutex>
#include <unordered_map>

namespace sluice::jni {

template <typename T>
class HandleTable {
 public:
  // A new handle (never 0, never seen before) for `object`.
  jlong add(std::shared_ptr<T> object) {
    std::lock_guard<std::mutex> lock(mu_);
    const jlong handle = next_++;
    objects_.emplace(handle, std::move(object));
    return handle;
  }

  // The object, or null when the handle was removed (or never made).
  std::shared_ptr<T> find(jlong handle) const {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = objects_.find(handle);
    return found == objects_.end() ? nullptr : found->second;
  }

  // Forgets the handle. Returns the object (null if already gone), so that the caller decides
  // where it is destroyed: outside this table's lock, on a thread with a JNIEnv.
  std::shared_ptr<T> remove(jlong handle) {
    std::lock_guard<std::mutex> lock(mu_);
    auto found = objects_.find(handle);
    if (found == objects_.end()) return nullptr;
    std::shared_ptr<T> object = std::move(found->second);
    objects_.erase(found);
    return object;
  }

 private:
  mutable std::mutex mu_;  // guards both
  std::unordered_map<jlong, std::shared_ptr<T>> objects_;
  jlong next_ = 1;
};

}  // namespace sluice::jni

#endif  // SLUICE_JNI_APPLICATION_HANDLE_TABLE_H_
