// What Slurm's own words about an ended job or step mean for a sluice user: the job states
// scontrol reports, and the line slurmstepd writes into a step's output when Slurm ends it.
// Text in, text out (no Slurm calls), so that the console's tests can check each reading.
#ifndef SLUICE_CONSOLE_SLURM_MESSAGES_H_
#define SLUICE_CONSOLE_SLURM_MESSAGES_H_

#include <optional>
#include <string>

namespace sluice::console {

// What an ended job state (scontrol's JobState: TIMEOUT, CANCELLED...) means, e.g. "it
// reached its time limit (--time)"; "" for a state that is not an ending one.
std::string job_state_meaning(const std::string& state);

// slurmstepd's line in a step's output when Slurm ended the step or its whole job, e.g.
//   slurmstepd-n2: error: *** STEP 3.1 ON n2 CANCELLED AT 2026-11-26T11:38:16 ***
//   slurmstepd-n1: error: *** JOB 4 ON n1 CANCELLED AT 2026-11-26T11:38:31 DUE TO TIME LIMIT ***
// read as "Slurm ended step 3.1 on node n2 at 2026-11-26T11:38:16: it was cancelled (scancel,
// by its user or an administrator)". The first such line in `output` counts; nullopt when
// there is none (the step ended otherwise: its own exit, a signal from outside Slurm).
std::optional<std::string> slurmstepd_ending(const std::string& output);

// What to do about a Slurm command's error text, when it names a cause of its own: Slurm's
// controller not answering ("Unable to contact slurm controller"), or a job that is no
// longer there ("has expired", "Invalid job id": a stale SLURM_JOB_ID). nullopt otherwise,
// and the caller gives its usual advice.
std::optional<std::string> slurm_error_hint(const std::string& text);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SLURM_MESSAGES_H_
