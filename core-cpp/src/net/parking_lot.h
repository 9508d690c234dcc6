// ParkingLot: frames of one stream that arrived when the stream's pool on this host had no
// free buffer to land them in (internal to the data plane).
//
// Buffers of a stream can all be away from its pool for as long as filters hold them:
// forwarded down a chain of filters, say, whose last reader is busy with another input.
// The frames behind them on the same connection (other streams' among them) must still be
// read, or one stream's empty pool would hold back every stream on that connection. So
// the connection reads such a frame's payload into a parking slot and goes on; once the
// pool has a free buffer again, parked frames move into pooled buffers in arrival order
// (one copy each) and land. Frames of the stream that arrive while any are parked park
// behind them, end-of-work marks included, so nothing overtakes.
//
// Bounded: a frame takes a credit, and credit comes back only when the consumer pops, so
// at most (the windows of every local consumer copy, summed over its sending hosts)
// frames are ever parked. The slots are reserved as address space when the lot is made
// and take memory only when used.
//
// Thread safety: the data plane's I/O thread only.
#ifndef SLUICE_NET_PARKING_LOT_H_
#define SLUICE_NET_PARKING_LOT_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

#include "net/frame.h"

namespace sluice::net {

class ParkingLot {
 public:
  // Room for `slots` payloads of up to `buffer_size` bytes. Throws sluice::Error when the
  // address space cannot be reserved.
  ParkingLot(std::size_t slots, std::size_t buffer_size);
  ~ParkingLot();
  ParkingLot(const ParkingLot&) = delete;
  ParkingLot& operator=(const ParkingLot&) = delete;

  bool empty() const { return parked_.empty(); }
  std::size_t size() const { return parked_.size(); }

  // A parked DATA frame: where its payload goes, and what names it to arrived().
  struct Spot {
    std::byte* payload;
    std::uint64_t ticket;
  };
  // Parks a DATA frame. The frame is not ready to unpark until arrived() says its payload is
  // all there (it may come in several reads, and meanwhile other connections may park
  // frames of the same stream behind it).
  // REQUIRES: fewer than `slots` DATA frames parked (the credit bound guarantees it).
  Spot park(const DataFrame& frame);
  // The payload of the DATA frame parked with `ticket` is complete.
  // REQUIRES: that frame is still parked (it cannot leave before it is complete).
  void arrived(std::uint64_t ticket);
  void park(const EndOfWorkFrame& frame);

  // The oldest parked frame: an END_OF_WORK (payload null) or a DATA frame and its payload.
  // `complete` is false while the payload is still being read: it must not move yet.
  struct Parked {
    bool end_of_work = false;
    bool complete = true;
    std::uint32_t consumer = 0;
    std::uint32_t producer = 0;
    std::uint64_t key = 0;
    std::uint32_t size = 0;
    const std::byte* payload = nullptr;
  };
  Parked front() const;
  // Drops the oldest parked frame (its slot is free again).
  void pop();

 private:
  struct Entry {
    bool end_of_work;
    bool complete;
    std::uint32_t consumer;
    std::uint32_t producer;
    std::uint64_t key;
    std::uint32_t size;
    std::uint32_t slot;
  };

  std::size_t stride_;
  std::size_t slots_;
  std::byte* memory_ = nullptr;  // slots_ * stride_ bytes, mapped on demand
  std::vector<std::uint32_t> free_;  // free slot indices
  std::deque<Entry> parked_;
  std::uint64_t front_ticket_ = 0;  // the ticket of parked_.front(); each park takes the next
};

}  // namespace sluice::net

#endif  // SLUICE_NET_PARKING_LOT_H_
