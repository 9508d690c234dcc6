// Which host daemons a run uses (--hosts) and where every copy runs (console/remote.h).
#include <algorithm>
#include <cctype>
#include <set>
#include <sstream>

#include "console/host_client.h"
#include "console/remote.h"
#include "sluice/error.h"
#include "text/address.h"
#include "text/shortened.h"

namespace sluice::console {

std::string hosts_option_problem(const std::string& hosts) {
  std::stringstream ss(hosts);
  std::string item;
  std::set<std::string> names;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    std::string problem = "no NAME=";
    if (eq == std::string::npos || eq == 0 ||
        !text::parse_host_port(std::string_view(item).substr(eq + 1), text::AddressRules{}, &problem)) {
      return "'" + text::shortened(item, 100) + "' is not NAME=ADDR:PORT (port 1-65535), e.g. a=127.0.0.1:7700 (" +
             problem + ")";
    }
    const std::string name = item.substr(0, eq);
    if (std::string problem = topo::host_name_problem(name); !problem.empty()) return problem;
    if (!names.insert(name).second) return "host '" + name + "' is given twice; give each host once";
  }
  return "";
}

void apply_hosts_option(topo::Topology& topology, const std::string& hosts) {
  if (std::string problem = hosts_option_problem(hosts); !problem.empty()) throw Error("--hosts: " + problem);
  std::stringstream ss(hosts);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    const std::string name = item.substr(0, eq);
    auto it = std::find_if(topology.hosts.begin(), topology.hosts.end(),
                           [&](const topo::HostSpec& s) { return s.name == name; });
    if (it != topology.hosts.end()) {
      it->address = item.substr(eq + 1);
      it->mark = {};  // the address is the command line's now: its problems are not the file's
    } else {
      topology.hosts.push_back(topo::HostSpec{name, item.substr(eq + 1), {}});
    }
  }
}

std::map<std::string, Placement> place_copies(const topo::Topology& t) {
  std::map<std::string, Placement> out;
  std::size_t next = 0;  // the deal continues from filter to filter
  for (const topo::FilterSpec& f : t.filters) {
    if (!f.place.empty()) {
      int index = 0;
      for (const auto& [host, n] : f.place) {
        for (int k = 0; k < n; ++k) out[host].local[f.name].push_back(index++);
      }
    } else {
      for (int c = 0; c < f.copies; ++c) out[t.hosts[next++ % t.hosts.size()].name].local[f.name].push_back(c);
    }
  }
  return out;
}

std::map<std::string, Placement> place_with_client(const topo::Topology& topology) {
  std::map<std::string, Placement> placements = place_copies(topology);
  if (topology.client_stream() != nullptr) placements[std::string(topo::kClient)].local[std::string(topo::kClient)] = {0};
  return placements;
}

}  // namespace sluice::console
