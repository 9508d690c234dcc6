#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <mutex>
#include <thread>

#include "console/commands.h"
#include "console/exit_codes.h"
#include "console/remote.h"
#include "control/codec.h"
#include "console/report.h"
#include "console/run_status.h"
#include "console/stall_watch.h"
#include "console/stdout_above_progress.h"
#include "console/status_sampler.h"
#include "console/subprocess.h"
#include "console/ui_server.h"
#include "runtime/backends.h"
#include "runtime/crash_report.h"
#include "runtime/engine.h"
#include "runtime/graph.h"
#include "stream/input_port.h"
#include "log/log_output.h"
#include "text/shortened.h"

namespace sluice::console {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// The signals the console turns into a cancelled run, plus SIGUSR1 (our own wake-up).
sigset_t watched_signals() {
  sigset_t set;
  sigemptyset(&set);
  add_stop_signals(&set);
  sigaddset(&set, SIGUSR1);
  return set;
}

// Must run before any thread starts: threads inherit the mask, and a signal that reaches a
// thread which does not block it is handled there (or dropped, if the shell started us
// with it ignored) instead of reaching sigwait.
void block_watched_signals() {
  sigset_t set = watched_signals();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

// Turns SIGINT/SIGTERM into Engine::cancel, from a thread of its own (sigwait), so no
// signal handler ever touches the runtime. REQUIRES: block_watched_signals() was called
// before any other thread started.
class SignalWatcher {
 public:
  explicit SignalWatcher(Engine& engine) : engine_(engine), set_(watched_signals()) {
    thread_ = std::thread([this] {
      int sig = 0;
      while (sigwait(&set_, &sig) == 0) {
        if (sig == SIGUSR1) return;
        const std::string signal = signal_name(sig);
        const char* name = signal.c_str();
        // A hang-up comes twice when a session ends (from the shell and from the kernel):
        // only a second SIGINT or SIGTERM, which a person sends, skips the clean-up.
        if (sig == SIGHUP && interrupted_) continue;
        if (interrupted_.exchange(true)) {
          // A second one: the user will not wait for copies stuck in their own code (the
          // first waits up to 5 s for them), as sluice serve's second Ctrl-C.
          std::fprintf(stderr, "\nsluice: interrupted again by %s; exiting now, without the summary\n", name);
          std::fflush(stderr);
          std::_Exit(kExitInterrupted);
        }
        if (isatty(STDERR_FILENO)) {
          std::fprintf(stderr, "\r\033[Ksluice: interrupted by %s; stopping (again to exit at once)\n", name);
        }
        engine_.cancel(std::string("interrupted by ") + name);
      }
    });
  }
  ~SignalWatcher() {
    pthread_kill(thread_.native_handle(), SIGUSR1);
    thread_.join();
  }
  bool interrupted() const { return interrupted_; }

 private:
  Engine& engine_;
  sigset_t set_;
  std::atomic<bool> interrupted_{false};
  std::thread thread_;
};

// Redraws the progress line on stderr twice a second while a run goes on, below what the
// filters print (`out`).
class ProgressLine {
 public:
  ProgressLine(const Engine& engine, bool enabled, StdoutAboveProgress& out)
      : engine_(engine), enabled_(enabled), out_(out) {
    if (!enabled_) return;
    log_output::set_clear_line_first(true);
    thread_ = std::thread([this] { loop(); });
  }
  ~ProgressLine() {
    if (!enabled_) return;
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
    std::cerr << "\r\033[K" << std::flush;
    log_output::set_clear_line_first(false);
  }
  void set_unit(const std::string& label) {
    std::lock_guard<std::mutex> lock(mu_);
    unit_label_ = label;
  }

 private:
  void loop() {
    RecentSamples samples;
    const auto start = Clock::now();
    samples.line("", engine_.stream_stats(), 0, terminal_width() - 1);  // the window's first sample
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return stop_; })) {
      // One write: a filter's log line (which clears the line first) never splits it.
      const std::string text =
          "\r\033[K" + samples.line(unit_label_, engine_.stream_stats(), seconds_since(start), terminal_width() - 1);
      std::lock_guard<std::mutex> terminal(out_.terminal());
      if (out_.mid_line()) continue;  // not over a line the filters have not ended
      (void)!::write(STDERR_FILENO, text.data(), text.size());
    }
  }

  const Engine& engine_;
  const bool enabled_;
  StdoutAboveProgress& out_;
  std::mutex mu_;  // guards stop_ and unit_label_
  std::condition_variable wake_;
  bool stop_ = false;
  std::string unit_label_;
  std::thread thread_;
};

