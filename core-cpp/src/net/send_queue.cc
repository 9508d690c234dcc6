#include "net/send_queue.h"

#include <algorithm>
#include <cstring>

#include "net/frame.h"

namespace sluice::net {

detail::Slot* SendQueue::append(const std::byte* header, const std::byte* payload, std::uint32_t size,
                                detail::Slot* slot) {
  const bool copy = slot == nullptr || size <= kCopyMax;
  const std::size_t at = bytes_.size();
  bytes_.resize(at + kFrameHeaderSize + (copy ? size : 0));
  std::memcpy(bytes_.data() + at, header, kFrameHeaderSize);
  ++frames_;
  if (!copy) {
    refs_.push_back(Ref{at + kFrameHeaderSize, slot, 0, size});
    return nullptr;
  }
  if (size > 0) std::memcpy(bytes_.data() + at + kFrameHeaderSize, payload, size);
  return slot;
}

detail::Slot* SendQueue::prepend_rest(const std::byte* header, const std::byte* payload, std::uint32_t size,
                                      detail::Slot* slot, std::size_t done) {
  const bool copy = slot == nullptr || size <= kCopyMax;
  const std::size_t header_rest = done < kFrameHeaderSize ? kFrameHeaderSize - done : 0;
  const std::size_t payload_done = done > kFrameHeaderSize ? done - kFrameHeaderSize : 0;
  const std::size_t copied = header_rest + (copy ? size - payload_done : 0);
  bytes_.insert(bytes_.begin(), copied, std::byte{0});
  std::memcpy(bytes_.data(), header + (kFrameHeaderSize - header_rest), header_rest);
  if (copy && size > payload_done) std::memcpy(bytes_.data() + header_rest, payload + payload_done, size - payload_done);
  for (Ref& r : refs_) r.offset += copied;
  ++frames_;
  if (!copy) {
    refs_.insert(refs_.begin(), Ref{header_rest, slot, static_cast<std::uint32_t>(payload_done), size});
    return nullptr;
  }
  return slot;
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

void SendQueue::release_all() {
  for (const Ref& r : refs_) detail::release_slot(r.slot);
  refs_.clear();
  bytes_.clear();
  frames_ = 0;
}

}  // namespace sluice::net
