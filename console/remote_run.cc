// `sluice run` across hosts: the console side of the control plane.
//
// 0. With --launcher (launcher.h), first have it start a host daemon per logical host (Slurm
//    job steps) and fill in their addresses and this run's token; stop it at the end, whatever
//    happened. Without one, the host daemons are already running at the addresses in hosts:.
// 1. Connect to every host daemon over TLS 1.3 (the token's PSK, or certificates) and say
//    hello, all before anything starts; a host that does not answer or authenticate ends the run
//    with kExitHostUnavailable, naming the host and its address (connect_hosts.h).
// 2. Place copies (place:, else round-robin over hosts in file order; placement.cc) and
//    send each host with copies a launch; its sluiced starts a sluice-appd, which answers
//    app_ready with its data plane's address.
// 3. Send every app daemon the others' data addresses (wiring); wait for started.
// 4. Per unit of work: start_unit to every host, then wait for unit_done from every host
//    (the barrier the data plane relies on); progress and summary merge the hosts' stats
//    (host_stats.h).
// 5. shutdown to every host; wait for their exit reports; close.
// Any failure (a failure message, an app daemon that ends unexpectedly, a connection that
// closes, a silent host daemon) aborts every host and ends the run non-zero (host_group.h).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <iostream>
#include <sstream>

#include <thread>

#include "application/client_end.h"
#include "console/connect_hosts.h"
#include "console/exit_codes.h"
#include "console/host_group.h"
#include "console/host_stats.h"
#include "console/launch_app.h"
#include "console/launcher.h"
#include "console/remote.h"
#include "console/report.h"
#include "console/run_status.h"
#include "console/stall_watch.h"
#include "console/subprocess.h"
#include "console/ui_server.h"
#include "control/auth.h"
#include "log/log_output.h"
#include "text/shortened.h"
#include "sluice/error.h"

namespace sluice::console {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using control::Envelope;

// The shortest --stall-timeout across hosts: two of the hosts' progress reports.
constexpr std::chrono::milliseconds kShortestRemoteStall{1000};

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// One run across hosts: launch, wiring, the units of work, the report.
class RemoteRun {
 public:
  // `launcher` (may be null; outlives the run) says where a failed host ran.
  RemoteRun(const RunOptions& options, const topo::Topology& topology, std::map<std::string, Placement> placements,
            std::vector<std::unique_ptr<HostClient>> clients, Launcher* launcher, RunStatus* status)
      : options_(options),
        launcher_(launcher),
        status_(status),
        t_(topology),
        placements_(std::move(placements)),
        stats_(topology, clients.size()),
        hosts_(std::move(clients), placements_, stats_),
        run_key_(control::random_bytes(32)) {}

  int run();

 private:
  // Launches the application on every host with copies and wires their data planes
  // together. False on a failure (hosts_.failure()).
  bool launch_and_wire();
  // Redraws the progress line (at most twice a second), or clears it.
  void redraw_progress(bool clear = false);
  // While unit `unit` runs: reports a stall, or fails the run with it (StallWatch).
  void check_stall(std::uint64_t unit);
  // Feeds the --ui's RunStatus (at most four times a second unless `now`), when there is one.
  void sample_status(bool now = false);
  // Every stream's counters: the hosts' latest, and this process's reads of the client stream.
  std::vector<StreamStats> streams() const {
    std::vector<StreamStats> all = stats_.merged();
    if (client_) client_->add_share(all);
    return all;
  }

