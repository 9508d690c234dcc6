// CopyState: the native peer of one Java filter copy, as its native methods see it.
//
// Native methods receive only handles; they find the registry those handles belong to through
// the calling thread: the proxy filter makes its CopyState current on the copy's thread for the
// filter's whole life (one copy per thread). A call from any other thread (one the filter
// started itself, say) finds no CopyState, or another copy's registry, and gets
// IllegalStateException.
#ifndef SLUICE_JNI_COPY_STATE_H_
#define SLUICE_JNI_COPY_STATE_H_

#include <cstdint>
#include <cstring>

#include "handle_registry.h"

namespace sluice::jni {

struct CopyState {
  HandleRegistry registry;
  // Shared with the copy's Java Peer (a direct ByteBuffer over it; see org.sluice.Peer).
  // Written here before a native read/allocate returns, to describe the buffer it lends:
  // [0] int32 binding id (-1: shared block), [4] int32 size, [8] int64 key. Written by Java:
  // [16] int64 the handle of a buffer the filter closed but that is still registered here
  // (0: none), which the next native call on a stream takes back (drain_closed), so that the
  // usual read-close loop crosses into native code once a buffer, not twice.
  alignas(16) std::byte mailbox[24] = {};
  static constexpr std::size_t kClosedAt = 16;

  void post(std::int32_t binding, std::uint32_t size, std::uint64_t key) noexcept {
    std::memcpy(mailbox, &binding, 4);
    std::memcpy(mailbox + 4, &size, 4);
    std::memcpy(mailbox + 8, &key, 8);
  }

  // Returns the buffer the filter closed last, if Java left one in the mailbox, to its pool.
  // Called first by every native call that may wait (so that no closed block is kept from
  // its pool while the copy waits), and before the copy's held buffers are counted.
  void drain_closed(JNIEnv* env) {
    jlong closed;
    std::memcpy(&closed, mailbox + kClosedAt, 8);
    if (closed == 0) return;
    std::memset(mailbox + kClosedAt, 0, 8);
    registry.take_buffer(env, closed);  // the returned Buffer goes back to its pool here
  }
};

// Set by the proxy filter on its copy's thread (initial-exec TLS: one load on the hot path).
extern constinit thread_local CopyState* current_copy_state __attribute__((tls_model("initial-exec")));

// The calling thread's CopyState. Throws StaleHandle on a thread that runs no Java filter.
inline CopyState& current_copy() {
  CopyState* state = current_copy_state;
  if (state == nullptr) {
    throw StaleHandle("sluice streams and buffers can be used only on their filter's own thread, "
                      "inside init, process or finalize; hand data to other threads as Java objects");
  }
  return *state;
}

}  // namespace sluice::jni

#endif  // SLUICE_JNI_COPY_STATE_H_
