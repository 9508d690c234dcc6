#include "net/remote_endpoint.h"

#include "net/frame.h"
#include "net/link.h"

namespace sluice::net {

bool RemoteEndpoint::try_push(const Item& item) noexcept {
  std::int64_t c = credits_.load(std::memory_order_acquire);
  do {
    if (c <= 0) return false;
  } while (!credits_.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel));
  FrameHeader h;
  h.flags = item.is_end_of_work() ? net::kEndOfWork : net::kData;
  h.stream = stream_;
  h.producer = item.producer;
  h.consumer = copy_;
  h.key = item.is_end_of_work() ? 0 : item.key;
  h.size = item.is_end_of_work() ? 0 : item.size;
  bool sent = false;
  try {
    sent = link_->send(h, item.slot);
  } catch (...) {  // out of memory queueing: treat as no room
  }
  if (!sent) credits_.fetch_add(1, std::memory_order_acq_rel);
  return sent;
}

}  // namespace sluice::net