  const RunOptions& options_;
  Launcher* const launcher_;
  RunStatus* const status_;  // nullptr without --ui
  Clock::time_point last_sample_;
  const topo::Topology& t_;
  const std::map<std::string, Placement> placements_;
  HostStats stats_;
  HostGroup hosts_;
  // This run's key: the app daemons' data planes prove to each other that they know it.
  const std::string run_key_;
  StallWatch stalls_{options_.stall_after, options_.stall_fails};
  // Progress line.
  bool progress_ = false;
  std::string unit_label_;
  RecentSamples samples_;
  const Clock::time_point started_ = Clock::now();
  Clock::time_point last_draw_ = Clock::now();
  // This process's end of the `to: client` stream, when the topology has one.
  std::unique_ptr<ClientEnd> client_;
};

void RemoteRun::redraw_progress(bool clear) {
  if (!progress_) return;
  if (clear) {
    std::cerr << "\r\033[K" << std::flush;
    return;
  }
  if (Clock::now() - last_draw_ < 500ms) return;
  last_draw_ = Clock::now();
  std::cerr << "\r\033[K"
            << samples_.line(unit_label_, streams(), seconds_since(started_), terminal_width() - 1)
            << std::flush;
}

void RemoteRun::sample_status(bool now) {
  if (status_ == nullptr || (!now && Clock::now() - last_sample_ < 250ms)) return;
  last_sample_ = Clock::now();
  status_->sample(streams(), stats_.activity(), host_traffic(hosts_, stats_));
}

void RemoteRun::check_stall(std::uint64_t unit) {
  const std::vector<StreamStats> now = streams();
  if (now.empty()) return;  // no stream, no buffer to move: copies that only print, say
  const StallWatch::Verdict verdict = stalls_.observe(buffers_moved(now));
  if (verdict == StallWatch::Verdict::kMoving) {
    if (status_ != nullptr && !stalls_.stalled()) status_->moving();
    return;
  }
  const std::string report = stall_report(stalls_.quiet_seconds(), stats_.activity(), now, stats_.in_flight());
  if (verdict == StallWatch::Verdict::kReport) {
    if (status_ != nullptr) status_->stalled(report);
    redraw_progress(true);
    std::cerr << "sluice: warning: " << report
              << "\n(sluice keeps waiting; --stall-timeout SECONDS makes such a run fail)" << std::endl;
  } else {
    hosts_.fail_run(Failure{"", -1, "", unit, "stall", report + "\n(stopped by --stall-timeout)"});
  }
}

bool RemoteRun::launch_and_wire() {
  LaunchPlan plan;
  plan.topology = &t_;
  plan.placements = &placements_;
  plan.run_key = run_key_;
  plan.encrypt = options_.encrypt;
  ConnectClient connect_client;
  if (t_.client_stream() != nullptr) {
    // The `to: client` stream comes to this process, which discards it (a program that
    // wants it submits units: sluice serve, or sluice/application.h).
    const std::string listen = any_port_on(hosts_.client(hosts_.active().front()).local_ip());
    client_ = std::make_unique<ClientEnd>(t_, placements_, listen, run_key_, options_.encrypt, options_.data_ports);
    plan.extra_peers[std::string(topo::kClient)] = client_->listen_address();
    connect_client = [this](const std::map<std::string, std::string>& peers, const std::function<bool()>& between) {
        client_->connect(peers, 60s, between);
      };
  }
  return console::launch_and_wire(hosts_, plan, connect_client, [this] {
    redraw_progress();
    sample_status();
  });
}

int RemoteRun::run() {
  RunReport report;
  report.topology_name = t_.name;
  report.topology_file = t_.file;
  const auto start = Clock::now();
  progress_ = options_.progress && isatty(STDERR_FILENO);
  log_output::set_clear_line_first(progress_);  // forwarded filter logs clear the progress line
  hosts_.start_readers();
  bool ok = launch_and_wire();
  if (ok && status_) status_->started();
  for (std::size_t i = 0; ok && i < t_.work.size(); ++i) {
    UnitRecord unit{i, t_.work[i], 0, false, ""};
    hosts_.set_unit(i);
    unit_label_ = "unit " + std::to_string(i + 1) + "/" + std::to_string(t_.work.size()) + " " + text::bracketed(unit.work, 200);
    const auto unit_start = Clock::now();
    Envelope m;
    m.mutable_start_unit()->set_index(i);
    m.mutable_start_unit()->set_payload(t_.work[i]);
    std::thread drain;
    if (client_) {
      InputPort& results = client_->port();
      results.begin_unit();
      drain = std::thread([&results] {
        try {
          while (results.read()) {
          }
        } catch (const Aborted&) {
        }
      });
    }
    hosts_.broadcast(m);
    stalls_.start_unit(buffers_moved(streams()));
    if (status_) status_->unit_started(i);
    ok = hosts_.wait_all(Envelope::kUnitDone, i, std::chrono::hours(24 * 365), [this, i] {
      redraw_progress();
      sample_status();
      check_stall(i);
    });
    if (client_ && !ok) client_->abort();
    if (drain.joinable()) drain.join();
    unit.seconds = seconds_since(unit_start);
    unit.finished = ok;
    if (status_) status_->unit_ended(unit);
    report.units.push_back(unit);
  }
  for (std::size_t i = report.units.size(); i < t_.work.size(); ++i) {
    report.units.push_back(UnitRecord{i, t_.work[i], 0, false, "not run"});
  }
  redraw_progress(true);
  // The client's data connections close first, so that the hosts' going is not logged as a
  // lost connection (an [error] line before the real cause).
  if (client_) client_->stop_network();
  hosts_.teardown(!ok);
  report.streams = streams();  // the hosts' last word, and what the client read
  client_.reset();
  log_output::set_clear_line_first(false);
  report.wall_seconds = seconds_since(start);
  report.failure = hosts_.failure();
  if (report.failure) report.partial_counts = hosts_.without_final_counts();
  // A host lost because its Slurm job ended (TIMEOUT, scancel, a node failure) says so first;
  // also when the console was signalled too (scancel of an sbatch job signals the console).
  std::optional<std::string> launcher_ended;
  if (report.failure && launcher_ != nullptr) launcher_ended = name_the_end(*launcher_, *report.failure);
  if (report.failure && launcher_ != nullptr && !report.failure->host.empty()) {
    // Name the machine the launcher put that host on (a Slurm node), not just the logical host.
    const std::string where = launcher_->where(report.failure->host);
    if (!where.empty()) {
      if (report.failure->filter.empty()) {
        report.failure->message += " (host " + report.failure->host + " is " + where + ")";
      } else {
        report.failure->host += " (" + where + ")";
      }
    }
  }
  report.stuck = hosts_.stuck();
  // A signal that came with the job's end (Slurm's SIGTERM to an sbatch script it cancels)
  // is that failure, not the user's interrupt.
  report.exit_code = !report.failure                             ? kExitOk
                     : hosts_.interrupted() && !launcher_ended ? kExitInterrupted
                                                               : kExitRunFailed;
  if (status_) {
    sample_status(true);  // the hosts' last word (unit_done, exit reports)
    status_->finish(report);
  }
  return print_report(report, options_.metrics_path, "stuck in user code; their app daemons were killed");
}

}  // namespace

