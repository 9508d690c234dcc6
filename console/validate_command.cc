#include <iostream>
#include <map>
#include <string>

#include "console/commands.h"
#include "console/exit_codes.h"
#include "console/launcher.h"
#include "console/remote.h"
#include "net/routes.h"
#include "runtime/backends.h"
#include "runtime/graph.h"
#include "text/shortened.h"
#include "topology/size.h"

namespace sluice::console {

std::string describe_plan(const topo::Topology& t) {
  std::string out = "topology '" + text::printable(t.name, false) + "' (" + text::printable(t.file, false) + "): " +
                    (t.hosts.empty() ? std::string("embedded, one process")
                                     : std::to_string(t.hosts.size()) + (t.hosts.size() == 1 ? " host" : " hosts")) + "\n";
  out += "filters:\n";
  for (const topo::FilterSpec& f : t.filters) {
    out += "  " + f.name + ": " + topo::to_string(f.lang) + " " + f.class_name;
    if (f.lang == topo::Lang::kCpp) out += " from " + (f.library.empty() ? std::string("(built in)") : f.library);
    out += ", " + std::to_string(f.copies) + (f.copies == 1 ? " copy" : " copies");
    if (!f.place.empty()) {
      out += " on";
      for (const auto& [host, n] : f.place) out += " " + host + ":" + std::to_string(n);
    }
    out += "\n";
  }
  out += "streams:\n";
  std::size_t total = 0;
  for (const topo::StreamSpec& s : t.streams) {
    int producers = t.copies_of(s.from.filter);
    int consumers = t.copies_of(s.to.filter);
    std::size_t count = Graph::pool_count(s, producers, consumers, 0, Graph::java_consumer(t, s));
    total += count * s.buffer_size;
    out += "  " + s.label() + ": " + topo::to_string(s.policy) + ", " +
           topo::format_size(s.buffer_size) + " buffers, depth " + std::to_string(s.depth) +
           ", pool " + std::to_string(count) + " buffers (" + topo::format_size(count * s.buffer_size) + ")\n";
  }
  std::size_t lanes = 0;
  for (const topo::StreamSpec& s : t.streams) {
    lanes += Graph::lane_bytes(s, static_cast<std::size_t>(t.copies_of(s.from.filter)),
                               static_cast<std::size_t>(t.copies_of(s.to.filter)));
  }
  out += "buffer memory: " + topo::format_size(total) + " (and queues: " + topo::format_size_rounded(lanes) + ")\n";
  out += "units of work: " + std::to_string(t.work.size());
  // Cut to 200 bytes, control characters escaped, as the summary and the live view show them.
  for (const std::string& w : t.work) out += " " + text::bracketed(w, 200);
  out += "\n";
  return out;
}

namespace {

// What each host's app daemon would allocate for the streams: its pools as Graph builds them,
// with room to land what the other hosts may have in flight to it (their credit: net::Routes).
// The plan's "buffer memory" is the topology's pools as if embedded; across hosts, a host
// that receives also keeps that room.
std::string describe_host_memory(const topo::Topology& t, const std::map<std::string, Placement>& placements) {
  std::string out = "buffer memory per host (its pools, and room to land what other hosts send):\n";
  for (const auto& [host, placement] : placements) {
    if (host == topo::kClient) continue;  // the submitting program's end: not a host's memory
    const net::Routes routes(t, placements, host);
    std::size_t total = 0;
    for (std::size_t i = 0; i < t.streams.size(); ++i) {
      const topo::StreamSpec& s = t.streams[i];
      total += Graph::pool_bytes(s, Graph::local_blocks(t, s, placement) +
                                        Graph::landing_blocks(t, s, placement, routes.landing_room(i)));
    }
    out += "  " + host + ": " + topo::format_size_rounded(total) + " (" + std::to_string(total) + " B)\n";
  }
  return out;
}

}  // namespace

int validate_command(const std::string& topology_path, const std::string& hosts,
                     const ControlOptions& control, const LauncherOptions& launch) {
  try {
    topo::Topology topology = topo::parse_topology_file(topology_path);
    if (!hosts.empty()) apply_hosts_option(topology, hosts);
    // Across hosts the hosts load what is placed on them (check_hosts launches there), and
    // a library may be on those hosts only, not on the console's; embedded, or with a
    // launcher (nothing is started), this process loads everything.
    const bool hosts_load = !topology.hosts.empty() && launch.launcher.empty();
    if (!hosts_load) check_loadable(topology);
    if (topology.hosts.empty() && launch.launcher.empty()) Graph::check_embedded_memory(topology);
    std::cout << describe_plan(topology);
    if (!topology.hosts.empty()) {
      std::cout << "hosts:\n";
      const std::map<std::string, Placement> placements = place_copies(topology);
      for (const auto& [host, placement] : placements) {
        std::cout << "  " << host << ":";
        for (const auto& [filter, copies] : placement.local) {
          std::cout << " " << filter << "#";
          for (std::size_t i = 0; i < copies.size(); ++i) std::cout << (i ? "," : "") << copies[i];
        }
        std::cout << "\n";
      }
      // A `to: client` stream ends in the submitting program, which the routes must know.
      std::cout << describe_host_memory(topology, place_with_client(topology));
    }
    if (auto launcher = make_launcher(launch)) {
      // Where each logical host would run; nothing is started.
      try {
        std::cout << launcher->plan(topology);
      } catch (const std::exception& e) {
        std::cerr << "sluice: " << launch.launcher << ": " << e.what() << "\n";
        return kExitHostUnavailable;
      }
    } else if (!topology.hosts.empty()) {
      if (int status = check_hosts(topology, control); status != kExitOk) return status;
    }
    std::cout << "ok\n";
    return kExitOk;
  } catch (const topo::TopologyError& e) {
    std::cerr << e.what() << "\n";
    return kExitBadTopology;
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return kExitBadTopology;
  }
}

}  // namespace sluice::console
