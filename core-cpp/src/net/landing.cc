#include "net/landing.h"

#include "net/frame.h"
#include "net/link.h"
#include "net/plane_state.h"

namespace sluice::net {

void Landing::popped(InputChannel&, const Item& item) noexcept {
  if (held_count.load(std::memory_order_acquire) != 0) {
    std::lock_guard<std::mutex> lock(mu);
    flush_held_locked();
  }
  const int host = plane.producer_host[static_cast<std::size_t>(stream)][item.producer];
  if (host == plane.self || host < 0) return;
  // Return credit in batches, straight from this thread (Link::send writes inline when
  // the socket is free).
  std::uint32_t& due = to_return[static_cast<std::size_t>(host)];
  if (++due < batch) return;
  Link* link = plane.inbound_raw[static_cast<std::size_t>(host)].load(std::memory_order_acquire);
  if (link == nullptr) return;
  unused[static_cast<std::size_t>(host)].fetch_add(due, std::memory_order_acq_rel);
  FrameHeader h;
  h.flags = net::kCredit;
  h.stream = static_cast<std::uint32_t>(stream);
  h.consumer = static_cast<std::uint32_t>(copy);
  h.key = due;
  due = 0;
  try {
    link->send(h, nullptr);
  } catch (...) {  // out of memory: the run is failing anyway
  }
}

void Landing::land(const Item& item) {
  if (held_count.load(std::memory_order_acquire) == 0 && channel->try_push(item)) return;
  std::lock_guard<std::mutex> lock(mu);
  held.push_back(item);
  held_count.fetch_add(1, std::memory_order_release);
  // The consumer may have popped everything between our try and the lock: look again.
  flush_held_locked();
}

}  // namespace sluice::net