// Watches the embedded run for a stall (StallWatch) from a thread of its own: prints
// what every copy waits on, or cancels the run with that report (--stall-timeout).
class StallMonitor {
 public:
  StallMonitor(Engine& engine, const RunOptions& options, RunStatus& status)
      : engine_(engine), status_(status), watch_(options.stall_after, options.stall_fails) {
    thread_ = std::thread([this] { loop(); });
  }
  ~StallMonitor() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  // A unit of work starts (or the units are over: active = false).
  void set_active(bool active) {
    std::lock_guard<std::mutex> lock(mu_);
    active_ = active;
    if (active) watch_.start_unit(buffers_moved(engine_.stream_stats()));
  }

 private:
  void loop() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!wake_.wait_for(lock, std::chrono::milliseconds(250), [this] { return stop_; })) {
      if (!active_) continue;
      const std::vector<StreamStats> streams = engine_.stream_stats();
      if (streams.empty()) continue;  // no stream, no buffer to move: copies that only print, say
      const StallWatch::Verdict verdict = watch_.observe(buffers_moved(streams));
      if (verdict == StallWatch::Verdict::kMoving) {
        if (!watch_.stalled()) status_.moving();
        continue;
      }
      const std::string report = stall_report(watch_.quiet_seconds(), engine_.activity(), streams);
      if (verdict == StallWatch::Verdict::kReport) {
        status_.stalled(report);
        // Over a progress line only on a terminal: a log file gets no escape codes.
        std::cerr << (isatty(STDERR_FILENO) ? "\r\033[K" : "") << "sluice: warning: " << report << "\n(sluice keeps waiting; --stall-timeout SECONDS "
                  << "makes such a run fail)" << std::endl;
      } else {
        engine_.cancel(report + "\n(stopped by --stall-timeout)", "stall");
      }
    }
  }

  Engine& engine_;
  RunStatus& status_;  // the live view's (--ui): shows the report while the stall lasts
  std::mutex mu_;  // guards everything below
  std::condition_variable wake_;
  StallWatch watch_;
  bool active_ = false;
  bool stop_ = false;
  std::thread thread_;
};

}  // namespace

