// HandleRegistry: what the Java objects of one filter copy point at, by handle.
//
// Every Java Context, InputStream, OutputStream and Buffer holds a `long` handle instead of a
// pointer. A handle packs [tag:16 | generation:24 | index:24]: `index` names an entry of this
// registry, `generation` must equal the entry's (it changes each time the entry is freed), and
// `tag` names the registry (each filter copy has its own, so a handle that wandered to another
// copy's thread is refused). resolve() checks all three before anything is touched: a stale or
// foreign handle throws StaleHandle (IllegalStateException in Java) and never reaches freed
// memory. Buffer entries own their sluice::Buffer (and, for a shared block, a global reference to
// the fresh Java Buffer made for it); the others point at objects that outlive the entry (the
// copy's Context and its ports live as long as the filter).
//
// Thread safety: none; a registry belongs to its copy's thread.
#ifndef SLUICE_JNI_HANDLE_REGISTRY_H_
#define SLUICE_JNI_HANDLE_REGISTRY_H_

#include <jni.h>

#include <cstdint>
#include <vector>

#include "jni_util.h"
#include "sluice/buffer.h"

namespace sluice::jni {

class SLUICE_JNI_SHARED HandleRegistry {
 public:
  enum class Kind : std::uint8_t { kFree, kContext, kInput, kOutput, kBuffer };

  HandleRegistry();
  HandleRegistry(const HandleRegistry&) = delete;
  HandleRegistry& operator=(const HandleRegistry&) = delete;

  // A handle for `object` (not owned). Never 0.
  jlong add(Kind kind, void* object) {
    Entry& e = allocate(kind);
    e.object = object;
    return handle_of(e);
  }
  // A handle owning `buffer`; `binding` is its block's Bindings id (-1: none).
  jlong add_buffer(Buffer&& buffer, std::int32_t binding) {
    Entry& e = allocate(Kind::kBuffer);
    e.buffer = std::move(buffer);
    e.binding = binding;
    ++live_buffers_;
    return handle_of(e);
  }

  // The object behind a live handle of `kind`. Throws StaleHandle otherwise.
  template <typename T>
  T& get(jlong handle, Kind kind) {
    return *static_cast<T*>(resolve(handle, kind).object);
  }
  Buffer& buffer(jlong handle) { return resolve(handle, Kind::kBuffer).buffer; }
  // Keeps `object` (a global reference the registry now owns) with a buffer's entry: the fresh
  // Java Buffer of a shared block, which no Peer table holds.
  void keep_java(jlong handle, jobject object) { resolve(handle, Kind::kBuffer).java = object; }

  // Removes a buffer's entry and hands its Buffer to the caller. Throws StaleHandle.
  Buffer take_buffer(JNIEnv* env, jlong handle) {
    Entry& e = resolve(handle, Kind::kBuffer);
    Buffer b = std::move(e.buffer);
    if (e.java != nullptr) env->DeleteGlobalRef(e.java);
    --live_buffers_;
    free(e);
    return b;
  }

  // Buffers the filter still holds.
  std::size_t live_buffers() const { return live_buffers_; }

  // Frees every buffer entry (their Buffers go back to their pools), calling
  // on_release(binding, handle, java) for each first; `java` (the kept reference, or null) is
  // deleted afterwards.
  template <typename F>
  void release_buffers(JNIEnv* env, F&& on_release) {
    for (Entry& e : entries_) {
      if (e.kind != Kind::kBuffer) continue;
      on_release(e.binding, handle_of(e), e.java);
      if (e.java != nullptr) env->DeleteGlobalRef(e.java);
      e.buffer.reset();
      --live_buffers_;
      free(e);
    }
  }
  // Frees every context and stream entry: their Java objects are stale from now on.
  void release_unit();

 private:
  struct Entry {
    std::uint32_t generation = 1;  // 24 bits, never 0
    std::uint32_t index = 0;
    std::uint32_t next_free = 0;   // when free: the next free index, or kNone
    Kind kind = Kind::kFree;
    std::int32_t binding = -1;
    void* object = nullptr;
    jobject java = nullptr;
    Buffer buffer;
  };
  static constexpr std::uint32_t kNone = 0xFFFFFFFF;
  static constexpr std::uint32_t kIndexBits = 24;
  static constexpr std::uint32_t kMask = (1u << kIndexBits) - 1;

  jlong handle_of(const Entry& e) const {
    return static_cast<jlong>((std::uint64_t{tag_} << 48) | (std::uint64_t{e.generation} << kIndexBits) | e.index);
  }
  Entry& resolve(jlong handle, Kind kind) {
    const auto h = static_cast<std::uint64_t>(handle);
    const auto index = static_cast<std::uint32_t>(h & kMask);
    if ((h >> 48) == tag_ && index < entries_.size()) {
      Entry& e = entries_[index];
      if (e.generation == ((h >> kIndexBits) & kMask) && e.kind == kind) return e;
    }
    throw_stale(handle, kind);
  }
  Entry& allocate(Kind kind);
  void free(Entry& e) {
    e.kind = Kind::kFree;
    e.object = nullptr;
    e.java = nullptr;
    e.binding = -1;
    e.generation = (e.generation + 1) & kMask;
    if (e.generation == 0) e.generation = 1;
    e.next_free = free_head_;
    free_head_ = e.index;
  }
  [[noreturn]] void throw_stale(jlong handle, Kind kind) const;

  std::vector<Entry> entries_;
  std::uint32_t free_head_ = kNone;
  std::size_t live_buffers_ = 0;
  const std::uint16_t tag_;
};

}  // namespace sluice::jni

#endif  // SLUICE_JNI_HANDLE_REGISTRY_H_
