// Landing: the receiving side of one local consumer channel that producers on other hosts
// write to, internal to the data plane (data_plane.h). The I/O thread lands their items in
// the channel, holding back (in arrival order) what it has no room for; as the consumer
// copy pops, the landing delivers what it held and returns credit to the sending hosts in
// batches.
//
// Thread safety: land from the I/O thread; popped from the consumer copy's thread;
// release_held after the I/O thread stopped. `held` is guarded by `mu`.
#ifndef SLUICE_NET_LANDING_H_
#define SLUICE_NET_LANDING_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <mutex>
#include <vector>

#include "stream/input_channel.h"
#include "stream/item.h"

namespace sluice::net {

struct DataPlaneState;

struct Landing final : InputChannel::PopObserver {
  Landing(DataPlaneState& plane, int stream, int copy, InputChannel* channel, std::size_t hosts,
          std::uint32_t batch)
      : plane(plane), stream(stream), copy(copy), channel(channel), to_return(hosts, 0), unused(hosts),
        batch(batch) {}

  void popped(InputChannel& channel, const Item& item) noexcept override;
  // I/O thread: delivers an item (never blocks).
  void land(const Item& item);
  void flush_held_locked() {
    while (!held.empty() && channel->try_push(held.front())) {
      held.pop_front();
      held_count.fetch_sub(1, std::memory_order_release);
    }
  }
  void release_held() {
    std::lock_guard<std::mutex> lock(mu);
    for (const Item& item : held) {
      if (!item.is_end_of_work()) detail::release_slot(item.slot);
    }
    held.clear();
    held_count.store(0);
  }

  DataPlaneState& plane;
  const int stream;
  const int copy;
  InputChannel* const channel;
  std::mutex mu;           // guards held
  std::deque<Item> held;   // arrived while the channel was full, in arrival order (<= credits)
  std::atomic<std::size_t> held_count{0};
  // Per sender host: items popped whose credit is not yet returned. Consumer thread only.
  std::vector<std::uint32_t> to_return;
  // Per sender host: credits that host holds (granted - received). The consumer thread
  // adds when it returns credit, the I/O thread takes one per frame received.
  std::vector<std::atomic<std::uint32_t>> unused;
  const std::uint32_t batch;  // return credit when this many are due
};

}  // namespace sluice::net

#endif  // SLUICE_NET_LANDING_H_
