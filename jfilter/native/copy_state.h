// CopyState: the native peer of one Java filter copy, as its native methods see it.
//
// Native methods receive only handles; they find the registry those handles belong to through
// the calling thread: the proxy filter makes its CopyState current on the copy's thread for the
// filter's whole life (one copy per thread). A call from any other thread (one the filter
// started itself, say) finds no CopyState, or another copy's registry, and gets
// IllegalStateException.
#ifndef SLUICE_JNI_COPY_STATE_H_
#define SLUICE_JNI_COPY_STATE_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <exception>
#include <optional>
#include <utility>
#include <vector>

#include "handle_registry.h"
#include "runtime/graph.h"

namespace sluice::jni {

struct CopyState {
  HandleRegistry registry;
  // Shared with the copy's Java Peer (a direct ByteBuffer over it; see org.sluice.Peer).
  // Written here before a native allocate returns, to describe the buffer it lends:
  // [0] int32 binding id (-1: shared block), [4] int32 size, [8] int64 key. Written by Java:
  // [16] int32 a count n, then from [24] n int64 handles of buffers the filter closed but that
  // are still registered here, which the next native call on a stream takes back
  // (drain_closed). So a loop that reads and closes crosses into native code once per batch
  // of reads (InputStream.nRead), not twice a buffer.
  // Written here before InputStream.nRead returns: from [88] the batch it read, n entries of
  // three int64s [handle, binding id << 32 | size, key], which Java copies out at once (the
  // mailbox is the copy's, the batch its stream's). Native memory, so that a read needs no
  // JNI array call: GetArrayLength and SetLongArrayRegion each cross into the VM and were
  // 11 % of a Java sink's samples (bench/RESULTS.md, "2026-12-10").
  static constexpr std::size_t kClosedCountAt = 16;
  static constexpr std::size_t kClosedAt = 24;
  static constexpr std::size_t kMaxClosed = 8;  // org.sluice.Peer.MAX_CLOSED: one read batch
  static_assert(kMaxClosed == Graph::kJavaCloseGroup, "a Java consumer's pool has room for one group of closes");
  static constexpr std::size_t kReadBatchAt = kClosedAt + 8 * kMaxClosed;  // org.sluice.Peer.READ_BATCH
  static constexpr std::size_t kMaxReadBatch = 8;  // org.sluice.InputStream.READ_AHEAD
  alignas(16) std::byte mailbox[kReadBatchAt + 3 * 8 * kMaxReadBatch] = {};

  // Buffers nRead took from an input stream but could not describe to Java (binding the
  // block failed: the JVM is out of memory), at most one per stream, with the stream's handle:
  // that stream's next nRead returns it first, so that nothing is lost or reordered
  // (jfilter/native/natives.cc). nRead makes room for one more before it takes anything off a
  // queue (make_room_to_hold_back), so that holding one back never allocates.
  std::vector<std::pair<jlong, Buffer>> held_back;

  void make_room_to_hold_back() { held_back.reserve(held_back.size() + 1); }

  // Holds `b` back for `stream`'s next read. Needs the room made above and no buffer held back
  // for `stream` already.
  void hold_back(jlong stream, Buffer b) noexcept { held_back.emplace_back(stream, std::move(b)); }

  // The buffer held back for `stream`, if any, no longer held.
  std::optional<Buffer> take_held_back(jlong stream) noexcept {
    for (auto it = held_back.begin(); it != held_back.end(); ++it) {
      if (it->first != stream) continue;
      std::optional<Buffer> b(std::move(it->second));
      held_back.erase(it);
      return b;
    }
    return std::nullopt;
  }

  // Describes entry `i` of a read batch (i < kMaxReadBatch).
  void post_read(std::size_t i, jlong handle, std::int32_t binding, std::uint32_t size, std::uint64_t key) noexcept {
    const std::int64_t described[3] = {
        handle, static_cast<std::int64_t>((std::uint64_t{static_cast<std::uint32_t>(binding)} << 32) | size),
        static_cast<std::int64_t>(key)};
    std::memcpy(mailbox + kReadBatchAt + sizeof described * i, described, sizeof described);
  }

  void post(std::int32_t binding, std::uint32_t size, std::uint64_t key) noexcept {
    std::memcpy(mailbox, &binding, 4);
    std::memcpy(mailbox + 4, &size, 4);
    std::memcpy(mailbox + 8, &key, 8);
  }

  // Returns the buffers the filter closed since the last native call, which Java left in the
  // mailbox, to their pools; every handle is tried before the first failure (a stale one: an
  // internal error) is thrown. Called first by every native call that may wait (so that no
  // closed block is kept from its pool while the copy waits), and before the copy's held
  // buffers are counted.
  void drain_closed(JNIEnv* env) {
    std::int32_t count;
    std::memcpy(&count, mailbox + kClosedCountAt, 4);
    if (count == 0) return;
    std::memset(mailbox + kClosedCountAt, 0, 4);
    const std::size_t n = count < 0 ? 0 : std::min<std::size_t>(static_cast<std::size_t>(count), kMaxClosed);
    std::exception_ptr first_failure;
    for (std::size_t i = 0; i < n; ++i) {
      jlong closed;
      std::memcpy(&closed, mailbox + kClosedAt + 8 * i, 8);
      try {
        registry.take_buffer(env, closed);  // the returned Buffer goes back to its pool here
      } catch (...) {
        if (!first_failure) first_failure = std::current_exception();
      }
    }
    if (first_failure) std::rethrow_exception(first_failure);
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
