// Launchers: who starts the host daemons of a run. Without one (the default) the console
// connects to sluiced processes that were started by hand or by systemd, at the addresses
// in hosts: or --hosts. With one (`--launcher slurm`), the console asks a resource manager
// for machines, starts a sluiced on each as part of this run, with a token only this run
// knows, and ends them all when the run ends. Everything between is the ordinary multi-host
// path (remote_run.cc). docs/slurm.md; docs/console.md says how Kubernetes would fit.
//
// Not thread-safe: the console's main thread only.
#ifndef SLUICE_CONSOLE_LAUNCHER_H_
#define SLUICE_CONSOLE_LAUNCHER_H_

#include <memory>
#include <optional>
#include <string>

#include "console/commands.h"
#include "runtime/failure.h"
#include "topology/topology.h"

namespace sluice::console {

class Launcher {
 public:
  virtual ~Launcher() = default;

  // What start() would do with `topology`, as lines for `sluice validate`: which logical host
  // runs where. Starts nothing. Throws sluice::Error when it cannot say (no such allocation).
  virtual std::string plan(const topo::Topology& topology) = 0;

  // Starts a host daemon for every logical host of `topology` (the keys of hosts:; when there
  // are none, one logical host per machine, named after it), sets each host's address to
  // where its daemon listens, and points `control` at this run's token. Returns kExitOk, or
  // prints why not and returns kExitHostUnavailable (kExitInterrupted on SIGINT/SIGTERM,
  // which REQUIRES: blocked in every thread). Whatever it started is ended by stop().
  virtual int start(topo::Topology& topology, ControlOptions& control) = 0;

  // Where logical host `host` runs, for failures: "Slurm node n2 (job 12)"; "" if unknown.
  virtual std::string where(const std::string& host) const = 0;

  // After a failure: why the daemons it started cannot serve again, when that is so ("Slurm
  // job 12 ended: TIMEOUT, it reached its time limit (--time)"; a step that ended while the
  // job runs), else nothing: the failure was the run's own. Asks the resource manager (runs
  // squeue or scontrol): for failures, not for every tick.
  virtual std::optional<std::string> ended() { return std::nullopt; }

  // Ends every daemon it started and releases what it acquired (an allocation it made);
  // waits until they are gone. Safe to call twice; the destructor calls it. `failed`: the run
  // failed, so keep what helps find out why (logs) and say where it is.
  virtual void stop(bool failed) = 0;
};

// The launcher `options.launcher` names ("slurm"), or nullptr for "" (hand-started daemons).
// Throws sluice::Error for an unknown name.
std::unique_ptr<Launcher> make_launcher(const LauncherOptions& options);

// When `failure` may be a host lost (not a filter's own failure, not a cancel) and the
// launcher says its daemons are gone for good (Launcher::ended): puts that first in the
// failure's message ("Slurm job 12 ended: TIMEOUT, ...; so: host b ...") and returns it.
std::optional<std::string> name_the_end(Launcher& launcher, Failure& failure);

// "" when `name` is a launcher this console has, else what is wrong (for CLI11's check).
std::string launcher_name_problem(const std::string& name);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_LAUNCHER_H_
