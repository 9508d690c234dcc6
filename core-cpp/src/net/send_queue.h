// SendQueue: the frames a data connection has yet to write, in order, as the bytes that go on
// the wire (internal to the data plane, net/connection.h).
//
// Headers, control payloads and small DATA payloads (up to kCopyMax bytes) are copied in as
// they are queued, by the thread that queues them: so the pooled buffer of a small frame
// goes home at once (when that thread is the producer copy's, from the core that filled it,
// whose cache still holds it for the next allocate), and the I/O thread writes one
// contiguous run of bytes instead of walking frames, copying payloads and releasing buffers
// one by one. A bigger payload is not copied: the queue keeps a reference to its buffer (one
// slot reference, which it owns) and where in the bytes it goes, and gather() points the
// write at the buffer itself.
//
// Queuing is all or nothing: a frame that cannot be queued (out of memory) leaves the queue as
// it was. Destroying a queue gives back the buffers it still references, so their pools must
// outlive it (the data plane closes its connections before the graph's pools go).
//
// Thread safety: none; the connection guards its queue with its lock and swaps it, whole, with
// the one its I/O thread writes from.
#ifndef SLUICE_NET_SEND_QUEUE_H_
#define SLUICE_NET_SEND_QUEUE_H_

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include <boost/asio/buffer.hpp>

#include "buffer/slot.h"

namespace sluice::net {

class SendQueue {
 public:
  // DATA payloads up to this size are copied; bigger ones are written from their buffer.
  static constexpr std::uint32_t kCopyMax = 2048;

  SendQueue() = default;
  SendQueue(const SendQueue&) = delete;
  SendQueue& operator=(const SendQueue&) = delete;
  ~SendQueue() { clear(); }

  // Queues one frame: `header` (kFrameHeaderSize bytes) and `size` payload bytes at
  // `payload`. `slot` is the payload's buffer and one reference to it (DATA), or null (a
  // control payload, copied). Returns the slot when the payload was copied: the caller
  // releases it (outside its lock). Returns null when the queue keeps it (or there is none).
  detail::Slot* append(const std::byte* header, const std::byte* payload, std::uint32_t size, detail::Slot* slot);

  // Puts the unwritten end of one frame, of which `done` bytes were written already, before
  // everything queued (a partial inline write). Same ownership as append().
  detail::Slot* prepend_rest(const std::byte* header, const std::byte* payload, std::uint32_t size,
                             detail::Slot* slot, std::size_t done);

  bool empty() const { return frames_ == 0; }
  std::size_t frames() const { return frames_; }

  // The whole queue as buffers to write, in order (pointing into this queue and into the
  // referenced buffers: valid until the queue next changes).
  void gather(std::vector<boost::asio::const_buffer>* out) const;

  // Gives back every referenced buffer and empties the queue (keeping its memory).
  void clear();

  void swap(SendQueue& other) noexcept {
    bytes_.swap(other.bytes_);
    refs_.swap(other.refs_);
    std::swap(frames_, other.frames_);
  }

 private:
  // A payload written from its buffer: it goes at `offset` in bytes_.
  struct Ref {
    std::size_t offset;
    detail::Slot* slot;  // one reference, owned
    std::uint32_t begin;  // payload bytes already written (a partial inline write)
    std::uint32_t size;
  };

  // Whether a frame's payload is copied in (else its buffer is referenced).
  static bool copies(const detail::Slot* slot, std::uint32_t size) { return slot == nullptr || size <= kCopyMax; }

  std::vector<std::byte> bytes_;
  std::vector<Ref> refs_;
  std::size_t frames_ = 0;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_SEND_QUEUE_H_
