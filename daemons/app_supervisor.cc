#include "daemons/app_supervisor.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "control/own_pause.h"
#include "daemons/log.h"

namespace asio = boost::asio;
using sluice::control::Envelope;
namespace dlog = sluice::daemon;

namespace sluice::sluiced {

namespace {

constexpr auto kKillGrace = std::chrono::milliseconds(1000);
constexpr auto kShutdownGrace = std::chrono::milliseconds(3000);
// After an abort: time for the app daemon's last report and exit.
constexpr auto kAbortGrace = std::chrono::milliseconds(250);
// An app daemon heartbeats every 500 ms once started; this long without a word and it is
// taken for hung (stopped, deadlocked) and killed.
constexpr auto kAppSilence = std::chrono::milliseconds(4000);

// The largest crash report read from an app daemon: one line, in practice ~100 bytes.
constexpr std::size_t kMaxCrashReport = 1024;

// In the child, between fork and exec: its own process group, killed when sluiced dies,
// control on fd 3, the crash pipe's write end on fd 4. Never returns.
[[noreturn]] void exec_appd(const std::string& appd_path, int control_fd, int crash_fd, pid_t parent) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) _exit(127);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::signal(SIGPIPE, SIG_DFL);
  // Out of the way of 3 and 4 first (either may be one of them now), then into place; dup2
  // leaves the new descriptors open across exec.
  const int control = ::fcntl(control_fd, F_DUPFD_CLOEXEC, 10);
  const int crash = ::fcntl(crash_fd, F_DUPFD_CLOEXEC, 10);
  if (control < 0 || crash < 0 || ::dup2(control, 3) != 3 || ::dup2(crash, 4) != 4) _exit(127);
  // Nothing of sluiced's (its listening socket, other consoles' connections: Asio does not
  // open them close-on-exec) may leak into the app daemon. close_range needs Linux 5.9;
  // before that, close one by one.
  if (::close_range(5, ~0U, 0) != 0) {
    const long max_fd = ::sysconf(_SC_OPEN_MAX);
    for (long fd = 5; fd < (max_fd > 0 ? max_fd : 65536); ++fd) ::close(static_cast<int>(fd));
  }
  // sluiced's --verbose is the app daemon's too (SLUICE_LOG=debug reaches it anyway).
  const char* verbose = logging::enabled(dlog::Level::kDebug) ? "--verbose" : nullptr;
  const char* argv[] = {appd_path.c_str(), "--control-fd", "3", "--crash-fd", "4", verbose, nullptr};
  ::execv(appd_path.c_str(), const_cast<char* const*>(argv));
  const std::string msg = "sluice-appd: cannot execute " + appd_path + ": " + std::strerror(errno) + "\n";
  (void)!::write(STDERR_FILENO, msg.data(), msg.size());
  _exit(127);
}

// The first line the app daemon's crash handler wrote to the pipe (what is printable of it),
// or "". The writer is gone (reaped), so reading stops at the end of what it wrote.
std::string read_crash_report(int fd) {
  std::string text;
  char chunk[512];
  while (text.size() < kMaxCrashReport) {
    const ssize_t n = ::read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<std::size_t>(n));
  }
  text = text.substr(0, std::min(text.find('\n'), kMaxCrashReport));
  for (char& c : text) {
    if (c < 0x20 || c == 0x7f) c = '?';
  }
  return text;
}

}  // namespace

AppSupervisor::AppSupervisor(asio::io_context& io, std::string peer, const control::Launch& launch,
                             ToConsole to_console)
    : io_(io),
      peer_(std::move(peer)),
      app_id_(launch.application_id()),
      host_(launch.host()),
      to_console_(std::move(to_console)),
      stream_(nullptr, io),  // a failed write needs nothing: SIGCHLD reports the app daemon's end
      kill_timer_(io),
      watch_(io),
      beat_(io) {}

AppSupervisor::~AppSupervisor() {
  if (crash_fd_ >= 0) ::close(crash_fd_);
}

