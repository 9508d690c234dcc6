#include "console/launcher.h"

#include "console/slurm_launcher.h"
#include "sluice/error.h"

namespace sluice::console {

std::string launcher_name_problem(const std::string& name) {
  if (name == "slurm") return "";
  return "unknown launcher '" + name + "'; use slurm (or leave --launcher out to use hand-started sluiced)";
}

std::optional<std::string> name_the_end(Launcher& launcher, Failure& failure) {
  if (!failure.filter.empty() || failure.stage == "cancelled") return std::nullopt;
  std::optional<std::string> ended = launcher.ended();
  if (ended) failure.message = *ended + "; so: " + failure.message;
  return ended;
}

std::unique_ptr<Launcher> make_launcher(const LauncherOptions& options) {
  if (options.launcher.empty()) return nullptr;
  if (options.launcher == "slurm") return std::make_unique<SlurmLauncher>(options);
  throw Error(launcher_name_problem(options.launcher));
}

}  // namespace sluice::console
