#include "application/client_end.h"

#include <algorithm>

#include "sync/waiter.h"

namespace sluice {

ClientEnd::ClientEnd(const topo::Topology& topology, const std::map<std::string, Placement>& placements,
                     const std::string& listen, const std::string& run_key, bool encrypt_all,
                     const text::PortRange& ports) {
  DataPlaneOptions options;
  options.listen = listen;
  options.ports = ports;
  options.key = run_key;
  options.encrypt_all = encrypt_all;
  options.failure_level = LogLevel::kDebug;  // the unit's report says it
  const std::string self(topo::kClient);
  try {
    plane_ = std::make_unique<DataPlane>(topology, placements, self, options);
  } catch (const Error& e) {
    // Said apart from the hosts' data ports: this one is the submitting program's own.
    throw Error(std::string("this program's own data port, for the to: client stream: ") + e.what());
  }
  graph_ = std::make_unique<Graph>(topology, signal_, placements.at(self), plane_.get());
  plane_->graph_ready(*graph_);
  try {
    const topo::StreamSpec* stream = topology.client_stream();
    stream_index_ = static_cast<std::size_t>(stream - topology.streams.data());
    StreamRuntime& runtime = *graph_->streams()[stream_index_];
    port_ = std::make_unique<InputPort>(self, *runtime.channels[0]);
  } catch (...) {
    plane_->graph_gone();  // the members go in reverse order: the graph before the plane
    throw;
  }
}

ClientEnd::~ClientEnd() {
  plane_->stop();
  port_.reset();
  graph_.reset();
}

void ClientEnd::add_share(std::vector<StreamStats>& streams) const {
  if (stream_index_ >= streams.size()) return;
  StreamStats& row = streams[stream_index_];
  add_reads(row, *port_, Waiter::coarse_now_ns());
  add_queues(row, *graph_->streams()[stream_index_]);
  // These reads are live, the producers' count is from their hosts' last report (twice a
  // second): never show more read than written (a backlog of buffers - consumed below 0).
  row.consumed = std::min(row.consumed, row.buffers);
}

}  // namespace sluice
