// RemoteDeployment: the application's copies on the host daemons (hosts:, --hosts or a
// launcher), driven as `sluice run` drives them; this process joins the data plane as the
// pseudo-host "client" when the topology has a `to: client` stream.
#ifndef SLUICE_APPLICATION_REMOTE_DEPLOYMENT_H_
#define SLUICE_APPLICATION_REMOTE_DEPLOYMENT_H_

#include "application/core.h"
#include "sluice/application.h"
#include "topology/topology.h"

namespace sluice {

// Applies options.hosts to `topology` and checks the options (throws sluice::Error); the
// factory connects to the host daemons and launches the application each time it is called.
DeploymentFactory remote_deployment_factory(topo::Topology& topology, const ApplicationOptions& options);

}  // namespace sluice

#endif  // SLUICE_APPLICATION_REMOTE_DEPLOYMENT_H_
