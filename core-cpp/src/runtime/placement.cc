#include "runtime/placement.h"

#include <algorithm>

namespace sluice {

Placement Placement::everything(const topo::Topology& topology) {
  Placement placement;
  for (const topo::FilterSpec& spec : topology.filters) {
    std::vector<int>& copies = placement.local[spec.name];
    for (int c = 0; c < spec.copies; ++c) copies.push_back(c);
  }
  if (topology.client_stream() != nullptr) placement.local[std::string(topo::kClient)] = {0};
  return placement;
}

bool Placement::runs_here(const std::string& filter, int copy) const {
  auto found = local.find(filter);
  return found != local.end() &&
         std::find(found->second.begin(), found->second.end(), copy) != found->second.end();
}

int Placement::count_here(const std::string& filter) const {
  auto found = local.find(filter);
  return found == local.end() ? 0 : static_cast<int>(found->second.size());
}

}  // namespace sluice