std::optional<std::string> AppSupervisor::start(const std::string& appd_path, const Envelope& launch_message,
                                                AppTable& table) {
  int fds[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return std::string("socketpair failed: ") + std::strerror(errno);
  }
  // The crash pipe: the app daemon's crash handler writes what crashed to its end (fd 4);
  // this end is read when the app daemon has been reaped.
  int crash[2];
  if (::pipe2(crash, O_CLOEXEC) != 0) {
    const int pipe_errno = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    return std::string("pipe failed: ") + std::strerror(pipe_errno);
  }
  const pid_t parent = ::getpid();
  io_.notify_fork(asio::execution_context::fork_prepare);
  const pid_t pid = ::fork();
  if (pid < 0) {
    const int fork_errno = errno;
    io_.notify_fork(asio::execution_context::fork_parent);
    for (int fd : {fds[0], fds[1], crash[0], crash[1]}) ::close(fd);
    return std::string("fork failed: ") + std::strerror(fork_errno);
  }
  if (pid == 0) exec_appd(appd_path, fds[1], crash[1], parent);
  io_.notify_fork(asio::execution_context::fork_parent);
  ::setpgid(pid, pid);  // also from here, so the group exists before any kill
  ::close(fds[1]);
  ::close(crash[1]);
  ::fcntl(crash[0], F_SETFL, O_NONBLOCK);
  crash_fd_ = crash[0];
  pid_ = pid;
  stream_.socket().assign(asio::local::stream_protocol(), fds[0]);
  table.add(pid, weak_from_this());
  dlog::info(peer_ + ": launched application '" + app_id_ + "' as host " + host_ + ": sluice-appd pid " +
             std::to_string(pid));
  send(launch_message);
  read_next();
  beat();
  return std::nullopt;
}

void AppSupervisor::send(const Envelope& message) {
  if (!message.has_heartbeat()) dlog::debug(peer_ + ": console -> app daemon: " + control::kind(message));
  stream_.send(shared_from_this(), message);
}

void AppSupervisor::abort(const std::string& reason) {
  expected_end_ = true;
  Envelope m;
  m.mutable_abort()->set_reason(reason);
  send(m);
  kill_later(kAbortGrace, "the console aborted the run: " + reason, SIGTERM);
}

void AppSupervisor::shutdown(const Envelope& shutdown) {
  expected_end_ = true;
  send(shutdown);
  kill_later(kShutdownGrace, "it did not exit within 3 s of shutdown");
}

void AppSupervisor::console_gone() {
  console_gone_ = true;
  watch_.cancel();
  beat_.cancel();
  if (running()) kill(SIGKILL, "its console is gone");
  boost::system::error_code ec;
  stream_.socket().close(ec);
}

void AppSupervisor::read_next() {
  auto self = shared_from_this();
  stream_.read(self, control::kMaxFrame, [self](const FrameRead& r) { self->on_read(r); });
}

void AppSupervisor::on_read(const FrameRead& r) {
  using Status = FrameRead::Status;
  switch (r.status) {
    case Status::kClosed:
    case Status::kTruncated:
    case Status::kFailed:
      eof_ = true;
      maybe_report_exit();
      return;
    case Status::kBadLength:
    case Status::kTooLarge:
      dlog::error(peer_ + ": app daemon sent a bad frame: " + r.problem);
      return broke_protocol();
    case Status::kBadBody:
      dlog::error(peer_ + ": app daemon sent " + r.problem);
      return broke_protocol();
    case Status::kMessage:
      break;
  }
  const Envelope& m = r.message;
  last_heard_ = std::chrono::steady_clock::now();
  if (!m.has_heartbeat()) dlog::debug(peer_ + ": app daemon -> " + control::kind(m));
  switch (m.body_case()) {
    case Envelope::kHeartbeat:
      break;
    case Envelope::kStarted:
      if (!started_) {
        started_ = true;
        watch();
      }
      if (!console_gone_) to_console_(m);
      break;
    case Envelope::kAppReady:
    case Envelope::kUnitDone:
    case Envelope::kProgress:
    case Envelope::kFailure:
    case Envelope::kFilterLog:  // the app daemon caps these (log_forwarder.h)
      if (!console_gone_ && !to_console_(m)) {
        held_back_ = true;  // console_has_room() reads on
        return;
      }
      break;
    default:
      dlog::warn(peer_ + ": ignoring " + control::kind(m) + " from the app daemon");
  }
  read_next();
}

void AppSupervisor::console_has_room() {
  if (!held_back_ || console_gone_) return;
  held_back_ = false;
  last_heard_ = std::chrono::steady_clock::now();  // its heartbeats waited in the socket
  read_next();
}

void AppSupervisor::broke_protocol() {
  kill(SIGKILL, "it broke the control protocol");
  eof_ = true;
  maybe_report_exit();  // in case it was reaped already
}

void AppSupervisor::kill(int sig, const std::string& why) {
  if (pid_ <= 0 || status_ || killed_) return;  // once killed, it is only not reaped yet
  killed_ = sig == SIGKILL;
  dlog::info(peer_ + ": killing sluice-appd pid " + std::to_string(pid_) + " (" + dlog::signal_name(sig) +
             "): " + why);
  ::kill(-pid_, sig);
  if (sig != SIGKILL) kill_later(kKillGrace, "it did not exit within 1 s");
}

