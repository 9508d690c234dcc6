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

// "ADDR:0" for listening on `ip` on a free port ("[::1]:0" for IPv6; loopback when `ip` is
// empty): where a data plane listens so that the peer that reached us at `ip` reaches it too.
std::string any_port_on(const std::string& ip);

// The launch message for `host`.
control::Envelope launch_message(const LaunchPlan& plan, const std::string& app_id, const std::string& text,
                                 const HostClient& host);

// The client's part in the wiring: connect its data plane to the hosts' (name -> address),
// blocking until they have connected; throws sluice::Error naming what did not. It calls
// `between` at least every 50 ms while it waits, and gives up (throws) when that returns
// false: launch_and_wire keeps the hosts' control connections alive there.
using ConnectClient = std::function<void(const std::map<std::string, std::string>& peers,
                                         const std::function<bool()>& between)>;

// Launches on every host with copies and waits for their app_ready: each app daemon has
// loaded every library and class, built its pools and opened its data port (no filter
// object is made yet). Calls `tick` between events. False on a failure (hosts.failure()).
bool launch_everywhere(HostGroup& hosts, const LaunchPlan& plan, const std::function<void()>& tick);

// Launches on every host with copies, waits for their app_ready, sends every one the
// wiring (their data addresses and plan.extra_peers), calls `connect_client` (when given)
// with the hosts' data addresses, and waits for started. A client that cannot connect
// fails the run (host "client", stage "network"). Calls `tick` between events. False on a
// failure (hosts.failure()).
bool launch_and_wire(HostGroup& hosts, const LaunchPlan& plan, const ConnectClient& connect_client,
                     const std::function<void()>& tick);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_LAUNCH_APP_H_
