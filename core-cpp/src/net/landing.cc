#include "net/landing.h"

#include <algorithm>

#include "net/connection.h"
#include "net/frame.h"
#include "net/routes.h"
#include "sync/asymmetric_barrier.h"

namespace sluice::net {

Landing::Landing(const Routes& routes, const CreditReturn& links, std::uint32_t stream, std::uint32_t copy,
                 InputChannel& channel)
    : routes_(routes),
      links_(links),
      stream_(stream),
      copy_(copy),
      channel_(channel),
      batch_(std::max<std::uint32_t>(1, routes.copy_window(stream) / 2)),
      due_(routes.hosts().size(), 0),
      granted_(routes.hosts().size()),
      used_(routes.hosts().size(), 0) {}

std::uint32_t Landing::window(int host) const noexcept { return routes_.window(stream_, host); }

std::uint32_t Landing::open_window(int host) {
  const auto h = static_cast<std::size_t>(host);
  const std::uint32_t w = window(host);
  granted_[h].store(used_[h] + w, std::memory_order_release);
  return w;
}

bool Landing::take_credit(int host) {
  const auto h = static_cast<std::size_t>(host);
  if (used_[h] == granted_[h].load(std::memory_order_acquire)) return false;
  ++used_[h];
  return true;
}

void Landing::land(const Item& item) {
  // The channel's landed lane takes pushes from one thread at a time: this thread, and a
  // consumer flushing held items under mu_. This acquire, against the release in
  // flush_held_locked, orders the consumer's last push before this one; a second I/O
  // thread, or a weaker order here or there, would break that. (The lane has room for
  // every credit the sending hosts hold, so holding back is the exception.)
  if (held_count_.load(std::memory_order_acquire) == 0 && channel_.try_land(item)) return;
  std::lock_guard<std::mutex> lock(mu_);
  held_.push_back(item);
  if (held_count_.fetch_add(1, std::memory_order_seq_cst) == 0) {
    // The consumer may have popped everything between our try and now; look again. The
    // consumer stores its pop, then loads held_count_ (popped); we store held_count_, then
    // look at the channel. Without a barrier on each side both loads could run before the
    // other's store is seen: the item would stay held while the consumer sleeps on an empty
    // channel, and with the sending hosts out of credit nothing would ever move it. The
    // consumer's side is free (light_barrier); ours is a membarrier, paid only when the
    // landing starts holding back.
    heavy_barrier();
  }
  flush_held_locked();
}

void Landing::flush_held_locked() {
  while (!held_.empty() && channel_.try_land(held_.front())) {
    held_.pop_front();
    held_count_.fetch_sub(1, std::memory_order_release);  // after the push: see land()
  }
}

void Landing::popped(InputChannel&, std::uint32_t producer) noexcept {
  light_barrier();  // between the pop (a store) and this load: see land()
  if (held_count_.load(std::memory_order_acquire) != 0) {
    std::lock_guard<std::mutex> lock(mu_);
    flush_held_locked();
  }
  const int host = routes_.producer_host(stream_, producer);
  if (host == routes_.self() || host < 0) return;
  // Return credit in batches, straight from this thread (Connection::send writes inline
  // when the socket is free).
  std::uint32_t& due = due_[static_cast<std::size_t>(host)];
  if (++due < batch_) return;
  Connection* link = links_.link_from(host);
  if (link == nullptr) return;
  granted_[static_cast<std::size_t>(host)].fetch_add(due, std::memory_order_release);
  const CreditFrame credit{stream_, copy_, due};
  due = 0;
  try {
    link->send(credit);
  } catch (...) {  // out of memory: the run is failing anyway
  }
}

void Landing::release_held() {
  std::lock_guard<std::mutex> lock(mu_);
  for (const Item& item : held_) {
    if (!item.is_end_of_work()) detail::release_slot(item.slot);
  }
  held_.clear();
  held_count_.store(0);
}

}  // namespace sluice::net
