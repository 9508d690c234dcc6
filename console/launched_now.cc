#include "console/launched_now.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <mutex>
#include <utility>

#include "console/subprocess.h"

namespace sluice::console {

namespace {

struct Registry {
  std::mutex mu;
  std::map<const void*, Launched> held;
};

Registry& registry() {
  static auto* r = new Registry();  // used until the process exits, from any thread
  return *r;
}

}  // namespace

void publish_launched(const void* launcher, Launched launched) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  if (launched.sruns.empty() && launched.allocation.empty() && launched.token_file.empty()) {
    r.held.erase(launcher);
  } else {
    r.held[launcher] = std::move(launched);
  }
}

std::string end_launched_now() {
  std::map<const void*, Launched> held;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    held.swap(r.held);
  }
  std::string done;
  for (const auto& [launcher, l] : held) {
    for (const pid_t srun : l.sruns) ::kill(srun, SIGTERM);
    if (!l.sruns.empty()) done += (done.empty() ? "" : "; ") + std::to_string(l.sruns.size()) + " job step(s) told to end";
    if (!l.allocation.empty()) {
      const CommandOutput r = run_and_capture({"scancel", l.allocation}, std::chrono::seconds(5));
      done += (done.empty() ? "" : "; ") + ("Slurm job " + l.allocation) +
              (r.ok() ? " cancelled" : " not cancelled (scancel " + l.allocation + " by hand)");
    }
    std::error_code ec;
    if (!l.token_file.empty()) std::filesystem::remove(l.token_file, ec);
  }
  return done;
}

}  // namespace sluice::console
