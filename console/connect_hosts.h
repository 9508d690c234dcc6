// Reaching the host daemons before anything starts: the console's token, and one
// authenticated connection per host (console/host_client.h).
#ifndef SLUICE_CONSOLE_CONNECT_HOSTS_H_
#define SLUICE_CONSOLE_CONNECT_HOSTS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "console/host_client.h"
#include "topology/topology.h"

namespace sluice::console {

// The token in token_path(token_file), or nullopt after printing why it cannot be read.
std::optional<std::string> read_console_token(const std::string& token_file);

// Connects to and authenticates with every host of `topology`, in parallel. Returns the
// clients in hosts: order; or prints why some host could not be reached (at its line in
// the topology file) and returns an empty vector. `verbose`: print a line per host reached.
std::vector<std::unique_ptr<HostClient>> connect_all(const topo::Topology& topology, const std::string& token,
                                                     bool verbose);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_CONNECT_HOSTS_H_
