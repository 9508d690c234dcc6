// Runs a topology given as YAML text through the embedded runtime, for graph tests.
// REQUIRES: the test target defines SLUICE_TEST_DATA_DIR, the directory relative paths in the
// YAML resolve against.
#ifndef SLUICE_TESTING_GRAPH_HARNESS_H_
#define SLUICE_TESTING_GRAPH_HARNESS_H_

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "runtime/backends.h"
#include "runtime/engine.h"
#include "topology/topology.h"

namespace testing_filters {

struct RunOutcome {
  std::optional<sluice::Failure> failure;
  std::vector<sluice::StreamStats> streams;
  std::vector<std::string> stuck;
  double seconds = 0;
};

inline RunOutcome run_yaml(const std::string& yaml, sluice::EngineOptions options = {}) {
  sluice::topo::Topology topology = sluice::topo::parse_topology_text(yaml, "test.yaml", SLUICE_TEST_DATA_DIR);
  sluice::check_loadable(topology);
  RunOutcome outcome;
  auto start = std::chrono::steady_clock::now();
  {
    sluice::Engine engine(topology, options);
    outcome.failure = engine.start();
    for (std::size_t i = 0; i < topology.work.size() && !outcome.failure; ++i) {
      outcome.failure = engine.run_unit(i, topology.work[i]);
    }
    outcome.streams = engine.stream_stats();
    outcome.stuck = engine.stuck_copies();
  }
  outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return outcome;
}

}  // namespace testing_filters

#endif  // SLUICE_TESTING_GRAPH_HARNESS_H_
