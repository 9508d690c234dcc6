// Placement: which copies of each filter run in this process. Embedded runs place every
// copy here; an app daemon runs the copies the console placed on its host (and reaches the
// others through a StreamWiring, stream_wiring.h).
#ifndef SLUICE_RUNTIME_PLACEMENT_H_
#define SLUICE_RUNTIME_PLACEMENT_H_

#include <map>
#include <string>
#include <vector>

#include "topology/topology.h"

namespace sluice {

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

}  // namespace sluice

#endif  // SLUICE_RUNTIME_PLACEMENT_H_
