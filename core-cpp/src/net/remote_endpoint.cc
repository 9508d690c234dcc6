#include "net/remote_endpoint.h"

#include "net/frame.h"
#include "net/outbound_link.h"

namespace sluice::net {

bool RemoteEndpoint::try_push(const Item& item) noexcept {
  std::int64_t c = credits_.load(std::memory_order_acquire);
  do {
    if (c <= 0) return false;
  } while (!credits_.compare_exchange_weak(c, c - 1, std::memory_order_acq_rel));
  bool sent = false;
  try {
    if (item.is_end_of_work()) {
      sent = link_->send(EndOfWorkFrame{stream_, item.producer, copy_});
    } else {
      sent = link_->send(DataFrame{stream_, item.producer, copy_, item.key, item.size}, item.slot);
    }
  } catch (...) {  // out of memory queueing: treat as no room
  }
  if (!sent) credits_.fetch_add(1, std::memory_order_acq_rel);
  return sent;
}

}  // namespace sluice::net
