// Reaching the host daemons before anything starts: the console's credentials (the token,
// or certificates), and one authenticated connection per host (console/host_client.h).
#ifndef SLUICE_CONSOLE_CONNECT_HOSTS_H_
#define SLUICE_CONSOLE_CONNECT_HOSTS_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "console/commands.h"
#include "console/host_client.h"
#include "topology/topology.h"

namespace sluice::console {

// The TLS client credentials `options` name: the token in token_path(options.token_file),
// or the certificate, key and CA. Nullopt after printing why they cannot be used.
std::optional<Credentials> load_credentials(const ControlOptions& options);
// The same, printing nothing: nullopt with *why set ("token file '...' does not exist; ...",
// without the option's name, which the caller adds: --token-file, or the Application's).
std::optional<Credentials> load_credentials(const ControlOptions& options, std::string* why);

// A host daemon that connect_all could not reach: its name in hosts:, and why ("host b
// (ADDR): cannot connect: ...").
struct UnreachedHost {
  std::string host;
  std::string why;
};

// Connects to and authenticates with every host of `topology`, in parallel. Returns the
// clients in hosts: order; or prints why some host could not be reached (at its line in
// the topology file) and returns an empty vector. `verbose`: print a line per host reached.
// With `unreached`, prints nothing on failure: each host that could not be reached goes
// there instead, for a caller that reports it elsewhere (a deployed application, to the
// unit's submitter).
std::vector<std::unique_ptr<HostClient>> connect_all(const topo::Topology& topology, const Credentials& credentials,
                                                     bool verbose, std::vector<UnreachedHost>* unreached = nullptr);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_CONNECT_HOSTS_H_
