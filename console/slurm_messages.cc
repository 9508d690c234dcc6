#include "console/slurm_messages.h"

#include <regex>

namespace sluice::console {

std::string job_state_meaning(const std::string& state) {
  if (state == "TIMEOUT") return "it reached its time limit (--time)";
  if (state == "CANCELLED") return "it was cancelled (scancel, by its user or an administrator)";
  if (state == "NODE_FAIL") return "one of its nodes failed";
  if (state == "PREEMPTED") return "a job of higher priority preempted it";
  if (state == "DEADLINE") return "it reached its deadline";
  if (state == "OUT_OF_MEMORY") return "it ran out of memory";
  if (state == "BOOT_FAIL") return "a node failed to boot";
  if (state == "FAILED" || state == "COMPLETED") return "its allocation ended";
  if (state == "COMPLETING") return "its allocation is being released";
  return "";
}

std::optional<std::string> slurmstepd_ending(const std::string& output) {
  // Slurm's src/slurmd/slurmstepd/req.c and mgr.c word these; the DUE TO part names why,
  // else it was a plain cancel (scancel, or the job's end taking its steps with it).
  static const std::regex re(
      R"(\*\*\* (STEP|JOB) (\S+) ON (\S+) CANCELLED AT (\S+)(?: DUE TO ([A-Z ]+?))? \*\*\*)");
  std::smatch m;
  if (!std::regex_search(output, m, re)) return std::nullopt;
  const std::string what = (m[1] == "STEP" ? "step " : "job ") + m[2].str();
  const std::string due = m[5].str();
  std::string why;
  if (due.empty()) {
    why = job_state_meaning("CANCELLED");
  } else if (due == "TIME LIMIT") {
    why = job_state_meaning("TIMEOUT");
  } else if (due == "PREEMPTION") {
    why = job_state_meaning("PREEMPTED");
  } else if (due == "NODE FAILURE") {
    why = job_state_meaning("NODE_FAIL");
  } else {
    why = "due to " + due;
  }
  return "Slurm ended " + what + " on node " + m[3].str() + " at " + m[4].str() + ": " + why;
}

std::optional<std::string> slurm_error_hint(const std::string& text) {
  if (text.find("Unable to contact slurm controller") != std::string::npos) {
    return "Slurm's controller (slurmctld) does not answer: check that it runs (scontrol ping) and that "
           "SLURM_CONF, if set, names this cluster's slurm.conf";
  }
  if (text.find("has expired") != std::string::npos || text.find("Invalid job id") != std::string::npos) {
    return "the Slurm job in SLURM_JOB_ID is no longer running (a shell of an allocation that ended): leave "
           "that shell, or unset SLURM_JOB_ID and SLURM_JOB_NODELIST to have sluice ask for an allocation";
  }
  return std::nullopt;
}

}  // namespace sluice::console
