#include "handle_registry.h"

#include <atomic>
#include <string>

#include "sluice/error.h"

namespace sluice::jni {

namespace {
std::uint16_t next_tag() {
  static std::atomic<std::uint32_t> counter{0};
  std::uint16_t tag;
  do {
    tag = static_cast<std::uint16_t>(counter.fetch_add(1, std::memory_order_relaxed) + 1);
  } while (tag == 0);  // 0 would let a handle be 0
  return tag;
}
}  // namespace

HandleRegistry::HandleRegistry() : tag_(next_tag()) { entries_.reserve(64); }

HandleRegistry::Entry& HandleRegistry::allocate(Kind kind) {
  if (free_head_ == kNone) {
    if (entries_.size() > kMask) {
      throw Error("a Java filter holds more than " + std::to_string(kMask) +
                  " buffers and streams at once; write or close buffers as you go");
    }
    Entry& e = entries_.emplace_back();
    e.index = static_cast<std::uint32_t>(entries_.size() - 1);
    e.kind = kind;
    return e;
  }
  Entry& e = entries_[free_head_];
  free_head_ = e.next_free;
  e.kind = kind;
  return e;
}

void HandleRegistry::release_unit() {
  for (Entry& e : entries_) {
    if (e.kind == Kind::kContext || e.kind == Kind::kInput || e.kind == Kind::kOutput) free(e);
  }
}

void HandleRegistry::throw_stale(jlong handle, Kind kind) const {
  if (handle == 0) throw StaleHandle("a sluice object without a handle was used (internal error)");
  const bool foreign = (static_cast<std::uint64_t>(handle) >> 48) != tag_;
  if (kind == Kind::kBuffer) {
    throw StaleHandle(foreign ? "this Buffer belongs to another filter copy; a copy can use only the buffers "
                                "it read or allocated itself"
                              : "this Buffer was already written, closed or released; a buffer is yours "
                                "from read() or allocate() until write() or close()");
  }
  const char* what = kind == Kind::kContext ? "Context" : kind == Kind::kInput ? "InputStream" : "OutputStream";
  throw StaleHandle(std::string("this ") + what +
                    (foreign ? " belongs to another filter copy; use the Context passed to this copy"
                             : " belongs to a unit of work that has ended; use the Context passed to the "
                               "current init/process/finalize and the streams it returns"));
}

}  // namespace sluice::jni
