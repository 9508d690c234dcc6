// Child processes for the launchers: short commands whose output the console reads
// (scontrol, squeue, scancel), and long-lived ones it watches (salloc, srun).
//
// Every child starts with an empty signal mask (the console blocks SIGINT/SIGTERM in all of
// its threads, and a child would inherit that) and in a process group of its own, so a
// Ctrl-C at the terminal reaches only the console, which then ends its children itself.
//
// Not thread-safe: the console's main thread only.
#ifndef SLUICE_CONSOLE_SUBPROCESS_H_
#define SLUICE_CONSOLE_SUBPROCESS_H_

#include <signal.h>
#include <sys/types.h>

#include <chrono>
#include <optional>

#include <string>
#include <vector>

namespace sluice::console {

struct CommandOutput {
  int status = -1;      // exit status; 128 + signal when killed; -1 when it could not start
  std::string out;      // stdout
  std::string err;      // stderr
  bool ok() const { return status == 0; }
};

// Runs argv[0] (found in PATH) with `argv`, waits up to `timeout` (then SIGKILL), returns
// its status and output. Never throws.
CommandOutput run_and_capture(const std::vector<std::string>& argv,
                              std::chrono::milliseconds timeout = std::chrono::seconds(30));

// A long-lived child whose stdout and stderr go to files. The destructor kills it
// (SIGKILL to its process group) and reaps it, if it still runs.
class Child {
 public:
  // Starts `argv` with stdout to `out_path` and stderr to `err_path` (appended; the same path
  // for both is fine; a symbolic link at either is not followed). Throws sluice::Error when
  // it cannot start.
  Child(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path);
  ~Child();
  Child(const Child&) = delete;
  Child& operator=(const Child&) = delete;

  pid_t pid() const { return pid_; }
  // Reaps it if it ended; true while it runs.
  bool running();
  // How it ended, once running() returned false: "exited with status 1", "was killed by SIGKILL".
  const std::string& how_it_ended() const { return how_; }
  int exit_status() const { return status_; }
  // Sends `sig` to it (not its group).
  void signal(int sig);
  // Waits up to `timeout` for it to end. True when it did.
  bool wait_for(std::chrono::milliseconds timeout);

 private:
  pid_t pid_ = -1;
  int status_ = -1;
  std::string how_;
};

// Adds the signals that stop the console as an interrupt would, SIGINT, SIGTERM and SIGHUP
// (a closed terminal or a dropped ssh session), to `set`: each is cleaned up after (steps
// ended, an allocation released), never a sudden death.
void add_stop_signals(sigset_t* set);

// The stop signal pending for this process, taken (REQUIRES: all blocked in every thread);
// 0 when none.
int take_interrupt();

// "SIGINT", "SIGTERM", ...
std::string signal_name(int sig);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_SUBPROCESS_H_
