// ClientEnd: this process as the consumer of a `to: client` stream whose producers run on
// host daemons. It joins the run's data plane as the pseudo-host "client" (topo::kClient),
// with a graph that holds only the client's channel, so results arrive with the same
// credit-based flow control, run key and (with encrypt) TLS as any stream between hosts.
//
// Ownership: owns its data plane and graph; the topology and placements must outlive it.
// Thread safety: port() is read by one thread at a time (the unit's reader); abort() and
// failure() from any thread; the rest from the deploying thread.
#ifndef SLUICE_APPLICATION_CLIENT_END_H_
#define SLUICE_APPLICATION_CLIENT_END_H_

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "net/data_plane.h"
#include "runtime/engine.h"
#include "runtime/graph.h"
#include "runtime/placement.h"
#include "stream/input_port.h"
#include "sync/run_signal.h"
#include "text/port_range.h"
#include "topology/topology.h"

namespace sluice {

class ClientEnd {
 public:
  // `placements`: every host's, including topo::kClient's. `listen`: "addr:0" where the
  // hosts can reach this machine (port 0: a free one of `ports`, any when that is empty).
  // Binds at once. Throws sluice::Error.
  ClientEnd(const topo::Topology& topology, const std::map<std::string, Placement>& placements,
            const std::string& listen, const std::string& run_key, bool encrypt_all,
            const text::PortRange& ports = {});
  // Stops the data plane before the graph goes (its landed buffers come from the pools).
  ~ClientEnd();
  ClientEnd(const ClientEnd&) = delete;
  ClientEnd& operator=(const ClientEnd&) = delete;

  std::string listen_address() const { return plane_->listen_address(); }
  // Waits until every host that produces into the client stream has connected, calling
  // `between` meanwhile (DataPlane::connect).
  void connect(const std::map<std::string, std::string>& peers, std::chrono::milliseconds timeout,
               const std::function<bool()>& between = {}) {
    plane_->connect(peers, timeout, between);
  }
  InputPort& port() { return *port_; }
  // Wakes a blocked read with sluice::Aborted (the unit failed elsewhere). Stays aborted.
  void abort() { signal_.abort(); }
  // Closes the data connections (before the hosts go, so their end is not reported as a
  // loss). The graph, and any result buffer a client still holds, stay valid. Idempotent.
  void stop_network() { plane_->stop(); }
  // When this goes, keep the graph's pools in `refuge` (Graph::hand_pools_to).
  void hand_pools_to(PoolRefuge* refuge) { graph_->hand_pools_to(refuge); }
  // Adds what this process read of the client stream (consumed, time blocked, what waits
  // in its queue) to that stream's row of `streams` (one per stream, the topology's order):
  // the hosts report only their producers' share. Any thread.
  void add_share(std::vector<StreamStats>& streams) const;
  // A lost or broken connection to a producing host, named.
  std::optional<std::string> failure() const { return plane_->failure(); }

 private:
  RunSignal signal_;
  std::unique_ptr<DataPlane> plane_;
  std::unique_ptr<Graph> graph_;
  std::unique_ptr<InputPort> port_;
  std::size_t stream_index_ = 0;  // the client stream's
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_CLIENT_END_H_
