// Runs across hosts: the console side of the control plane (docs/operations.md).
#ifndef SLUICE_CONSOLE_REMOTE_H_
#define SLUICE_CONSOLE_REMOTE_H_

#include <map>
#include <string>
#include <vector>

#include "console/commands.h"
#include "runtime/placement.h"
#include "topology/topology.h"

namespace sluice::console {

// Applies --hosts "a=ADDR:PORT,b=ADDR:PORT": replaces the addresses of hosts the topology
// lists and adds the others. Throws sluice::Error on a malformed list.
// "" when `hosts` (the --hosts value) is a valid NAME=ADDR:PORT,... list, else what is wrong.
std::string hosts_option_problem(const std::string& hosts);
void apply_hosts_option(topo::Topology& topology, const std::string& hosts);

// Where every copy runs: by place: when the filter has one (copies numbered in place:
// order). The copies of filters without place: are dealt round-robin over the hosts in
// hosts: order, the deal continuing from one such filter to the next in file order (so
// `read` and `count`, one copy each, land on hosts a and b). Hosts with no copy are left out.
std::map<std::string, Placement> place_copies(const topo::Topology& topology);
// The same, and the program that reads `to: client` as the one copy on pseudo-host "client".
std::map<std::string, Placement> place_with_client(const topo::Topology& topology);

// The token file the console reads: `path`, or ~/.config/sluice/token when empty.
std::string token_path(const std::string& path);

// `sluice validate` across hosts: connects to and authenticates with every host (a line per
// host), then launches the application on every host with copies as far as app_ready (its
// app daemon loads every library and class, builds its pools, opens its data port; no filter
// object is made) and shuts it down again (a line per host). Returns kExitOk;
// kExitHostUnavailable when a host cannot be reached or is lost; kExitBadTopology, naming
// the host and why, when the application cannot start on one (console/check_on_hosts.cc).
int check_hosts(const topo::Topology& topology, const ControlOptions& control);

// Runs a topology with hosts: through the host daemons. Returns the exit status.
int run_remote(const RunOptions& options, topo::Topology& topology);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_REMOTE_H_
