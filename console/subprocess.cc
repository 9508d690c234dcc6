#include "console/subprocess.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <thread>

#include "sluice/error.h"

namespace sluice::console {

namespace {

using Clock = std::chrono::steady_clock;

// In the child, between fork and exec: only async-signal-safe calls.
[[noreturn]] void exec_child(const std::vector<std::string>& argv, int out_fd, int err_fd) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  setpgid(0, 0);
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull >= 0) dup2(devnull, 0);
  dup2(out_fd, 1);
  dup2(err_fd, 2);
  // Nothing else of the console's: Asio opens its sockets without close-on-exec, so serve's
  // --listen and --ui sockets stayed open in every srun, holding the ports after serve died.
  // close_range needs Linux 5.9; before that, one by one.
  if (::close_range(3, ~0U, 0) != 0) {
    const long max_fd = ::sysconf(_SC_OPEN_MAX);
    for (long fd = 3; fd < (max_fd > 0 ? max_fd : 65536); ++fd) ::close(static_cast<int>(fd));
  }
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  execvp(args[0], args.data());
  const char msg[] = "cannot execute the command\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(127);
}

std::string describe(int wstatus, int* status) {
  if (WIFEXITED(wstatus)) {
    *status = WEXITSTATUS(wstatus);
    return "exited with status " + std::to_string(*status);
  }
  *status = 128 + WTERMSIG(wstatus);
  return "was killed by " + signal_name(WTERMSIG(wstatus));
}

}  // namespace

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

void add_stop_signals(sigset_t* set) {
  sigaddset(set, SIGINT);
  sigaddset(set, SIGTERM);
  sigaddset(set, SIGHUP);
}

int take_interrupt() {
  sigset_t set;
  sigemptyset(&set);
  add_stop_signals(&set);
  timespec zero{0, 0};
  const int sig = sigtimedwait(&set, nullptr, &zero);
  return sig > 0 ? sig : 0;
}

CommandOutput run_and_capture(const std::vector<std::string>& argv, std::chrono::milliseconds timeout) {
  CommandOutput result;
  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0) return result;
  if (pipe2(err, O_CLOEXEC) != 0) {
    close(out[0]);
    close(out[1]);
    return result;
  }
  const pid_t pid = fork();
  if (pid == 0) exec_child(argv, out[1], err[1]);
  if (pid > 0) setpgid(pid, pid);  // also here, so that it holds before we ever signal the group
  close(out[1]);
  close(err[1]);
  if (pid < 0) {
    close(out[0]);
    close(err[0]);
    return result;
  }
  const auto deadline = Clock::now() + timeout;
  pollfd fds[2] = {{out[0], POLLIN, 0}, {err[0], POLLIN, 0}};
  int open_fds = 2;
  while (open_fds > 0 && Clock::now() < deadline) {
    if (poll(fds, 2, 100) <= 0) continue;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || fds[i].revents == 0) continue;
      char buf[4096];
      const ssize_t n = read(fds[i].fd, buf, sizeof buf);
      if (n > 0) {
        (i == 0 ? result.out : result.err).append(buf, static_cast<std::size_t>(n));
      } else {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open_fds;
      }
    }
  }
  for (auto& f : fds) {
    if (f.fd >= 0) close(f.fd);
  }
  int wstatus = 0;
  if (open_fds > 0) {  // past the deadline
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
  }
  while (waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  describe(wstatus, &result.status);
  return result;
}

Child::Child(const std::vector<std::string>& argv, const std::string& out_path, const std::string& err_path) {
  // O_NOFOLLOW: a --run-dir others can write to may hold a symlink planted at the name.
  const int out_fd = open(out_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  const int err_fd =
      err_path == out_path ? out_fd : open(err_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (out_fd < 0 || err_fd < 0) {
    if (out_fd >= 0) close(out_fd);
    if (err_fd >= 0 && err_fd != out_fd) close(err_fd);
    throw Error("cannot open '" + out_path + "' for " + argv[0] + "'s output: " + strerror(errno));
  }
  pid_ = fork();
  if (pid_ == 0) exec_child(argv, out_fd, err_fd);
  const int saved = errno;
  close(out_fd);
  if (err_fd != out_fd) close(err_fd);
  if (pid_ < 0) throw Error("cannot start " + argv[0] + ": " + strerror(saved));
  setpgid(pid_, pid_);  // also here, so that it holds before we ever signal the group
}

Child::~Child() {
  if (pid_ > 0 && running()) {
    kill(-pid_, SIGKILL);
    kill(pid_, SIGKILL);
    wait_for(std::chrono::seconds(5));
  }
}

bool Child::running() {
  if (pid_ <= 0 || !how_.empty()) return false;
  int wstatus = 0;
  const pid_t r = waitpid(pid_, &wstatus, WNOHANG);
  if (r == 0) return true;
  if (r == pid_) {
    how_ = describe(wstatus, &status_);
  } else {
    how_ = "ended (it could not be reaped)";
  }
  return false;
}

void Child::signal(int sig) {
  if (running()) kill(pid_, sig);
}

bool Child::wait_for(std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (running()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

}  // namespace sluice::console
