// DataPlaneState: what the parts of a DataPlane share (internal to src/net).
//
// RemoteEndpoint: the sender's side of one (stream, consumer copy on another host).
// Landing: the receiver's side of one local consumer channel that remote producers write to.
// DataPlaneState: the placement-derived tables (fixed at construction), the I/O context,
// the links, the endpoints and landings, and the failure state.
#ifndef SLUICE_NET_PLANE_STATE_H_
#define SLUICE_NET_PLANE_STATE_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <boost/asio.hpp>

#include "net/frame.h"
#include "runtime/graph.h"
#include "runtime/placement.h"
#include "stream/endpoint.h"
#include "stream/input_channel.h"
#include "stream/item.h"
#include "topology/topology.h"

namespace sluice {

struct DataPlaneOptions;

namespace net {

namespace asio = boost::asio;
using asio::ip::tcp;

class Link;
struct DataPlaneState;

// Sender side of one (stream, consumer copy on another host): credits and a connection.
// try_push takes a credit and queues the frame on the link (never blocks).
class RemoteEndpoint final : public Endpoint {
 public:
  RemoteEndpoint(std::uint32_t stream, std::uint32_t copy, std::shared_ptr<Link> link, Waiter* room,
                 std::int64_t window)
      : stream_(stream), copy_(copy), link_(std::move(link)), room_(room), window_(window) {}

  bool try_push(const Item& item) noexcept override;
  std::size_t free_room() const noexcept override {
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

 private:
  const std::uint32_t stream_;
  const std::uint32_t copy_;
  const std::shared_ptr<Link> link_;
  Waiter* const room_;
  const std::int64_t window_;
  std::atomic<std::int64_t> credits_{0};
};

// Receiver side of one local consumer channel that remote producers write to: lands their
// items, holds back what the channel has no room for, and returns credit as the consumer
// pops.
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

struct DataPlaneState {
  DataPlaneState(const topo::Topology& t, std::map<std::string, Placement> p, std::string self_name,
                 DataPlaneOptions o);

  // Topology and placement, fixed at construction.
  const topo::Topology& topology;
  std::map<std::string, Placement> placements;
  std::vector<std::string> hosts;  // sorted names; indices below refer to this
  int self = -1;
  std::uint64_t fingerprint = 0;
  net::FrameDecoder decoder{{}};
  std::vector<std::vector<int>> producer_host;  // [stream][producer copy] -> host
  std::vector<std::vector<int>> consumer_host;  // [stream][consumer copy] -> host
  std::vector<std::vector<bool>> host_produces;  // [stream][host]
  std::vector<std::vector<std::uint32_t>> window;  // [stream][consumer copy]: credits per sender host
  std::vector<bool> sends_to_me;                 // [host]
  std::vector<bool> receives_from_me;            // [host]

  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work;
  tcp::acceptor acceptor;
  std::string address;
  std::thread thread;

  // Set up before the I/O thread uses them; then only the I/O thread changes the links.
  std::vector<std::shared_ptr<Link>> outbound;  // [host]: the link this host sends on
  std::vector<std::shared_ptr<Link>> inbound;   // [host]: the identified link it sends on
  std::set<std::shared_ptr<Link>> unidentified;
  std::vector<std::vector<std::unique_ptr<RemoteEndpoint>>> endpoints;  // [stream][copy]
  std::vector<std::vector<std::unique_ptr<Landing>>> landings;          // [stream][copy]
  Graph* graph = nullptr;  // set by graph_ready, before the I/O thread looks at it
  bool graph_ready_io = false;            // I/O thread
  std::vector<bool> granted;              // [host]: initial credits sent; I/O thread
  std::unique_ptr<std::atomic<Link*>[]> inbound_raw;  // [host]: inbound[host], for the consumer threads
  std::atomic<bool> stopping{false};
  bool give_up_connecting = false;  // I/O thread

  mutable std::mutex mu;  // guards everything below
  std::condition_variable changed;
  std::optional<std::string> failure;
  std::function<void(const std::string&)> callback;
  std::vector<std::string> rejected;
  std::vector<bool> out_up;              // [host]: HELLO answered
  std::vector<bool> in_up;               // [host]: HELLO received
  std::vector<std::string> out_error;    // [host]: why the last connection attempt failed
  bool stopped = false;

  std::string host_label(int host) const { return "host '" + hosts[static_cast<std::size_t>(host)] + "'"; }
  int host_index(const std::string& name) const {
    auto it = std::lower_bound(hosts.begin(), hosts.end(), name);
    return it != hosts.end() && *it == name ? static_cast<int>(it - hosts.begin()) : -1;
  }

  void fail(const std::string& message);
  void reject(const std::string& message);
  void mark_up(bool outbound_side, int host);
  void do_accept();
  void start_outbound(int host, const std::string& address);
  // I/O thread.
  void grant_initial(int host);
  // The landing for (stream, copy) or null.
  Landing* landing(std::uint32_t stream, std::uint32_t copy) {
    if (stream >= landings.size() || copy >= landings[stream].size()) return nullptr;
    return landings[stream][copy].get();
  }
};

}  // namespace net
}  // namespace sluice

#endif  // SLUICE_NET_PLANE_STATE_H_
