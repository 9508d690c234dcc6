// Graph: the streams of one application in this process, with their pools and queues.
//
// A stream owns its BufferPool (or one per local producer copy), the InputChannel of every
// consumer copy, and the Waiter
// that writers sleep on when those channels are full. The graph outlives every filter
// thread that uses it (the Engine guarantees this).
#ifndef SLUICE_RUNTIME_GRAPH_H_
#define SLUICE_RUNTIME_GRAPH_H_

#include <memory>
#include <string>
#include <vector>

#include "buffer/buffer_pool.h"
#include "buffer/pool_refuge.h"
#include "runtime/placement.h"
#include "runtime/stream_wiring.h"
#include "stream/input_channel.h"
#include "sync/waiter.h"
#include "topology/topology.h"

namespace sluice {

struct StreamRuntime {
  const topo::StreamSpec* spec = nullptr;
  int index = 0;      // position in topology.streams: the stream's id on the wire
  std::string label;  // "read.out -> count.in"
  int producer_copies = 0;  // global counts, over all processes
  int consumer_copies = 0;
  std::unique_ptr<Waiter> room;  // writers sleep here when their consumer copy is full
  // The stream's blocks in this process. When several producer copies run here, or one does
  // and frames of the stream also land from other hosts, each producer copy takes from a
  // share of its own (`shares`, by global producer copy): the only taker of its share, it
  // allocates inline and without a compare-and-swap. `pool` is then the data plane's, for
  // landing frames (its I/O thread its only taker), or one block never used.
  std::unique_ptr<BufferPool> pool;
  std::vector<std::unique_ptr<BufferPool>> shares;
  // Where producer copy `producer` (running here) takes its blocks from.
  BufferPool& pool_of(int producer) {
    const auto p = static_cast<std::size_t>(producer);
    return p < shares.size() && shares[p] != nullptr ? *shares[p] : *pool;
  }
  // Indexed by global consumer copy: the channel when that copy runs here, else null.
  std::vector<std::unique_ptr<InputChannel>> channels;
  // Indexed by global consumer copy: a local channel or the wiring's remote endpoint.
  std::vector<Endpoint*> endpoints;
};

class Graph {
 public:
  // Builds every stream of `topology` that touches a copy placed here. Consumer copies
  // elsewhere are reached through `wiring` (required when there are any). Throws
  // sluice::Error when the pools would not fit in this machine's memory.
  Graph(const topo::Topology& topology, RunSignal& signal, const Placement& placement,
        StreamWiring* wiring);
  // Empties every channel before any pool goes: a queued buffer may come from another
  // stream's pool (filters forward buffers). Then hands the pools to the refuge, if one
  // was given (hand_pools_to), else frees them.
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Keep the pools in `refuge` when this graph is destroyed, rather than freeing them: for
  // a graph whose blocks a client may still hold (buffer/pool_refuge.h). `refuge` must
  // outlive the graph.
  void hand_pools_to(PoolRefuge* refuge) { refuge_ = refuge; }

  std::vector<std::unique_ptr<StreamRuntime>>& streams() { return streams_; }
  const std::vector<std::unique_ptr<StreamRuntime>>& streams() const { return streams_; }

  // Blocks a stream's local producer copies take from (one pool, or their shares): enough
  // for every local queue to be full while each producer and consumer copy holds one more,
  // plus room for what local producers have waiting to be sent to `remote_consumers`
  // consumer copies elsewhere (a credit window each: the depth rounded up to a power of
  // two). `producers` and `consumers` count the copies in this process. What lands from
  // other hosts has a pool of its own, sized by the Graph from the wiring's credit.
  // `java_consumer`: the consumer copies are Java filters, each of which gives the blocks it
  // closes back in groups of up to kJavaCloseGroup (at its next native call): the pool has
  // that many more for each, so that the producers go on while a group waits. (At 64 KiB,
  // depth 16, a Java pair moved 1.14x the bytes with them: bench/RESULTS.md, "2026-12-11".)
  static std::size_t pool_count(const topo::StreamSpec& spec, int producers, int consumers,
                                int remote_consumers = 0, bool java_consumer = false);
  static constexpr std::size_t kJavaCloseGroup = 8;  // jni::CopyState::kMaxClosed
  // Whether `spec`'s consumer is a Java filter (pool_count's java_consumer).
  static bool java_consumer(const topo::Topology& topology, const topo::StreamSpec& spec);
  // A stream's blocks in a process that runs `placement`'s copies: for its local producer
  // and consumer copies (pool_count), and for what lands from other hosts (0 when `credit`,
  // the wiring's landing_room, is 0): that credit, plus what each local consumer copy holds
  // after its credit went back (a run and the buffer in hand; without them a consumer
  // holding those while it waits for the next frame could leave that frame parked for ever).
  static std::size_t local_blocks(const topo::Topology& topology, const topo::StreamSpec& spec,
                                  const Placement& placement);
  static std::size_t landing_blocks(const topo::Topology& topology, const topo::StreamSpec& spec,
                                    const Placement& placement, std::size_t credit);
  // The memory a pool of `blocks` of `spec`'s buffers takes, its return lanes included.
  static std::size_t pool_bytes(const topo::StreamSpec& spec, std::size_t blocks);
  // The cells of `spec`'s queues with `producers` and `consumers` copies in one process: a
  // lane of `depth` cells (a power of two) per (producer copy, consumer copy). Small for
  // narrow streams, the larger part for wide ones (1000 x 1000 copies at depth 1024: 32 GiB).
  static std::size_t lane_bytes(const topo::StreamSpec& spec, std::size_t producers, std::size_t consumers);
  // Throws sluice::Error saying what to lower when `bytes` (pools and lanes of a process)
  // exceed three quarters of this machine's memory.
  static void check_memory(std::size_t bytes);
  // For a topology that will run embedded (every copy in this process): the same check the
  // Graph makes at start, made before anything starts (sluice validate and run), so that it
  // is a topology error at the widest stream's line. Throws topo::TopologyError. Not for a
  // topology run across hosts: each app daemon checks its own share when it builds its Graph.
  static void check_embedded_memory(const topo::Topology& topology);

 private:
  std::vector<std::unique_ptr<StreamRuntime>> streams_;
  PoolRefuge* refuge_ = nullptr;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_GRAPH_H_
