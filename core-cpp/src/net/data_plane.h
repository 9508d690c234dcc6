// DataPlane: the streams between processes on different hosts (the app daemon's network side).
//
// One DataPlane per process, next to one Engine. It is the Engine's StreamWiring: local
// producers write to remote consumer copies through endpoints it owns, and it lands items
// from remote producers in the local consumers' channels. Frames are described in
// net/frame.h and docs/protocol.md ("Data plane").
//
// Connections: one TCP connection per ordered pair of hosts (sender -> receiver) that have
// a stream between them, opened by the sender to the receiver's listen address. DATA and
// END_OF_WORK frames flow from sender to receiver, CREDIT frames back on the same socket.
// Flow control: per (stream, consumer copy, sender host), the receiver grants a window of
// max(1, depth / remote producer hosts) frames; a sender writes only with credit, so a slow
// consumer holds back only its own producers and memory stays bounded by the pools.
//
// Usage (the app daemon):
//   DataPlane plane(topology, placements, "a");        // binds, starts its I/O thread
//   ... tell the console plane.listen_address(), learn the peers' addresses ...
//   EngineOptions options; options.placement = placements["a"]; options.wiring = &plane;
//   Engine engine(topology, options);                  // calls remote_consumer, graph_ready
//   plane.set_failure_callback([&](const std::string& why) { engine.cancel(why); });
//   plane.connect(peers, 5s);                          // before the first unit of work
//   ... engine.start(); run units ...
//   plane.stop();                                      // REQUIRED before ~Engine
//   (then ~Engine, then ~DataPlane)
//
// Units of work: a host may start unit k+1 only after every host has finished unit k
// (the console's barrier), because a consumer copy ends unit k when it has seen every
// upstream copy's end-of-work mark, wherever that copy runs.
//
// Thread safety: listen_address, failure and set_failure_callback are safe from any thread;
// connect and stop from one controlling thread. The endpoints are used by the Engine's
// copy threads; the I/O runs on one thread of its own.
#ifndef SLUICE_NET_DATA_PLANE_H_
#define SLUICE_NET_DATA_PLANE_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runtime/graph.h"
#include "runtime/placement.h"
#include "topology/topology.h"

namespace sluice {

namespace net {
struct DataPlaneState;  // defined in net/plane_state.h
}  // namespace net

struct DataPlaneOptions {
  // Where to listen for peers: "addr:port"; port 0 picks a free one. Default: loopback.
  std::string listen = "127.0.0.1:0";
};

class DataPlane final : public StreamWiring {
 public:
  // `placements`: for every host name, the Placement of copies there (the whole
  // application's placement, as decided by the console). `self`: this process's host name,
  // a key of `placements`. `topology` must outlive the DataPlane. Binds the listen socket
  // and starts the I/O thread. Throws sluice::Error (cannot bind, unknown self).
  DataPlane(const topo::Topology& topology, std::map<std::string, Placement> placements,
            std::string self, DataPlaneOptions options = {});
  // Calls stop().
  ~DataPlane() override;
  DataPlane(const DataPlane&) = delete;
  DataPlane& operator=(const DataPlane&) = delete;

  // The bound "addr:port" (with the real port when options.listen asked for port 0).
  std::string listen_address() const;

  // Connects to every peer host this process sends to (host -> its listen_address) and
  // waits until every peer host that sends to this process has connected here. Blocks
  // until all connections are up, or throws sluice::Error naming the host that did not
  // answer (or is missing from `peers`) within `timeout`.
  // REQUIRES: graph_ready() was called (construct the Engine first).
  void connect(const std::map<std::string, std::string>& peers, std::chrono::milliseconds timeout);

  // StreamWiring. The endpoints stay valid until the DataPlane is destroyed.
  Endpoint* remote_consumer(StreamRuntime& stream, int copy) override;
  void graph_ready(Graph& graph) override;

  // Set when a peer connection fails (EOF, error, protocol violation): the message names
  // the peer host and what happened. The control plane turns it into a run failure.
  std::optional<std::string> failure() const;
  // `cb` is called once, from the I/O thread, with the first failure (at once, from this
  // thread, if there already is one). It must not block or call stop().
  void set_failure_callback(std::function<void(const std::string&)> cb);

  // Connections refused before they identified themselves (garbage, a wrong topology, an
  // unknown host), newest last, at most 100: "127.0.0.1:41234: bad magic 0x4745 ...".
  // They change nothing else; each is also logged to stderr. Thread-safe.
  std::vector<std::string> rejected() const;

  // Closes every connection, stops the I/O thread, and gives back every buffer the data
  // plane holds (queued for sending or landed but not yet delivered). Afterwards the
  // endpoints refuse every item. Idempotent.
  // REQUIRES: called before the Engine is destroyed (its pools must outlive those buffers).
  void stop();

 private:
  std::unique_ptr<net::DataPlaneState> impl_;
};

}  // namespace sluice

#endif  // SLUICE_NET_DATA_PLANE_H_