int run_remote(const RunOptions& options, topo::Topology& topology) {
  // SIGINT/SIGTERM are taken with sigtimedwait by the launcher and the run loop
  // (host_group.h), before any thread or child starts.
  sigset_t set;
  sigemptyset(&set);
  add_stop_signals(&set);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  // The hosts report what moved twice a second: a shorter quiet cannot be told from the
  // gap between two reports (it failed healthy runs with an empty report).
  if (options.stall_fails && options.stall_after < kShortestRemoteStall) {
    std::cerr << "sluice: --stall-timeout " << options.stall_after.count() / 1000.0
              << ": across hosts give at least 1 s (the hosts report what moved twice a second)\n";
    return kExitUsage;
  }
  ControlOptions control = options.control;
  std::unique_ptr<Launcher> launcher;
  try {
    launcher = make_launcher(options.launch);
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return kExitUsage;
  }
  if (launcher) {
    // Starts a sluiced per logical host and fills in hosts:'s addresses and the token.
    if (int status = launcher->start(topology, control); status != kExitOk) {
      launcher->stop(true);
      return status;
    }
  }
  // Placed once the hosts are known (a launcher may have made them).
  std::map<std::string, Placement> placements = place_with_client(topology);
  RunStatus status(topology, placements);
  std::unique_ptr<UiServer> ui;
  try {
    ui = start_ui(options.ui, status);
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    if (launcher) launcher->stop(true);
    return kExitUsage;
  }
  int exit_status = kExitHostUnavailable;
  {
    const std::optional<Credentials> credentials = load_credentials(control);
    std::vector<std::unique_ptr<HostClient>> clients;
    if (credentials) clients = connect_all(topology, *credentials, false);
    if (!clients.empty()) {
      RemoteRun run(options, topology, std::move(placements), std::move(clients), launcher.get(),
                    ui ? &status : nullptr);
      try {
        exit_status = run.run();
      } catch (const std::exception& e) {
        std::cerr << "sluice: " << e.what() << "\n";
        exit_status = kExitRunFailed;
        if (ui) {
          RunReport report;
          report.failure = Failure{"", -1, "", 0, "console", e.what()};
          report.exit_code = kExitRunFailed;
          status.finish(report);
        }
      }
    }
  }
  if (launcher) launcher->stop(exit_status != kExitOk);
  if (ui) linger(*ui, options.ui.linger);
  return exit_status;
}

}  // namespace sluice::console
