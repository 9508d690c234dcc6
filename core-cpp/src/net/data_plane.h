// DataPlane: the streams between processes on different hosts (the app daemon's network side).
//
// One DataPlane per process, next to one Engine. It is the Engine's StreamWiring: local
// producers write to remote consumer copies through endpoints it owns, and it lands items
// from remote producers in the local consumers' channels. Frames are described in
// net/frame.h and docs/protocol.md ("Data plane").
//
// Connections: one TCP connection per ordered pair of hosts (sender -> receiver) that have
// a stream between them, opened by the sender (net/outbound_link.h) to the receiver's
// listen address (net/inbound_link.h). Both ends prove they know the run key before
// anything else (net/handshake.h). DATA and END_OF_WORK frames flow from sender to
// receiver, CREDIT frames back on the same socket, PING both ways on a quiet connection.
// Flow control: per (stream, consumer copy, sender host), the receiver grants a window of
// frames (the consumer's queue, at least a MiB's worth: net/routes.h remote_window) and lands
// them in a pool of their own; a sender writes only with credit, so a slow
// consumer holds back only its own producers, and the receiver always reads (a frame that
// finds its stream's pool empty is parked, net/parking_lot.h), so one stream never holds
// back another. Memory stays bounded by the pools and the credit windows.
//
// Usage (the app daemon):
//   DataPlaneOptions o; o.key = run_key;                // the console's per-run secret
//   DataPlane plane(topology, placements, "a", o);      // binds, starts its I/O thread
//   ... tell the console plane.listen_address(), learn the peers' addresses ...
//   EngineOptions options; options.placement = placements["a"]; options.wiring = &plane;
//   Engine engine(topology, options);                  // calls remote_consumer, graph_ready
//                                                      // (and graph_gone, which stop()s, if it throws)
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
#include "runtime/stream_wiring.h"
#include "sluice/logger.h"
#include "text/port_range.h"
#include "topology/topology.h"

namespace sluice {


struct DataPlaneOptions {
  // Where to listen for peers: "addr:port"; port 0 picks a free one. Default: loopback.
  std::string listen = "127.0.0.1:0";
  // The ports it may listen on (sluiced --data-ports, a firewall's opening), whatever port
  // `listen` names; none free, the constructor throws. Default: `listen`'s port (0: any).
  text::PortRange ports;
  // The run key: a secret every host of the run shares (the console makes one per run and
  // sends it over the protected control channel). REQUIRED: at least 16 bytes.
  std::string key;
  // A connection on which nothing was sent for this long gets a PING. Default: 1 s.
  std::chrono::milliseconds heartbeat_interval{1000};
  // A peer from which nothing (data, credit or PING) arrived for this long is lost: the
  // run fails naming both hosts. Default: 3 s.
  std::chrono::milliseconds silence_limit{3000};
  // Every stream's data travels over TLS (keyed by `key`), not only the streams with
  // encrypt: true. Every host of a run must agree (it is part of the fingerprint).
  // Default: false.
  bool encrypt_all = false;
  // The level of the line that says the data plane failed (a peer lost, a malformed frame).
  // Default: error. The client end of an Application says debug: the unit's report carries
  // the failure to the program, whose stderr is its own.
  LogLevel failure_level = LogLevel::kError;
};

class DataPlane final : public StreamWiring {
 public:
  // `placements`: for every host name, the Placement of copies there (the whole
  // application's placement, as decided by the console). `self`: this process's host name,
  // a key of `placements`. `topology` must outlive the DataPlane. Binds the listen socket
  // and starts the I/O thread. Throws sluice::Error (cannot bind, unknown self, no key).
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
  // answer (or is missing from `peers`) within `timeout`. While it waits it calls `between`
  // (when given) every 50 ms: the caller's other duties, such as keeping its control
  // connections alive. When `between` returns false, connect gives up at once and throws.
  // REQUIRES: graph_ready() was called (construct the Engine first).
  void connect(const std::map<std::string, std::string>& peers, std::chrono::milliseconds timeout,
               const std::function<bool()>& between = {});

  // StreamWiring. The endpoints stay valid until the DataPlane is destroyed.
  Endpoint* remote_consumer(StreamRuntime& stream, int copy) override;
  std::size_t landing_room(int stream) const override;
  void graph_ready(Graph& graph) override;
  void graph_gone() noexcept override;  // stop()s: the plane cannot serve another graph

  // Set when a peer connection fails (EOF, error, protocol violation): the message names
  // the peer host and what happened. The control plane turns it into a run failure.
  std::optional<std::string> failure() const;
  // `cb` is called once, from the I/O thread, with the first failure (at once, from this
  // thread, if there already is one). It must not block or call stop().
  void set_failure_callback(std::function<void(const std::string&)> cb);

  // Connections refused before they authenticated (garbage, a wrong topology, an unknown
  // host, a wrong run key, too many at once), newest last, at most 100:
  // "connection from 127.0.0.1:41234: bad magic 0x4745 ...". They change nothing else; they
  // are logged to stderr at most once a second. Thread-safe.
  std::vector<std::string> rejected() const;

  // What the data plane holds between the copies, for the report on a run that stopped
  // moving: per connection the frames queued to send; per remote consumer copy the credit
  // left; per local consumer copy fed from elsewhere the items held back and the credit
  // each sending host still holds; per stream the frames parked. Several lines, each
  // starting with two spaces. Asks the I/O thread, and says so when it does not answer
  // within a second. Any thread.
  std::string in_flight() const;

  // Closes every connection, stops the I/O thread, and gives back every buffer the data
  // plane holds (queued for sending or landed but not yet delivered). Afterwards the
  // endpoints refuse every item. Idempotent.
  // REQUIRES: called before the Engine is destroyed (its pools must outlive those buffers).
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice

#endif  // SLUICE_NET_DATA_PLANE_H_
