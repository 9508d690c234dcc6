// Launching an application on the host daemons: the launch message each host gets, and the
// sequence launch -> app_ready -> wiring -> started that `sluice run` across hosts and a
// deployed Application (application/remote_deployment.cc) share (docs/protocol.md).
//
// Not thread-safe: the thread that drives the HostGroup.
#ifndef SLUICE_CONSOLE_LAUNCH_APP_H_
#define SLUICE_CONSOLE_LAUNCH_APP_H_

#include <functional>
#include <map>
#include <string>

#include "console/host_group.h"
#include "control.pb.h"
#include "runtime/placement.h"
#include "topology/topology.h"

namespace sluice::console {

struct LaunchPlan {
  const topo::Topology* topology = nullptr;
  // Every host's copies (a pseudo-host "client" too, when the submitting program reads a
  // `to: client` stream): sent to every host, which checks it against its own.
  const std::map<std::string, Placement>* placements = nullptr;
  std::string run_key;   // the data planes' shared secret for this run
  bool encrypt = false;  // --encrypt
  // Data planes that are not host daemons' (the client's): name -> "addr:port".
  std::map<std::string, std::string> extra_peers;
};

// The launch message for `host`.
control::Envelope launch_message(const LaunchPlan& plan, const std::string& app_id, const std::string& text,
                                 const HostClient& host);

// Launches on every host with copies, waits for their app_ready, sends every one the
// wiring (their data addresses and plan.extra_peers), calls `wired` (which may block: the
// client's data plane waits there for the hosts to connect), and waits for started.
// Calls `tick` between events. False on a failure (hosts.failure()).
bool launch_and_wire(HostGroup& hosts, const LaunchPlan& plan, const std::function<void()>& wired,
                     const std::function<void()>& tick);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_LAUNCH_APP_H_
