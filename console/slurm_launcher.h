// SlurmLauncher: `--launcher slurm`. Inside an allocation (SLURM_JOB_ID set: sbatch, salloc)
// it uses that allocation; outside one it asks for one (salloc --no-shell, one node per
// logical host) and releases it (scancel) at the end. On node i of the allocation it starts
// `sluiced` as a job step (srun --jobid J --nodelist NODE --overlap), listening on the node's
// address (NodeAddr) on a port the daemon picks, with a token made for this run (0600);
// sluiced writes where it listens to a ready file, which the console waits for. Logical host
// i (hosts: order) runs on node i. Files live in the run directory, which every node must
// see (a shared filesystem, like the topology, the libraries and the jars).
//
// stop() sends SIGTERM to every step (srun forwards it to sluiced, which kills its app
// daemons), scancels the steps that do not end within 5 s, and scancels the allocation it
// made, waiting until squeue no longer shows it.
//
// Not thread-safe: the console's main thread only.
#ifndef SLUICE_CONSOLE_SLURM_LAUNCHER_H_
#define SLUICE_CONSOLE_SLURM_LAUNCHER_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "console/launcher.h"
#include "console/subprocess.h"

namespace sluice::console {

class SlurmLauncher : public Launcher {
 public:
  explicit SlurmLauncher(LauncherOptions options);
  ~SlurmLauncher() override;

  std::string plan(const topo::Topology& topology) override;
  int start(topo::Topology& topology, ControlOptions& control) override;
  std::string where(const std::string& host) const override;
  std::optional<std::string> ended() override;
  void stop(bool failed) override;

 private:
  struct Node {
    std::string name;     // Slurm's node name
    std::string address;  // its NodeAddr
  };
  struct Step {
    std::string host;  // the logical host
    Node node;
    std::string ready_file;
    std::string log_file;
    std::unique_ptr<Child> srun;
    std::string listening;  // "ADDR:PORT", from the ready file
  };

  // Logical hosts: hosts: keys, or (none) one per node, named after it.
  std::vector<std::string> logical_hosts(const topo::Topology& topology, const std::vector<Node>* nodes) const;
  // Inside an allocation (SLURM_JOB_ID set): its id and node list, and true. Throws
  // sluice::Error when the environment is half there.
  static bool inside_allocation(std::string* job, std::string* nodelist);
  // Inside job `job`: a warning line that names the allocation options given, which apply
  // only to an allocation the console asks for; "" when none was given.
  std::string unused_inside(const std::string& job) const;
  // How many nodes to ask for (--nodes, else one per logical host). Throws when --nodes is
  // fewer than the logical hosts.
  int nodes_to_ask_for(std::size_t hosts) const;
  // Throws when the allocation has fewer nodes than there are logical hosts.
  static void check_enough(const std::string& job, std::size_t nodes, std::size_t hosts);
  // Asks for an allocation of `count` nodes and waits for it. False (after printing why)
  // when it was refused or interrupted (*interrupted set).
  bool allocate(int count, const std::string& name, bool* interrupted);
  // The nodes of job_id_, in Slurm's order, with their addresses. Throws sluice::Error.
  std::vector<Node> job_nodes(const std::string& nodelist) const;
  std::string sluiced_path() const;
  void make_run_dir();
  // Waits until every step wrote its ready file. False after printing why not.
  bool wait_ready(bool* interrupted);
  void end_steps();
  void release_allocation();

  LauncherOptions options_;
  std::string job_id_;        // the allocation in use
  bool own_allocation_ = false;  // made by allocate(): released by stop()
  std::string run_id_;
  std::string run_dir_;
  bool own_run_dir_ = false;  // made here (no --run-dir): removed after a run that succeeded
  std::string token_file_;
  std::vector<Step> steps_;
  bool wrote_logs_ = false;  // salloc or a step ran: the run directory has logs
  bool stopped_ = false;
  // Tells launched_now.h what this launcher holds now (sruns, its own allocation, token).
  void publish();
};

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SLURM_LAUNCHER_H_
