// ReceiveSide: what this host needs to take frames from other hosts (internal to the data
// plane): a Landing per local consumer copy fed from elsewhere, a ParkingLot per such
// stream, and the authenticated inbound connections by sending host.
//
// Thread safety: attach() on the Engine's thread before the I/O thread learns of it
// (mark_attached, posted); link_from() from any thread; release_held() after the I/O
// thread stopped; everything else on the I/O thread.
#ifndef SLUICE_NET_RECEIVE_SIDE_H_
#define SLUICE_NET_RECEIVE_SIDE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange
#include <vector>

#include <boost/asio.hpp>

#include "buffer/buffer_pool.h"
#include "net/landing.h"
#include "net/parking_lot.h"
#include "net/routes.h"
#include "runtime/graph.h"
#include "sync/waiter.h"

namespace sluice::net {

class InboundLink;

class ReceiveSide final : public CreditReturn {
 public:
  ReceiveSide(boost::asio::io_context& io, const Routes& routes);
  ~ReceiveSide() override;

  // Makes the landings and parking lots once the Graph (its channels and pools) exists.
  void attach(Graph& graph);
  // I/O thread: from now on frames may land (the Graph is attached); grants the initial
  // credit on every connection already claimed.
  void mark_attached();
  bool attached() const { return attached_; }

  // I/O thread: registers the authenticated connection from `host` and, once attached,
  // grants it its initial credit. False when that host is connected already.
  bool claim(int host, std::shared_ptr<InboundLink> link);
  const std::vector<std::shared_ptr<InboundLink>>& links() const { return links_; }
  Connection* link_from(int host) const noexcept override;

  // Null when consumer copy `copy` of `stream` is not fed here from another host.
  Landing* landing(std::uint32_t stream, std::uint32_t copy) const;
  ParkingLot& lot(std::uint32_t stream) { return *lots_[stream]; }
  BufferPool& pool(std::uint32_t stream) { return *graph_->streams()[stream]->pool; }
  // Lands parked frames of `stream`, oldest first, while its pool has free buffers; when
  // it runs dry, asks the pool to say when a buffer comes back (then this runs again).
  void unpark(std::uint32_t stream);

  // I/O thread: one line per stream that lands here: per local consumer copy, the items
  // held back and the credit each sending host still holds; the frames parked (for
  // DataPlane::in_flight).
  std::string in_flight() const;

  // Gives back the buffers of items held in landings. REQUIRES: the I/O thread stopped.
  void release_held();

 private:
  // Posts unpark(stream) to the I/O thread when the stream's pool gets a buffer back.
  struct UnparkWhenReleased final : Waiter::Callback {
    ReceiveSide* side = nullptr;
    std::uint32_t stream = 0;
    void run() noexcept override;
  };
  void grant_initial(int host);

  boost::asio::io_context& io_;
  const Routes& routes_;
  Graph* graph_ = nullptr;
  bool attached_ = false;  // I/O thread
  std::vector<std::vector<std::unique_ptr<Landing>>> landings_;  // [stream][copy]
  std::vector<std::unique_ptr<ParkingLot>> lots_;                  // [stream]
  std::vector<UnparkWhenReleased> unpark_;                         // [stream]
  std::vector<bool> armed_;                                        // [stream]: unpark_ armed
  std::vector<std::shared_ptr<InboundLink>> links_;                // [host]: I/O thread
  std::unique_ptr<std::atomic<Connection*>[]> raw_links_;          // [host]: for consumer threads
};

}  // namespace sluice::net

#endif  // SLUICE_NET_RECEIVE_SIDE_H_