void AppSupervisor::kill_later(std::chrono::steady_clock::duration after, std::string why, int sig) {
  kill_timer_.expires_after(after);
  kill_timer_.async_wait([self = shared_from_this(), why = std::move(why), sig](boost::system::error_code ec) {
    if (ec || self->status_) return;
    self->kill(sig, why);
  });
}

void AppSupervisor::watch() {
  watch_.expires_after(std::chrono::milliseconds(500));
  watch_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (ec || self->status_ || self->console_gone_) return;
    if (self->held_back_) return self->watch();  // not read: not silent
    // sluiced itself was out (stopped, starved): the app daemon's silence was ours. A fresh
    // window: its heartbeats, or its exit, wait to be read.
    if (control::own_pause_since(self->watch_.expiry()) > std::chrono::steady_clock::duration::zero()) {
      self->last_heard_ = std::chrono::steady_clock::now();
      return self->watch();
    }
    const auto quiet = std::chrono::steady_clock::now() - self->last_heard_;
    if (quiet > kAppSilence) {
      const std::string what = "the app daemon (sluice-appd pid " + std::to_string(self->pid_) +
                               ") sent no heartbeat for " +
                               std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(quiet).count()) +
                               " ms (stopped or hung); sluiced killed it";
      Envelope f;
      f.mutable_failure()->set_host(self->host_);
      f.mutable_failure()->set_copy(-1);
      f.mutable_failure()->set_stage("app daemon");
      f.mutable_failure()->set_message(what);
      self->to_console_(f);
      self->kill(SIGKILL, "it sent no heartbeat for 4 s");
      return;
    }
    self->watch();
  });
}

void AppSupervisor::beat() {
  if (!running() || console_gone_) return;
  Envelope h;
  h.mutable_heartbeat()->set_sequence(++beats_);
  send(h);
  beat_.expires_after(std::chrono::milliseconds(500));
  beat_.async_wait([self = shared_from_this()](boost::system::error_code ec) {
    if (!ec) self->beat();
  });
}

void AppSupervisor::exited(int status) {
  status_ = status;
  kill_timer_.cancel();
  beat_.cancel();
  // Anything left in the group (nothing, normally) goes with it.
  ::kill(-pid_, SIGKILL);
  if (crash_fd_ >= 0) {
    crash_ = read_crash_report(crash_fd_);
    ::close(crash_fd_);
    crash_fd_ = -1;
  }
  std::string how = WIFEXITED(status) ? "exited with status " + std::to_string(WEXITSTATUS(status))
                                      : "was killed by " + dlog::signal_name(WTERMSIG(status));
  if (!crash_.empty()) how += " after reporting: " + crash_;
  dlog::log(expected_end_ || (WIFEXITED(status) && WEXITSTATUS(status) == 0) ? dlog::Level::kInfo
                                                                             : dlog::Level::kWarn,
            peer_ + ": sluice-appd pid " + std::to_string(pid_) + " (application '" + app_id_ + "') " + how);
  maybe_report_exit();
}

void AppSupervisor::maybe_report_exit() {
  // Report after the app daemon's last messages (a failure, typically) were relayed.
  if (!status_ || !eof_ || console_gone_) return;
  const int status = *status_;
  Envelope e;
  auto* r = e.mutable_exit_report();
  r->set_host(host_);
  r->set_pid(pid_);
  r->set_exited(WIFEXITED(status));
  r->set_exit_status(WIFEXITED(status) ? WEXITSTATUS(status) : 0);
  r->set_signal(WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  r->set_expected(expected_end_);
  r->set_crash(crash_);
  to_console_(e);
}

// ---- AppTable ----------------------------------------------------------------------------

void AppTable::reap() {
  int status = 0;
  pid_t pid;
  while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
    auto it = children_.find(pid);
    if (it == children_.end()) continue;
    if (auto app = it->second.lock()) {
      app->exited(status);
    } else {
      dlog::info("sluice-appd pid " + std::to_string(pid) + " ended after its console left");
    }
    children_.erase(it);
    ++ended_;
  }
}

void AppTable::kill_all() {
  for (auto& [pid, app] : children_) ::kill(-pid, SIGKILL);
}

void AppTable::wait_all() {
  for (auto& [pid, app] : children_) ::waitpid(pid, nullptr, 0);
}

}  // namespace sluice::sluiced
