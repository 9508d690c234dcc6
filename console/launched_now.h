// What the launchers of this process have started that a console exiting at once must still
// end: sluice serve's second Ctrl-C skips the orderly stop (Launcher::stop, which waits for
// every step and for Slurm to forget the job), and nothing else would end the allocation it
// made, whose steps then ran until someone ran scancel.
//
// Launchers publish what they hold as it changes; end_launched_now() ends all of it without
// waiting for anything to go. Thread-safe: publish from a launcher's thread, end from the
// thread that decided to exit.
#ifndef SLUICE_CONSOLE_LAUNCHED_NOW_H_
#define SLUICE_CONSOLE_LAUNCHED_NOW_H_

#include <sys/types.h>

#include <string>
#include <vector>

namespace sluice::console {

struct Launched {
  std::vector<pid_t> sruns;  // the host daemons' job steps (srun forwards SIGTERM to them)
  std::string allocation;    // a Slurm job the launcher made ("" if it made none)
  std::string token_file;    // the run's token, removed
};

// Replaces what `launcher` (its address, as a key) holds; an empty Launched forgets it.
void publish_launched(const void* launcher, Launched launched);

// SIGTERM to every published srun, scancel of every published allocation (at most 5 s
// each), and the token files removed. Returns what it did, for the log ("" when nothing).
std::string end_launched_now();

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_LAUNCHED_NOW_H_
