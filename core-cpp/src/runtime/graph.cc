#include "runtime/graph.h"

#include <unistd.h>

#include "topology/size.h"

namespace sluice {

std::size_t Graph::pool_count(const topo::StreamSpec& spec, int producers, int consumers) {
  return spec.depth * static_cast<std::size_t>(consumers) + static_cast<std::size_t>(producers) +
         static_cast<std::size_t>(consumers);
}

Graph::Graph(const topo::Topology& topology, RunSignal& signal) {
  // Check the memory first, so an absurd topology fails before allocating anything.
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const std::size_t physical = pages > 0 && page_size > 0
                                   ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size)
                                   : 0;
  std::size_t total = 0;
  for (const topo::StreamSpec& spec : topology.streams) {
    const int producers = topology.find_filter(spec.from.filter)->copies;
    const int consumers = topology.find_filter(spec.to.filter)->copies;
    total += pool_count(spec, producers, consumers) * spec.buffer_size;
  }
  if (physical != 0 && total > physical / 4 * 3) {
    throw Error("the streams' buffer pools need " + topo::format_size(total) + " but this machine has " +
                topo::format_size(physical) + "; lower buffer_size or depth (each stream's pool holds "
                "depth x consumer copies + producer copies + consumer copies buffers)");
  }

  for (const topo::StreamSpec& spec : topology.streams) {
    auto stream = std::make_unique<StreamRuntime>();
    stream->spec = &spec;
    stream->label = spec.from.str() + " -> " + spec.to.str();
    stream->producer_copies = topology.find_filter(spec.from.filter)->copies;
    stream->consumer_copies = topology.find_filter(spec.to.filter)->copies;
    stream->room = std::make_unique<Waiter>(signal);
    stream->pool = std::make_unique<BufferPool>(
        stream->label, spec.buffer_size,
        pool_count(spec, stream->producer_copies, stream->consumer_copies), signal);
    for (int c = 0; c < stream->consumer_copies; ++c) {
      stream->channels.push_back(std::make_unique<InputChannel>(spec.depth, stream->producer_copies,
                                                                signal, *stream->room));
      stream->endpoints.push_back(stream->channels.back().get());
    }
    streams_.push_back(std::move(stream));
  }
}

Graph::~Graph() {
  for (auto& stream : streams_) {
    stream->endpoints.clear();
    stream->channels.clear();
  }
}

}  // namespace sluice
