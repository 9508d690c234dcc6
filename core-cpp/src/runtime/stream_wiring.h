// StreamWiring: how streams reach copies that run in other processes. Embedded runs need
// none. An app daemon's data plane (net/data_plane.h) provides one: endpoints for consumer
// copies elsewhere, and delivery of remote producers' items into local channels.
//
// Ownership: the Engine holds a pointer; the wiring must outlive it.
#ifndef SLUICE_RUNTIME_STREAM_WIRING_H_
#define SLUICE_RUNTIME_STREAM_WIRING_H_

#include <cstddef>

namespace sluice {

class Endpoint;
class Graph;
struct StreamRuntime;

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
  // Called when the Engine's construction fails after graph_ready (the copies it started are
  // stopped): the Graph may be destroyed once this returns. Stop delivering into it, and give
  // back every buffer of its pools that the wiring holds.
  virtual void graph_gone() noexcept = 0;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_STREAM_WIRING_H_
