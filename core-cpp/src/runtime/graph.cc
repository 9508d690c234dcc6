#include "runtime/graph.h"

#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <vector>

#include "stream/input_port.h"
#include "topology/size.h"

namespace sluice {

std::size_t Graph::pool_count(const topo::StreamSpec& spec, int producers, int consumers, int remote_consumers,
                              bool java_consumer) {
  const auto depth = spec.depth;
  const auto p = static_cast<std::size_t>(producers);
  const auto c = static_cast<std::size_t>(consumers);
  const auto rc = static_cast<std::size_t>(remote_consumers);
  const std::size_t held_by_each = 1 + (java_consumer ? std::min(kJavaCloseGroup, depth) : 0);
  return depth * c + p + held_by_each * c + (p > 0 ? std::bit_ceil(depth) * rc : 0);
}

bool Graph::java_consumer(const topo::Topology& topology, const topo::StreamSpec& spec) {
  const topo::FilterSpec* to = topology.find_filter(spec.to.filter);
  return to != nullptr && to->lang == topo::Lang::kJava;
}

std::size_t Graph::local_blocks(const topo::Topology& topology, const topo::StreamSpec& spec,
                                 const Placement& placement) {
  const int producers = placement.count_here(spec.from.filter);
  const int consumers = placement.count_here(spec.to.filter);
  return pool_count(spec, producers, consumers, topology.copies_of(spec.to.filter) - consumers,
                    java_consumer(topology, spec));
}

std::size_t Graph::landing_blocks(const topo::Topology& topology, const topo::StreamSpec& spec,
                                  const Placement& placement, std::size_t credit) {
  if (credit == 0) return 0;
  const auto consumers = static_cast<std::size_t>(placement.count_here(spec.to.filter));
  // A Java consumer copy also holds up to kJavaCloseGroup closed blocks until its next native
  // call (as in pool_count). Where a producer copy runs here the landing has a pool of its
  // own, which needs room for them too; where none does, the landing's pool is the stream's
  // one, whose local part (pool_count) already has it.
  const bool own_pool = placement.count_here(spec.from.filter) > 0;
  const std::size_t closing = own_pool && java_consumer(topology, spec) ? std::min(kJavaCloseGroup, spec.depth) : 0;
  return credit + consumers * (std::min<std::size_t>(InputPort::kRun, spec.depth) + 1 + closing);
}

std::size_t Graph::pool_bytes(const topo::StreamSpec& spec, std::size_t blocks) {
  // The blocks, and the most their pool's return lanes can take (buffer/return_lanes.h).
  return blocks * spec.buffer_size + ReturnLanes::bytes_at_most(blocks);
}

std::size_t Graph::lane_bytes(const topo::StreamSpec& spec, std::size_t producers, std::size_t consumers) {
  const std::size_t cells = std::bit_ceil(std::max<std::size_t>(spec.depth, 2));
  return producers * consumers * cells * sizeof(detail::QueueCell);
}

void Graph::check_memory(std::size_t total) {
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  const std::size_t physical = pages > 0 && page_size > 0
                                   ? static_cast<std::size_t>(pages) * static_cast<std::size_t>(page_size)
                                   : 0;
  if (physical != 0 && total > physical / 4 * 3) {
    throw Error("the streams' buffer pools and queues need " + topo::format_size_rounded(total) +
                " but this machine has " + topo::format_size_rounded(physical) + "; lower buffer_size or depth, or the copies of wide streams (each "
                "stream's pool holds depth x consumer copies + producer copies + consumer copies buffers, and " +
                std::to_string(kJavaCloseGroup) + " more for each Java consumer copy; its queues hold depth cells "
                "of " + std::to_string(sizeof(detail::QueueCell)) + " B per producer copy and consumer copy)");
  }
}

void Graph::check_embedded_memory(const topo::Topology& topology) {
  if (topology.streams.empty()) return;
  std::size_t total = 0;
  const topo::StreamSpec* widest = &topology.streams.front();
  std::size_t widest_bytes = 0;
  for (const topo::StreamSpec& s : topology.streams) {
    const int producers = topology.copies_of(s.from.filter);
    const int consumers = topology.copies_of(s.to.filter);
    const std::size_t bytes =
        pool_bytes(s, pool_count(s, producers, consumers, 0, java_consumer(topology, s))) +
        lane_bytes(s, static_cast<std::size_t>(producers), static_cast<std::size_t>(consumers));
    total += bytes;
    if (bytes > widest_bytes) {
      widest_bytes = bytes;
      widest = &s;
    }
  }
  try {
    check_memory(total);
  } catch (const std::exception& e) {
    throw topo::TopologyError({{topology.file, widest->mark,
                                std::string(e.what()) + "; the largest is " + widest->label() + " (" +
                                    topo::format_size_rounded(widest_bytes) + ")"}});
  }
}

Graph::Graph(const topo::Topology& topology, RunSignal& signal, const Placement& placement,
             StreamWiring* wiring) {
  // Check the memory first, so an absurd topology fails before allocating anything.
  auto index_of = [&](const topo::StreamSpec& spec) { return static_cast<int>(&spec - topology.streams.data()); };
  // A stream's blocks in this process: for its copies here, and for what lands here.
  auto local_here = [&](const topo::StreamSpec& spec) { return local_blocks(topology, spec, placement); };
  auto landing_here = [&](const topo::StreamSpec& spec) {
    return landing_blocks(topology, spec, placement, wiring != nullptr ? wiring->landing_room(index_of(spec)) : 0);
  };
  std::size_t total = 0;
  for (const topo::StreamSpec& spec : topology.streams) {
    total += pool_bytes(spec, local_here(spec) + landing_here(spec));
    total += lane_bytes(spec, static_cast<std::size_t>(placement.count_here(spec.from.filter)),
                        static_cast<std::size_t>(placement.count_here(spec.to.filter)));
  }
  check_memory(total);

  for (std::size_t i = 0; i < topology.streams.size(); ++i) {
    const topo::StreamSpec& spec = topology.streams[i];
    auto stream = std::make_unique<StreamRuntime>();
    stream->spec = &spec;
    stream->index = static_cast<int>(i);
    stream->label = spec.label();
    stream->producer_copies = topology.copies_of(spec.from.filter);
    stream->consumer_copies = topology.copies_of(spec.to.filter);
    stream->room = std::make_unique<Waiter>(signal);
    // Every stream gets a pool, even one with neither end here (one block, never used),
    // so that stream indices match across processes.
    // Each producer copy that runs here pushes into a lane of its own in every local
    // channel, so each lane has one pushing thread: what other hosts send comes through the
    // landed lane (InputChannel::attach_landing), which only the data plane pushes into.
    std::vector<std::uint32_t> producers_here_list;
    for (int p = 0; p < stream->producer_copies; ++p) {
      if (placement.runs_here(spec.from.filter, p)) producers_here_list.push_back(static_cast<std::uint32_t>(p));
    }
    const auto producers_here_count = static_cast<int>(producers_here_list.size());
    const bool producers_here = producers_here_count > 0;
    // Every taker of a pool should be its only one: then the rings skip their
    // compare-and-swap on that side, and allocate() runs inline. So when several producer
    // copies run here, or one does and buffers also land from other hosts, each producer
    // copy takes from a share of its own (between them what the one pool would hold for
    // them, rounded up), and the data plane's I/O thread, which lands frames, takes from
    // `pool` (landing_blocks).
    const std::size_t landing = landing_here(spec);
    const bool lands = landing > 0;
    const std::size_t local = std::max<std::size_t>(1, local_here(spec));
    if (producers_here_count > 1 || (producers_here_count == 1 && lands)) {
      const auto share = (local + static_cast<std::size_t>(producers_here_count) - 1) /
                         static_cast<std::size_t>(producers_here_count);
      stream->shares.resize(static_cast<std::size_t>(stream->producer_copies));
      for (int p = 0; p < stream->producer_copies; ++p) {
        if (!placement.runs_here(spec.from.filter, p)) continue;
        stream->shares[static_cast<std::size_t>(p)] =
            std::make_unique<BufferPool>(stream->label, spec.buffer_size, share, signal, /*single_acquirer=*/true);
      }
      stream->pool = std::make_unique<BufferPool>(stream->label, spec.buffer_size, std::max<std::size_t>(1, landing),
                                                  signal, /*single_acquirer=*/lands);
    } else {
      // One producer copy and nothing landing, or no producer copy: one taker at most.
      const bool single_acquirer = producers_here_count == 1 || lands;
      stream->pool = std::make_unique<BufferPool>(stream->label, spec.buffer_size, local + landing, signal,
                                                  single_acquirer);
    }
    for (int c = 0; c < stream->consumer_copies; ++c) {
      if (placement.runs_here(spec.to.filter, c)) {
        stream->channels.push_back(std::make_unique<InputChannel>(spec.depth, stream->producer_copies,
                                                                  signal, *stream->room, stream->label,
                                                                  producers_here_list));
        stream->endpoints.push_back(stream->channels.back().get());
      } else {
        stream->channels.push_back(nullptr);
        if (producers_here && wiring == nullptr) {
          throw Error("consumer copy " + std::to_string(c) + " of '" + spec.to.filter +
                      "' runs in another process, and this process has no network wiring");
        }
        stream->endpoints.push_back(producers_here ? wiring->remote_consumer(*stream, c) : nullptr);
      }
    }
    streams_.push_back(std::move(stream));
  }
}

Graph::~Graph() {
  for (auto& stream : streams_) {
    stream->endpoints.clear();
    stream->channels.clear();
  }
  if (refuge_ == nullptr) return;
  for (auto& stream : streams_) {
    refuge_->adopt(std::move(stream->pool));
    for (auto& share : stream->shares) refuge_->adopt(std::move(share));
  }
}

}  // namespace sluice
