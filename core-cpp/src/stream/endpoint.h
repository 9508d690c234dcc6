// Endpoint: where an output sends items for one consumer copy.
//
// In one process that is the copy's InputChannel; across hosts (daemons) it is a network
// sender with credits for that copy. OutputPort sees only this interface, so policies work
// the same either way.
#ifndef SLUICE_STREAM_ENDPOINT_H_
#define SLUICE_STREAM_ENDPOINT_H_

#include <cstddef>
#include <cstdint>

#include "stream/item.h"

namespace sluice {

class Endpoint {
 public:
  virtual ~Endpoint() = default;
  // Takes the item (and the slot reference it holds) if there is room; never blocks.
  // On false the caller still owns the item. When room appears later, the endpoint
  // notifies the stream's room Waiter that the writer sleeps on.
  virtual bool try_push(const Item& item) noexcept = 0;
  // 0 when try_push from producer copy `producer` would refuse an item now, else how much
  // room the consumer copy has (a snapshot; demand_driven ranks the copies by it).
  virtual std::size_t free_room(std::uint32_t producer) const noexcept = 0;
};

}  // namespace sluice

#endif  // SLUICE_STREAM_ENDPOINT_H_
