// DataPlaneState: what the parts of a DataPlane share (internal to src/net): the
// placement-derived tables (fixed at construction), the I/O context, the listening socket
// and the links (link.h), the endpoints (remote_endpoint.h) and landings (landing.h), and
// the failure state. Its methods set up the listening socket and the connections.
#ifndef SLUICE_NET_PLANE_STATE_H_
#define SLUICE_NET_PLANE_STATE_H_

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange
#include <vector>

#include <boost/asio.hpp>

#include "net/frame.h"
#include "net/landing.h"
#include "net/remote_endpoint.h"
#include "runtime/graph.h"
#include "runtime/placement.h"
#include "topology/topology.h"

namespace sluice {

struct DataPlaneOptions;

namespace net {

namespace asio = boost::asio;
using asio::ip::tcp;

class Link;

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
