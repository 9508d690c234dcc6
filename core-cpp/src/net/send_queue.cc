#include "net/send_queue.h"

#include "net/frame.h"

namespace sluice::net {

detail::Slot* SendQueue::append(const std::byte* header, const std::byte* payload, std::uint32_t size,
                                detail::Slot* slot) {
  // What may throw (allocation) comes first, so a frame is queued whole or not at all: a
  // header left without its payload would make the peer read the next frames as payload.
  const bool copy = copies(slot, size);
  if (!copy) refs_.reserve(refs_.size() + 1);
  const std::size_t at = bytes_.size();
  bytes_.insert(bytes_.end(), header, header + kFrameHeaderSize);  // geometric growth, no zero fill
  if (copy && size > 0) {
    try {
      bytes_.insert(bytes_.end(), payload, payload + size);
    } catch (...) {
      bytes_.resize(at);
      throw;
    }
  }
  ++frames_;
  if (copy) return slot;
  refs_.push_back(Ref{at + kFrameHeaderSize, slot, 0, size});  // reserved above: does not throw
  return nullptr;
}

detail::Slot* SendQueue::prepend_rest(const std::byte* header, const std::byte* payload, std::uint32_t size,
                                      detail::Slot* slot, std::size_t done) {
  const bool copy = copies(slot, size);
  const std::size_t header_rest = done < kFrameHeaderSize ? kFrameHeaderSize - done : 0;
  const std::size_t payload_done = done > kFrameHeaderSize ? done - kFrameHeaderSize : 0;
  if (!copy) refs_.reserve(refs_.size() + 1);
  // Built aside and swapped in, so that a failed allocation leaves the queue as it was.
  std::vector<std::byte> bytes;
  bytes.reserve(header_rest + (copy ? size - payload_done : 0) + bytes_.size());
  bytes.insert(bytes.end(), header + (kFrameHeaderSize - header_rest), header + kFrameHeaderSize);
  if (copy) bytes.insert(bytes.end(), payload + payload_done, payload + size);
  const std::size_t copied = bytes.size();
  bytes.insert(bytes.end(), bytes_.begin(), bytes_.end());
  bytes_.swap(bytes);
  for (Ref& r : refs_) r.offset += copied;
  ++frames_;
  if (copy) return slot;
  refs_.insert(refs_.begin(), Ref{header_rest, slot, static_cast<std::uint32_t>(payload_done), size});  // reserved
  return nullptr;
}

void SendQueue::gather(std::vector<boost::asio::const_buffer>* out) const {
  out->clear();
  std::size_t from = 0;
  for (const Ref& r : refs_) {
    if (r.offset > from) out->emplace_back(bytes_.data() + from, r.offset - from);
    out->emplace_back(r.slot->data + r.begin, r.size - r.begin);
    from = r.offset;
  }
  if (bytes_.size() > from) out->emplace_back(bytes_.data() + from, bytes_.size() - from);
}

void SendQueue::clear() {
  for (const Ref& r : refs_) detail::release_slot(r.slot);
  refs_.clear();
  bytes_.clear();
  frames_ = 0;
}

}  // namespace sluice::net
