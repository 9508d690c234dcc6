// Deployment: one deployed instance of an application's copies, as the Application's runner
// thread drives it (application/core.h). Embedded: an Engine in this process
// (embedded_deployment.h). Across hosts: the host daemons, with this process on the data
// plane as the client (remote_deployment.h).
//
// A deployment that had a failed unit is not used again: the Application makes a new one.
//
// Thread safety: start, run_unit, keep_alive, stream_stats and the destructor from the
// runner thread only; cancel and sample from any thread.
#ifndef SLUICE_APPLICATION_DEPLOYMENT_H_
#define SLUICE_APPLICATION_DEPLOYMENT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "buffer/pool_refuge.h"
#include "console/host_stats.h"
#include "runtime/engine.h"
#include "runtime/failure.h"

namespace sluice {

// What a deployment is doing, for a live view (sluice serve --ui).
struct DeploymentSample {
  std::vector<StreamStats> streams;           // one per topology stream, counters since start
  std::vector<CopyActivity> copies;           // what each copy does
  std::vector<console::HostTraffic> hosts;    // each host's share (empty when embedded)
  // False between a deployment that broke and the next (counters are the retired ones'; no
  // copy runs, no host reports).
  bool deployed = true;
};

class InputPort;

class Deployment {
 public:
  virtual ~Deployment() = default;

  // Creates every copy and waits until all are ready. The first failure, if any.
  virtual std::optional<Failure> start() = 0;
  // The `to: client` stream's end in this process (null without one). Owned by the
  // deployment; valid until it is destroyed.
  virtual InputPort* client_port() = 0;
  // Runs one unit on every copy and waits for all of them (not for the client's reads).
  virtual std::optional<Failure> run_unit(std::uint64_t index, const std::string& work) = 0;
  // Aborts the running unit with `reason` (stage "cancelled").
  virtual void cancel(const std::string& reason) = 0;
  // Every stream's traffic since start (summed over hosts).
  virtual std::vector<StreamStats> stream_stats() const = 0;
  // The latest of the above with what every copy does (across hosts: as of the hosts' last
  // reports while a unit ran).
  virtual DeploymentSample sample() const = 0;
  // Copies stuck in user code after a failure: the deployment cannot be destroyed safely.
  virtual bool stuck() const = 0;
  // Between units (and while the client reads a unit's results), at least every 500 ms:
  // keeps the deployment's connections alive and notices, without waiting, that it broke (a
  // host lost, an app daemon ended). Returns that failure; the deployment is then not used
  // again. An embedded deployment has nothing to keep alive.
  virtual std::optional<Failure> keep_alive() { return std::nullopt; }
  // After a failed unit: the hosts whose final counts never came (HostGroup::
  // without_final_counts); the unit's stream counts are lower bounds then. None embedded.
  virtual std::vector<std::string> without_final_counts() const { return {}; }
  // When this deployment is destroyed, its pools go to `refuge` (buffer/pool_refuge.h)
  // instead of being freed: the client may still hold result buffers from them, while
  // everything else (threads, connections, files) goes.
  virtual void hand_pools_to(PoolRefuge& refuge) = 0;
  // After a failure: why no deployment can be made again (the Slurm job that held the host
  // daemons ended), else nothing.
  virtual std::optional<std::string> cannot_deploy_again() const { return std::nullopt; }
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_DEPLOYMENT_H_
