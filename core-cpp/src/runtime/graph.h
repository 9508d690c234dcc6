// Graph: the streams of one application in this process, with their pools and queues.
//
// A stream owns its BufferPool, the InputChannel of every consumer copy, and the Waiter
// that writers sleep on when those channels are full. The graph outlives every filter
// thread that uses it (the Engine guarantees this).
#ifndef SLUICE_RUNTIME_GRAPH_H_
#define SLUICE_RUNTIME_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "buffer/buffer_pool.h"
#include "stream/input_channel.h"
#include "stream/waiter.h"
#include "topology/topology.h"

namespace sluice {

struct StreamRuntime {
  const topo::StreamSpec* spec = nullptr;
  std::string label;  // "read.out -> count.in"
  int producer_copies = 0;
  int consumer_copies = 0;
  std::unique_ptr<Waiter> room;
  std::unique_ptr<BufferPool> pool;
  std::vector<std::unique_ptr<InputChannel>> channels;  // one per consumer copy
  std::vector<Endpoint*> endpoints;                     // what producers write to
};

class Graph {
 public:
  // Builds every stream of `topology` in memory. Throws sluice::Error when the pools would
  // not fit in this machine's memory.
  Graph(const topo::Topology& topology, RunSignal& signal);
  // Empties every channel before any pool goes: a queued buffer may come from another
  // stream's pool (filters forward buffers).
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  std::vector<std::unique_ptr<StreamRuntime>>& streams() { return streams_; }
  const std::vector<std::unique_ptr<StreamRuntime>>& streams() const { return streams_; }

  // Blocks a stream's pool holds: enough for every queue to be full while each producer
  // and consumer copy holds one more.
  static std::size_t pool_count(const topo::StreamSpec& spec, int producers, int consumers);

 private:
  std::vector<std::unique_ptr<StreamRuntime>> streams_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GRAPH_H_
