#include "application/remote_deployment.h"

#include "sluice/error.h"

namespace sluice {

DeploymentFactory remote_deployment_factory(topo::Topology& topology, const ApplicationOptions& options) {
  return [](const topo::Topology&) -> std::unique_ptr<Deployment> { throw Error("across hosts: not built yet"); };
}

}  // namespace sluice
