// `sluice validate` across hosts (console/remote.h check_hosts): each host answers and
// authenticates, and the application gets as far on each as a run would before its first
// unit of work, so that a library or class missing on one host, or pools that do not fit
// there, fail validate rather than the run.
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "console/connect_hosts.h"
#include "console/exit_codes.h"
#include "console/host_group.h"
#include "console/host_stats.h"
#include "console/launch_app.h"
#include "console/remote.h"
#include "console/report.h"
#include "control/auth.h"

namespace sluice::console {

namespace {

// The app daemon's own stages before app_ready: what the topology asks of that host.
bool stage_before_ready(const std::string& stage) { return stage == "load" || stage == "launch"; }

}  // namespace

int check_hosts(const topo::Topology& topology, const ControlOptions& control) {
  const std::optional<Credentials> credentials = load_credentials(control);
  if (!credentials) return kExitHostUnavailable;
  auto clients = connect_all(topology, *credentials, true);
  if (clients.empty()) return kExitHostUnavailable;

  // Placed as a run places them, with the program that reads `to: client` streams as a host
  // of its own: the hosts check the placement against their own copies. That program is
  // not started (nothing here connects to the data planes).
  const std::map<std::string, Placement> placements = place_with_client(topology);
  HostStats stats(topology, clients.size());
  HostGroup hosts(std::move(clients), placements, stats);
  hosts.set_take_signals(false);  // Ctrl-C ends validate; the daemons then end what it launched
  hosts.start_readers();
  LaunchPlan plan;
  plan.topology = &topology;
  plan.placements = &placements;
  plan.run_key = control::random_bytes(32);
  const bool ready = launch_everywhere(hosts, plan, [] {});
  const std::optional<Failure> failure = hosts.failure();
  hosts.teardown(!ready);
  if (!ready) {
    std::cerr << "validate failed: " << (failure ? failure_text(*failure) : std::string("the hosts did not answer"))
              << "\n";
    if (failure && stage_before_ready(failure->stage)) {
      std::cerr << "sluice: nothing runs on the hosts now; every host needs the same library: and classpath: "
                   "paths as the console (docs/operations.md)\n";
      return kExitBadTopology;
    }
    return kExitHostUnavailable;
  }
  for (int i : hosts.active()) {
    std::cout << hosts.client(i).label() << ": the application loads and its pools fit (launched, then shut down)\n";
  }
  return kExitOk;
}

}  // namespace sluice::console
