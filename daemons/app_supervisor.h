// AppSupervisor: one sluice-appd that sluiced started for a console, and the control
// socket to it. AppTable: the app daemons alive, by pid, for the SIGCHLD handler.
//
// The app daemon runs in a process group of its own (killed with sluiced: PR_SET_PDEATHSIG)
// with its control socket on fd 3 and the write end of a crash pipe on fd 4 (its crash
// handler writes there what crashed). The supervisor relays what it says to the console (and
// stops reading while the console has too much waiting for it: a paused or slow console holds
// the app daemon back, and with it the filters' stdout, instead of filling sluiced), kills
// its group when asked (abort, shutdown without exit, the console gone) and when it sends
// no heartbeat for 4 s after it started (hung), and reports how it ended (exit_report, with
// the crash report if any) once it has been reaped and its last messages were relayed. It
// heartbeats the app daemon every 500 ms, which exits after 4 s without a word from sluiced
// (a stopped or hung sluiced leaves no copy running and no data port open).
//
// Single-threaded: everything on the io_context's thread. Held by its console session and
// by its handlers in flight; the AppTable holds it weakly.
#ifndef SLUICE_DAEMONS_APP_SUPERVISOR_H_
#define SLUICE_DAEMONS_APP_SUPERVISOR_H_

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>  // before Boost.Asio, whose awaitable.hpp uses std::exchange

#include <boost/asio.hpp>

#include "control/codec.h"
#include "daemons/frame_stream.h"

namespace sluice::sluiced {

class AppTable;

class AppSupervisor : public std::enable_shared_from_this<AppSupervisor> {
 public:
  // Sends a message to the console the app daemon was launched for; false when the console
  // has more waiting for it than it should (then nothing more is read from the app daemon
  // until console_has_room()).
  using ToConsole = std::function<bool(const control::Envelope&)>;

  // `peer` names the console in log lines ("console #3 (10.0.0.5:41234)").
  AppSupervisor(boost::asio::io_context& io, std::string peer, const control::Launch& launch, ToConsole to_console);
  ~AppSupervisor();
  AppSupervisor(const AppSupervisor&) = delete;
  AppSupervisor& operator=(const AppSupervisor&) = delete;

  // Starts `appd_path` with the control socket on fd 3 and the crash pipe on fd 4, registers
  // it in `table` and sends it `launch_message`. Returns why it could not (socketpair, pipe or
  // fork failed: nothing was started), or nullopt.
  std::optional<std::string> start(const std::string& appd_path, const control::Envelope& launch_message,
                                   AppTable& table);

  // Started, and not yet reaped.
  bool running() const { return pid_ > 0 && !status_; }
  const std::string& app_id() const { return app_id_; }

  // Passes a console's message (wiring, start_unit) on to the app daemon.
  void send(const control::Envelope& message);
  // The console aborts the run: passes the abort on (the app daemon reports what moved on
  // this host, for the summary's counts, and exits), then SIGTERM to the group if it has not
  // exited within 250 ms, SIGKILL 1 s later. REQUIRES: running().
  void abort(const std::string& reason);
  // The console ends the run: passes `shutdown` on, SIGKILL if the app daemon has not
  // exited 3 s later. REQUIRES: running().
  void shutdown(const control::Envelope& shutdown);
  // The console is gone: SIGKILL to the group (when running), close the socket, and send
  // the console nothing more.
  void console_gone();
  // The console's queue has room again: reading from the app daemon resumes.
  void console_has_room();
  // From the AppTable: the app daemon ended with `status` (waitpid's).
  void exited(int status);

 private:
  void read_next();
  void on_read(const FrameRead& r);
  // The app daemon sent something that is not a control frame: kill it, read no more.
  void broke_protocol();
  // Signals the app daemon's process group (unless it was reaped); after anything but
  // SIGKILL, SIGKILL follows 1 s later.
  void kill(int sig, const std::string& why);
  // `sig` (SIGKILL) `after` from now, unless it was reaped by then (replaces an earlier one).
  void kill_later(std::chrono::steady_clock::duration after, std::string why, int sig = SIGKILL);
  void watch();
  // Sends a heartbeat now and every 500 ms while the app daemon runs.
  void beat();
  void maybe_report_exit();

  boost::asio::io_context& io_;
  const std::string peer_;
  const std::string app_id_;
  const std::string host_;
  const ToConsole to_console_;
  bool console_gone_ = false;
  pid_t pid_ = -1;
  bool expected_end_ = false;  // after shutdown or abort
  bool eof_ = false;           // nothing more to read from the app daemon
  std::optional<int> status_;  // once reaped
  bool killed_ = false;        // SIGKILL sent: nothing more to send or say until it is reaped
  int crash_fd_ = -1;          // the crash pipe's read end, until reaped
  std::string crash_;          // what the app daemon's crash handler wrote, once reaped
  FrameStream<boost::asio::local::stream_protocol::socket> stream_;
  boost::asio::steady_timer kill_timer_;
  boost::asio::steady_timer watch_;
  boost::asio::steady_timer beat_;
  std::uint64_t beats_ = 0;
  bool started_ = false;
  // The console had too much waiting for it: no read of the app daemon is in flight (its
  // heartbeats wait in the socket, so its silence is not counted meanwhile).
  bool held_back_ = false;
  std::chrono::steady_clock::time_point last_heard_;
};

// The app daemons sluiced started, by pid.
class AppTable {
 public:
  void add(pid_t pid, std::weak_ptr<AppSupervisor> app) {
    children_[pid] = std::move(app);
    ++started_;
  }
  // App daemons started and not yet reaped; started and ended since sluiced started.
  std::size_t running() const { return children_.size(); }
  std::uint64_t started() const { return started_; }
  std::uint64_t ended() const { return ended_; }
  // SIGCHLD: reaps every child that ended and tells its supervisor.
  void reap();
  // Shutdown: SIGKILL to every app daemon's process group.
  void kill_all();
  // Shutdown, after kill_all(): waits for every app daemon to end.
  void wait_all();

 private:
  std::map<pid_t, std::weak_ptr<AppSupervisor>> children_;
  std::uint64_t started_ = 0;
  std::uint64_t ended_ = 0;
};

}  // namespace sluice::sluiced

#endif  // SLUICE_DAEMONS_APP_SUPERVISOR_H_
