// Landing: the receiving end of one local consumer copy's channel for frames from other
// hosts (internal to the data plane). The I/O thread lands items in the channel's landed
// lane (InputChannel::attach_landing, sized for all the credit the sending hosts hold),
// holding back (in arrival order) what it has no room for; as the consumer copy pops,
// the landing moves held items in and returns credit to the sending hosts in batches.
//
// Credit: each sending host holds at most its window (Routes::window: one producer copy's
// for each of its copies) of frames for this copy that it has not been given credit back
// for; a frame beyond that is a protocol violation. Credit comes
// back when the consumer pops, so a host can never have more frames in flight, held or
// parked (net/parking_lot.h) here than its window.
//
// Thread safety: take_credit, open_window and land on the I/O thread; popped on the
// consumer copy's thread; release_held after the I/O thread stopped.
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

class Connection;
class Routes;

// Where a landing finds the connection that brings a host's frames (to return credit).
class CreditReturn {
 public:
  virtual ~CreditReturn() = default;
  // The authenticated connection from `host`, or null. Any thread.
  virtual Connection* link_from(int host) const noexcept = 0;
};

class Landing final : public InputChannel::PopObserver {
 public:
  // `channel` belongs to the Graph and outlives the landing.
  Landing(const Routes& routes, const CreditReturn& links, std::uint32_t stream, std::uint32_t copy,
          InputChannel& channel);

  // I/O thread: gives `host` its whole window; returns it (the initial CREDIT).
  std::uint32_t open_window(int host);
  // I/O thread: a frame from `host` arrived; false when that host had no credit left.
  bool take_credit(int host);
  // I/O thread: delivers an item (never blocks).
  void land(const Item& item);

  void popped(InputChannel& channel, std::uint32_t producer) noexcept override;
  // For DataPlane::in_flight. Items held back (any thread, a snapshot); credit `host`
  // still holds for this copy (I/O thread).
  std::size_t held() const noexcept { return held_count_.load(std::memory_order_acquire); }
  std::uint32_t credit_left(int host) const noexcept {
    const auto h = static_cast<std::size_t>(host);
    return granted_[h].load(std::memory_order_acquire) - used_[h];
  }
  // `host`'s window for this copy (Routes::window).
  std::uint32_t window(int host) const noexcept;
  // Gives back the buffers of held items. REQUIRES: the I/O thread has stopped.
  void release_held();

 private:
  void flush_held_locked();

  const Routes& routes_;
  const CreditReturn& links_;
  const std::uint32_t stream_;
  const std::uint32_t copy_;
  InputChannel& channel_;
  const std::uint32_t batch_;  // return credit when this many are due: half a copy's window

  std::mutex mu_;           // guards held_
  std::deque<Item> held_;   // arrived while the channel was full, in arrival order
  std::atomic<std::size_t> held_count_{0};
  // Per sending host: items popped whose credit is not yet returned. Consumer thread only.
  std::vector<std::uint32_t> due_;
  // Per sending host: credits granted so far (the window, then what the consumer thread
  // returned) and frames that used one (I/O thread only). Two counters rather than one
  // that both threads change: a frame then costs the I/O thread a load of a line the
  // consumer writes once per batch, not a locked read-modify-write on it. Both wrap; only
  // their difference (at most the window) counts.
  std::vector<std::atomic<std::uint32_t>> granted_;
  std::vector<std::uint32_t> used_;
};

}  // namespace sluice::net

#endif  // SLUICE_NET_LANDING_H_