int run_command(const RunOptions& options) {
  // A crash names the filter copy it happened in (or says it happened outside any) before
  // the process dies. Installed before anything loads, a JVM included (crash_report.h).
  const bool show_progress = options.progress && isatty(STDERR_FILENO);
  const crash::Output crash_output{show_progress ? "\r\033[Ksluice: " : "sluice: ", false, -1};  // over the progress line
  crash::set_output(crash_output);
  crash::install_handlers();
  if (!options.metrics_path.empty()) {
    // Found before the run, not after it: a run whose metrics cannot be kept is not started.
    try {
      check_metrics_writable(options.metrics_path);
    } catch (const std::exception& e) {
      std::cerr << "sluice: " << e.what() << "\n";
      return kExitUsage;
    }
  }
  topo::Topology topology;
  try {
    topology = topo::parse_topology_file(options.topology_path);
    if (!options.work.empty()) topology.work = options.work;
    if (!options.hosts.empty()) apply_hosts_option(topology, options.hosts);
    check_loadable(topology);
    if (topology.hosts.empty() && options.launch.launcher.empty()) Graph::check_embedded_memory(topology);
  } catch (const std::exception& e) {
    std::cerr << e.what() << "\n";
    return kExitBadTopology;
  }
  if (!topology.hosts.empty() || !options.launch.launcher.empty()) {
    for (const std::string& work : topology.work) {
      if (work.size() > control::kMaxPayload) {
        std::cerr << "sluice: " << control::payload_too_large("a unit's --work or work: entry", work.size()) << "\n";
        return kExitUsage;
      }
    }
    return run_remote(options, topology);
  }

  block_watched_signals();  // before the --ui thread starts
  // Before any filter is loaded: what they print goes above the progress line.
  StdoutAboveProgress out(show_progress && isatty(STDOUT_FILENO), crash_output);
  RunStatus status(topology);
  std::unique_ptr<UiServer> ui;
  try {
    ui = start_ui(options.ui, status);
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return kExitUsage;
  }
  RunStatus* const watched = ui ? &status : nullptr;

  RunReport report;
  report.topology_name = topology.name;
  report.topology_file = topology.file;
  const auto start = Clock::now();
  std::unique_ptr<Engine> engine;
  try {
    engine = std::make_unique<Engine>(topology);
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    if (ui) {
      report.failure = Failure{"", -1, "local", 0, "create", e.what()};
      report.exit_code = kExitRunFailed;
      status.finish(report);
      linger(*ui, options.ui.linger);
    }
    return kExitRunFailed;
  }
  {
    SignalWatcher signals(*engine);
    ProgressLine progress(*engine, show_progress, out);
    StallMonitor stalls(*engine, options, status);
    StatusSampler sampler(watched, [&engine](RunStatus& s) { s.sample(engine->stream_stats(), engine->activity()); });
    report.failure = engine->start();
    if (!report.failure) status.started();
    for (std::size_t i = 0; i < topology.work.size() && !report.failure; ++i) {
      UnitRecord unit{i, topology.work[i], 0, false, ""};
      progress.set_unit("unit " + std::to_string(i + 1) + "/" + std::to_string(topology.work.size()) +
                        " " + text::bracketed(unit.work, 200));
      const auto unit_start = Clock::now();
      stalls.set_active(true);
      status.unit_started(i);
      // `to: client` is read by a program that submits units (sluice serve, or
      // sluice/application.h); a plain run counts its buffers and discards them.
      std::thread client;
      if (InputPort* results = engine->client_port()) {
        client = std::thread([results] {
          results->begin_unit();
          try {
            while (results->read()) {
            }
          } catch (const Aborted&) {
          }
        });
      }
      report.failure = engine->run_unit(i, unit.work);
      if (client.joinable()) client.join();
      stalls.set_active(false);
      unit.seconds = seconds_since(unit_start);
      unit.finished = !report.failure;
      status.unit_ended(unit);
      report.units.push_back(unit);
    }
    for (std::size_t i = report.units.size(); i < topology.work.size(); ++i) {
      report.units.push_back(UnitRecord{i, topology.work[i], 0, false, "not run"});
    }
    report.wall_seconds = seconds_since(start);
    report.streams = engine->stream_stats();
    report.stuck = engine->stuck_copies();
    report.exit_code = !report.failure ? kExitOk
                       : signals.interrupted() ? kExitInterrupted
                                               : kExitRunFailed;
  }
  out.finish();  // the filters' lines before the summary
  status.finish(report);
  const int exit_status = print_report(report, options.metrics_path, "stuck in user code");
  if (ui) linger(*ui, options.ui.linger);
  if (!report.stuck.empty()) {
    // Threads are stuck in user code; they cannot be joined, so do not try.
    std::cerr.flush();
    std::cout.flush();
    _exit(exit_status);
  }
  ui.reset();
  engine.reset();
  return exit_status;
}

}  // namespace sluice::console
