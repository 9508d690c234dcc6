// RemoteEndpoint: the sending side of one (stream, consumer copy on another host), internal
// to the data plane (data_plane.h). It holds the credits the receiving host granted for
// that consumer copy and the OutboundLink to that host; try_push spends a credit and
// queues the frame on the link, and never blocks.
//
// Thread safety: try_push, free_room and credit from the producer copies' threads; grant and
// relink from the data plane's I/O thread.
#ifndef SLUICE_NET_REMOTE_ENDPOINT_H_
#define SLUICE_NET_REMOTE_ENDPOINT_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>

#include "stream/endpoint.h"
#include "stream/item.h"
#include "sync/waiter.h"

namespace sluice::net {

class OutboundLink;

class RemoteEndpoint final : public Endpoint {
 public:
  // `room` is notified when credit arrives; `window` is the most credit the receiver may
  // grant. `room` outlives the endpoint.
  RemoteEndpoint(std::uint32_t stream, std::uint32_t copy, std::shared_ptr<OutboundLink> link, Waiter* room,
                 std::int64_t window)
      : stream_(stream), copy_(copy), link_(std::move(link)), room_(room), window_(window) {}

  bool try_push(const Item& item) noexcept override;
  // The credit left: every producer copy here spends from the same.
  std::size_t free_room(std::uint32_t /*producer*/) const noexcept override { return credit(); }
  std::size_t credit() const noexcept {
    const std::int64_t c = credits_.load(std::memory_order_acquire);
    return c > 0 ? static_cast<std::size_t>(c) : 0;
  }
  // I/O thread: `n` more frames may be sent. False when that exceeds the window.
  bool grant(std::int64_t n) noexcept {
    const std::int64_t now = credits_.fetch_add(n, std::memory_order_acq_rel) + n;
    room_->notify();
    return now <= window_;
  }
  std::int64_t window() const { return window_; }
  // I/O thread, only while the plane connects (no producer copy sends before
  // DataPlane::connect returns): a refused handshake is retried on a new link.
  void relink(std::shared_ptr<OutboundLink> link) { link_ = std::move(link); }

 private:
  const std::uint32_t stream_;
  const std::uint32_t copy_;
  std::shared_ptr<OutboundLink> link_;
  Waiter* const room_;
  const std::int64_t window_;
  std::atomic<std::int64_t> credits_{0};
};

}  // namespace sluice::net

#endif  // SLUICE_NET_REMOTE_ENDPOINT_H_
