// EmbeddedDeployment: every copy in this process, on an Engine (runtime/engine.h).
#ifndef SLUICE_APPLICATION_EMBEDDED_DEPLOYMENT_H_
#define SLUICE_APPLICATION_EMBEDDED_DEPLOYMENT_H_

#include "application/deployment.h"
#include "runtime/backends.h"
#include "runtime/engine.h"
#include "topology/topology.h"

namespace sluice {

class EmbeddedDeployment final : public Deployment {
 public:
  // `topology` must outlive the deployment. Throws sluice::Error when the graph cannot be built.
  // Checks every library and class first (check_loadable).
  explicit EmbeddedDeployment(const topo::Topology& topology) : engine_((check_loadable(topology), topology)) {}

  std::optional<Failure> start() override { return engine_.start(); }
  InputPort* client_port() override { return engine_.client_port(); }
  std::optional<Failure> run_unit(std::uint64_t index, const std::string& work) override {
    return engine_.run_unit(index, work);
  }
  void cancel(const std::string& reason) override { engine_.cancel(reason); }
  std::vector<StreamStats> stream_stats() const override { return engine_.stream_stats(); }
  DeploymentSample sample() const override { return {engine_.stream_stats(), engine_.activity(), {}}; }
  bool stuck() const override { return !engine_.stuck_copies().empty(); }
  void hand_pools_to(PoolRefuge& refuge) override { engine_.hand_pools_to(&refuge); }

 private:
  Engine engine_;
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_EMBEDDED_DEPLOYMENT_H_
