#include "console/slurm_messages.h"

#include <gtest/gtest.h>

namespace sluice::console {
namespace {

TEST(SlurmstepdEnding, AStepCancelledByScancelIsNamedAsSuch) {
  const std::string log =
      "2026-11-26T11:38:12.836Z sluice-appd(b)[18538] [info] ready: 1 copy here\n"
      "slurmstepd-n2: error: *** STEP 3.1 ON n2 CANCELLED AT 2026-11-26T11:38:16 ***\n"
      "srun: Job step aborted: Waiting up to 7 seconds for job step to finish.\n"
      "srun: error: n2: task 0: Killed\n";
  EXPECT_EQ(slurmstepd_ending(log),
            "Slurm ended step 3.1 on node n2 at 2026-11-26T11:38:16: it was cancelled (scancel, by its user or an "
            "administrator)");
}

TEST(SlurmstepdEnding, AJobAtItsTimeLimitSaysSo) {
  EXPECT_EQ(slurmstepd_ending("slurmstepd-node7: error: *** JOB 12 ON node7 CANCELLED AT 2026-01-02T03:04:05 DUE TO "
                              "TIME LIMIT ***\n"),
            "Slurm ended job 12 on node node7 at 2026-01-02T03:04:05: it reached its time limit (--time)");
  EXPECT_EQ(slurmstepd_ending("*** JOB 12 ON n1 CANCELLED AT 2026-01-02T03:04:05 DUE TO PREEMPTION ***"),
            "Slurm ended job 12 on node n1 at 2026-01-02T03:04:05: a job of higher priority preempted it");
  EXPECT_EQ(slurmstepd_ending("*** JOB 12 ON n1 CANCELLED AT 2026-01-02T03:04:05 DUE TO SOMETHING NEW ***"),
            "Slurm ended job 12 on node n1 at 2026-01-02T03:04:05: due to SOMETHING NEW");
}

TEST(SlurmstepdEnding, OutputWithoutSlurmsLineIsNotReadAsAnEnding) {
  EXPECT_EQ(slurmstepd_ending(""), std::nullopt);
  EXPECT_EQ(slurmstepd_ending("2026-11-26T11:36:14.108Z sluice-appd(n1)[9966] [info] shutdown\n"
                              "srun: error: n1: task 0: Killed\n"),
            std::nullopt);
}

}  // namespace
// salloc's words when slurmctld is down pointed at --partition and --time; a stale
// SLURM_JOB_ID at the shared paths. Each now names its own cause.
TEST(SlurmErrorHint, NamesAControllerThatDoesNotAnswerAndAJobThatIsGone) {
  const auto down = slurm_error_hint(
      "salloc: error: Job submit/allocate failed: Unable to contact slurm controller (connect failure)");
  ASSERT_TRUE(down);
  EXPECT_NE(down->find("slurmctld) does not answer: check that it runs (scontrol ping)"), std::string::npos) << *down;
  const auto gone = slurm_error_hint("srun: error: Slurm job 23 has expired");
  ASSERT_TRUE(gone);
  EXPECT_NE(gone->find("unset SLURM_JOB_ID and SLURM_JOB_NODELIST"), std::string::npos) << *gone;
  EXPECT_FALSE(slurm_error_hint("salloc: error: invalid partition specified: nosuch"));
}

}  // namespace sluice::console
