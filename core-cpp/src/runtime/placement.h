// Placement: which copies of each filter run in this process; StreamWiring: how streams
// reach copies that run in other processes.
//
// Embedded runs place every copy here and need no wiring. An app daemon runs the copies
// the console placed on its host, and its data plane provides a StreamWiring: endpoints
// for consumer copies elsewhere, and delivery of remote producers' items into local
// channels.
#ifndef SLUICE_RUNTIME_PLACEMENT_H_
#define SLUICE_RUNTIME_PLACEMENT_H_

#include <map>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace sluice {

class Endpoint;
class Graph;
struct StreamRuntime;

struct Placement {
  // Filter name -> the global copy indices (0 .. copies-1) that run in this process.
  // A filter that is not listed runs no copy here.
  std::map<std::string, std::vector<int>> local;

  // Every copy of every filter, and the client (topo::kClient, copy 0) when a stream goes
  // `to: client`: the embedded case.
  static Placement everything(const topo::Topology& topology);
  bool runs_here(const std::string& filter, int copy) const;
  // How many copies of `filter` run here.
  int count_here(const std::string& filter) const;
};

class StreamWiring {
 public:
  virtual ~StreamWiring() = default;
  // The endpoint that producer copies in this process write to for consumer copy `copy` of
  // `stream`, which runs in another process. The wiring owns it; it must stay valid until
  // the Engine is destroyed. When it gains room (credit) it must notify *stream.room.
  virtual Endpoint* remote_consumer(StreamRuntime& stream, int copy) = 0;
  // How many buffers other hosts may have in flight to this process's consumer copies of
  // stream `stream` (its index in the topology) at once: the pool keeps that much room to
  // land them in.
  virtual std::size_t landing_room(int stream) const = 0;
  // Called once the graph is built (every local consumer channel and every pool exists),
  // before any copy runs: start delivering remote producers' items (and their end-of-work
  // marks) into the local channels, landing payloads in buffers from the stream's pool.
  virtual void graph_ready(Graph& graph) = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_PLACEMENT_H_
