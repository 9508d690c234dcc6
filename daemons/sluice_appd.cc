// sluice-appd: the app daemon. One per application per host, started by sluiced with its
// control connection on an inherited socket (--control-fd, normally 3) and the write end of a
// crash pipe (--crash-fd, normally 4): when a filter crashes the process, the crash handler
// writes what crashed there and to stderr (runtime/crash_report.h), and sluiced reports it.
//
// Protocol (control.proto), as seen from here:
//   <- launch      parse the topology, check every library and class, build the data plane
//                  (it binds its listen port) and the Engine for the copies placed here
//   -> app_ready   with the data plane's address
//   <- wiring      connect to the peers' data planes; start every copy
//   -> started
//   <- start_unit  run one unit of work (on a worker thread)
//   -> progress    twice a second while a unit runs
//   -> unit_done   with this host's stream metrics, or -> failure (filter, copy, host, unit)
//   <- abort       this host's counts (-> progress), then exit 1 at once
//   <- shutdown    stop and exit 0
//   -> heartbeat   every 500 ms, to sluiced (which kills an app daemon silent for 4 s)
//   <- heartbeat   every 500 ms, from sluiced: 4 s without any message from it and this
//                  process exits (a stopped or hung sluiced leaves nothing running)
//   -> filter_log  the filters' log lines, within 250 ms and before each of the
//                  messages above that ends a stage (log_forwarder.h; also on stderr),
//                  and what they wrote to stdout (stdout_forwarder.h; not on stderr)
// The control connection dropping (sluiced gone) ends the process at once; so does
// SIGTERM/SIGKILL to its process group (sluiced's abort). sluiced also sets
// PR_SET_PDEATHSIG, so no app daemon outlives its host daemon.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <iostream>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "control/codec.h"
#include "daemons/log.h"
#include "daemons/log_forwarder.h"
#include "daemons/stdout_forwarder.h"
#include "net/data_plane.h"
#include "runtime/backends.h"
#include "runtime/crash_report.h"
#include "runtime/engine.h"
#include "runtime/process_exit.h"
#include "runtime/placement.h"
#include "topology/topology.h"
#include "sluice/version.h"
#include "text/cli_options.h"
#include "text/shortened.h"

namespace dlog = sluice::daemon;
using sluice::control::Envelope;

namespace {

using namespace std::chrono_literals;

// sluiced heartbeats every 500 ms; this long without a word from it and it is taken for
// stopped or hung (the console gave this host up after 3 s), so the app daemon exits rather
// than keep its copies and data port until sluiced wakes.
constexpr auto kSluicedSilence = 4s;

// The crash handler writes a log line (as dlog does) and the bare line to the crash pipe.
void set_crash_output(int crash_fd) {
  sluice::crash::set_output({dlog::name() + "[" + std::to_string(::getpid()) + "] [error] ", true, crash_fd});
}

class AppDaemon {
 public:
  AppDaemon(int fd, int crash_fd, sluice::daemon::StdoutForwarder* output)
      : channel_(fd), crash_fd_(crash_fd), output_(output) {}
  int run();
  // Sends the filters' stdout gathered so far (whole lines), with any log lines: from the
  // stdout reader when much has gathered.
  void send_output() { flush_logs(false); }

 private:
  bool launch(const sluice::control::Launch& launch);
  bool wire(const sluice::control::Wiring& wiring);
  void start_unit(const sluice::control::StartUnit& unit);
  void send_failure(const sluice::Failure& f, const std::vector<std::string>& stuck = {});
  void send_failure(const std::string& stage, const std::string& message);
  void fill_metrics(google::protobuf::RepeatedPtrField<sluice::control::StreamMetrics>* out);
  void fill_activity(google::protobuf::RepeatedPtrField<sluice::control::CopyActivity>* out);
  // A progress report: this host's stream metrics and what each copy does now.
  Envelope progress_report();
  // Sends the filter log lines and stdout gathered since the last call (before a message
  // that follows them, so the console prints a unit's lines before it hears that the unit
  // is done). `stage_end`: everything the filters wrote until now, else whole lines.
  void flush_logs(bool stage_end = true);
  [[noreturn]] void quit(int status);
  // Sends `message` to sluiced; when it is gone, or takes nothing and says nothing for
  // kSluicedSilence (a stopped or hung sluiced), the process exits: nothing is left running
  // without it.
  void send(const Envelope& message);
  // While a send waits: sluiced said something within kSluicedSilence (the receive loop's
  // last message, or new bytes from it waiting unread).
  bool sluiced_alive();

  sluice::control::FdChannel channel_;
  const int crash_fd_;
  sluice::daemon::StdoutForwarder* const output_;  // the filters' stdout (main's), or null
  std::string host_ = "?";
  sluice::topo::Topology topology_;
  std::map<std::string, sluice::Placement> placements_;
  std::unique_ptr<sluice::DataPlane> plane_;
  std::unique_ptr<sluice::Engine> engine_;
  std::thread worker_;
  std::atomic<bool> unit_running_{false};
  std::atomic<bool> failed_{false};
  // Installed as the Logger's sink at launch, never removed: a copy stuck in user code may
  // log until the process ends.
  std::unique_ptr<sluice::daemon::LogForwarder> logs_;
  std::mutex logs_mu_;  // held while a batch is taken and sent, so batches leave in order
  // When sluiced last said something (steady_clock ns), and the unread bytes from it that
  // sluiced_alive() last saw.
  std::atomic<std::int64_t> last_heard_ns_{std::chrono::steady_clock::now().time_since_epoch().count()};
  std::atomic<int> unread_seen_{0};
  std::mutex mu_;  // guards network_failure_, network_failure_sent_
  std::optional<std::string> network_failure_;
  bool network_failure_sent_ = false;
};

void AppDaemon::quit(int status) {
  // Copy threads may be blocked or stuck in user code; the process ends here either way.
  dlog::debug("exiting with status " + std::to_string(status));
  flush_logs();
  sluice::logging::flush_background(1s);
  _exit(status);
}

bool AppDaemon::sluiced_alive() {
  const auto now = std::chrono::steady_clock::now().time_since_epoch().count();
  // Bytes from sluiced that nobody has read yet (this thread, blocked sending, is the one
  // that reads them): its heartbeats, every 500 ms, while it holds this daemon back.
  int unread = 0;
  if (::ioctl(channel_.fd(), FIONREAD, &unread) == 0 && unread != unread_seen_.exchange(unread)) {
    last_heard_ns_.store(now);
  }
  return now - last_heard_ns_.load() < std::chrono::nanoseconds(kSluicedSilence).count();
}

void AppDaemon::send(const Envelope& message) {
  std::string why;
  // sluiced stops reading while this host's console has much waiting (a slow link, a
  // console stopped for a moment): the send waits as long as sluiced is heard from.
  if (channel_.send(message, kSluicedSilence, &why, [this] { return sluiced_alive(); })) return;
  dlog::error("control connection to sluiced: " + why + " (sluiced is gone, stopped or hung); exiting");
  sluice::logging::flush_background(1s);
  _exit(1);
}

void AppDaemon::flush_logs(bool stage_end) {
  std::lock_guard<std::mutex> lock(logs_mu_);
  std::optional<Envelope> batch = logs_ ? logs_->take() : std::nullopt;
  if (output_ != nullptr) {
    if (stage_end) output_->drain();
    if (std::string out = output_->take(stage_end); !out.empty()) {
      if (!batch) {
        batch.emplace();
        batch->mutable_filter_log()->set_host(host_);
      }
      batch->mutable_filter_log()->set_output(std::move(out));
    }
  }
  if (batch) send(*batch);
}

void AppDaemon::send_failure(const sluice::Failure& given, const std::vector<std::string>& stuck) {
  failed_ = true;
  flush_logs();
  sluice::Failure f = given;
  // A failure crosses to the console in one control frame (16 MiB at most), and a crash's or
  // a stuck copy's line did not pass through the engine, which cuts the rest.
  f.message = sluice::cut_failure_message(std::move(f.message));
  Envelope e;
  auto* m = e.mutable_failure();
  m->set_filter(f.filter);
  m->set_copy(f.copy);
  m->set_host(f.host.empty() ? host_ : f.host);
  m->set_unit(f.unit);
  m->set_stage(f.stage);
  m->set_message(f.message);
  for (const auto& s : stuck) m->add_stuck(sluice::cut_failure_message(s));
  fill_metrics(m->mutable_streams());
  dlog::warn("failure: " + f.str());
  send(e);
}

void AppDaemon::send_failure(const std::string& stage, const std::string& message) {
  send_failure(sluice::Failure{"", -1, host_, 0, stage, message});
}

void AppDaemon::fill_metrics(google::protobuf::RepeatedPtrField<sluice::control::StreamMetrics>* out) {
  if (!engine_) return;
  for (const sluice::StreamStats& s : engine_->stream_stats()) {
    auto* m = out->Add();
    m->set_label(s.label);
    m->set_producer_copies(s.producer_copies);
    m->set_consumer_copies(s.consumer_copies);
    m->set_buffers(s.buffers);
    m->set_bytes(s.bytes);
    m->set_producer_blocked_ns(s.producer_blocked_ns);
    m->set_consumer_blocked_ns(s.consumer_blocked_ns);
    m->set_consumed(s.consumed);
    m->set_queued(s.queued);
    m->set_capacity(s.capacity);
  }
}

Envelope AppDaemon::progress_report() {
  Envelope p;
  p.mutable_progress()->set_host(host_);
  fill_metrics(p.mutable_progress()->mutable_streams());
  fill_activity(p.mutable_progress()->mutable_copies());
  return p;
}

void AppDaemon::fill_activity(google::protobuf::RepeatedPtrField<sluice::control::CopyActivity>* out) {
  if (!engine_) return;
  for (const sluice::CopyActivity& a : engine_->activity()) {
    auto* m = out->Add();
    m->set_filter(a.filter);
    m->set_copy(a.copy);
    m->set_stage(a.stage);
    m->set_waiting_for(a.waiting_for);
    m->set_stream(a.stream);
    m->set_waiting_seconds(a.waiting_seconds);
    m->set_unit(a.unit);
  }
}

bool AppDaemon::launch(const sluice::control::Launch& launch) {
  host_ = launch.host();
  dlog::set_name("sluice-appd(" + host_ + ")");
  set_crash_output(crash_fd_);
  logs_ = std::make_unique<sluice::daemon::LogForwarder>(host_);
  sluice::log_output::set_sink(logs_.get());
  dlog::info("launching application '" + launch.application_id() + "' from " + launch.topology_file());
  try {
    topology_ = sluice::topo::parse_topology_text(launch.topology_text(), launch.topology_file(),
                                                  launch.topology_dir());
    for (const auto& hp : launch.placement()) {
      sluice::Placement& p = placements_[hp.host()];
      for (const auto& [filter, list] : hp.copies()) {
        // The client (`to: client`) is placed like a filter of one copy, on the submitting
        // program's pseudo-host.
        const bool client = filter == sluice::topo::kClient && topology_.client_stream() != nullptr;
        const sluice::topo::FilterSpec* spec = topology_.find_filter(filter);
        if (spec == nullptr && !client) {
          throw sluice::Error("placement names filter '" + filter + "', which the topology lacks");
        }
        const int copies = client ? 1 : spec->copies;
        for (int c : list.index()) {
          if (c < 0 || c >= copies) {
            throw sluice::Error("placement puts copy " + std::to_string(c) + " of filter '" + filter +
                                "' on host " + hp.host() + ", but it has " + std::to_string(copies) + " copies");
          }
          p.local[filter].push_back(c);
        }
      }
    }
    if (placements_.find(host_) == placements_.end()) {
      throw sluice::Error("the launch message places nothing on this host (" + host_ + ")");
    }
    // Only the filters placed here: a library may be on the hosts that run its filter only.
    sluice::check_loadable(topology_, placements_[host_]);
  } catch (const std::exception& e) {
    send_failure("load", e.what());
    return false;
  }
  sluice::EngineOptions options;
  options.host = host_;
  options.placement = placements_[host_];
  std::string data_address;
  try {
    sluice::DataPlaneOptions plane_options;
    if (!launch.data_listen().empty()) plane_options.listen = launch.data_listen();
    if (launch.data_port_first() != 0) {
      // sluiced checked its --data-ports; a launch that bypassed it gets the check here.
      const auto first = launch.data_port_first();
      const auto last = launch.data_port_last();
      if (first > 65535 || last > 65535 || last < first) {
        throw sluice::Error("the launch message's data ports " + std::to_string(first) + "-" + std::to_string(last) +
                            " are not a port range");
      }
      plane_options.ports = {static_cast<std::uint16_t>(first), static_cast<std::uint16_t>(last)};
    }
    plane_options.key = launch.data_key();
    plane_options.encrypt_all = launch.encrypt_data();
    // Its failure comes back as this daemon's own "failure: ..." line (and to the console):
    // said once, not a second time by the data plane.
    plane_options.failure_level = sluice::LogLevel::kDebug;
    plane_ = std::make_unique<sluice::DataPlane>(topology_, placements_, host_, plane_options);
    data_address = plane_->listen_address();
    options.wiring = plane_.get();
    engine_ = std::make_unique<sluice::Engine>(topology_, options);
    plane_->set_failure_callback([this](const std::string& why) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!network_failure_) network_failure_ = why;
      }
      if (engine_) engine_->cancel(why);
    });
  } catch (const std::exception& e) {
    send_failure("launch", e.what());
    return false;
  }
  Envelope ready;
  ready.mutable_app_ready()->set_host(host_);
  ready.mutable_app_ready()->set_data_address(data_address);
  ready.mutable_app_ready()->set_pid(::getpid());
  flush_logs();
  send(ready);
  const int copies = engine_->copy_count();
  dlog::info("ready: " + std::to_string(copies) + (copies == 1 ? " copy" : " copies") + " here" +
             (data_address.empty() ? std::string() : ", data plane on " + data_address));
  return true;
}

bool AppDaemon::wire(const sluice::control::Wiring& wiring) {
  try {
    std::map<std::string, std::string> peers(wiring.peers().begin(), wiring.peers().end());
    plane_->connect(peers, 10s);
  } catch (const std::exception& e) {
    send_failure("network", e.what());
    return false;
  }
  if (auto failure = engine_->start()) {
    send_failure(*failure, engine_->stuck_copies());
    return false;
  }
  Envelope started;
  started.mutable_started()->set_host(host_);
  flush_logs();
  send(started);
  return true;
}

void AppDaemon::start_unit(const sluice::control::StartUnit& unit) {
  if (worker_.joinable()) worker_.join();
  unit_running_ = true;
  worker_ = std::thread([this, index = unit.index(), payload = unit.payload()] {
    std::optional<sluice::Failure> failure;
    try {
      failure = engine_->run_unit(index, payload);
    } catch (const std::exception& e) {  // never across the thread boundary
      failure = sluice::Failure{"", -1, host_, index, "run", e.what()};
    }
    // Before the report: the console sends the next start_unit as soon as it has it.
    unit_running_ = false;
    if (failure) {
      std::optional<std::string> network;
      {
        std::lock_guard<std::mutex> lock(mu_);
        network = network_failure_;
        if (network) network_failure_sent_ = true;
      }
      if (network && failure->filter.empty()) {
        send_failure(sluice::Failure{"", -1, host_, index, "network", *network}, engine_->stuck_copies());
      } else {
        send_failure(*failure, engine_->stuck_copies());
      }
    } else {
      Envelope done;
      done.mutable_unit_done()->set_host(host_);
      done.mutable_unit_done()->set_index(index);
      fill_metrics(done.mutable_unit_done()->mutable_streams());
      fill_activity(done.mutable_unit_done()->mutable_copies());
      flush_logs();
      send(done);
    }
  });
}

int AppDaemon::run() {
  auto last_progress = std::chrono::steady_clock::now();
  auto last_heartbeat = last_progress;
  std::uint64_t last_moved = ~std::uint64_t{0};  // buffers written + read here at the last progress
  std::uint64_t heartbeat_sequence = 0;
  auto last_heard = last_progress;
  for (;;) {
    Envelope m;
    const auto status = channel_.receive(&m, 250ms);
    if (status == sluice::control::FdChannel::Status::kMessage) {
      last_heard = std::chrono::steady_clock::now();
      last_heard_ns_.store(last_heard.time_since_epoch().count());
    } else if (status == sluice::control::FdChannel::Status::kTimeout &&
               std::chrono::steady_clock::now() - last_heard > kSluicedSilence) {
      // Only after a receive that found nothing: messages queued while launch or wiring
      // held this thread count.
      dlog::error("sluiced sent nothing for " +
                  std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                     std::chrono::steady_clock::now() - last_heard)
                                     .count()) +
                  " ms (stopped or hung); exiting");
      quit(1);
    }
    if (status == sluice::control::FdChannel::Status::kClosed) {
      dlog::info("control connection closed (sluiced is gone); exiting");
      quit(1);
    }
    if (status == sluice::control::FdChannel::Status::kError) {
      dlog::error("control connection: " + channel_.error() + "; exiting");
      quit(1);
    }
    // A network failure noticed while no unit runs (or before the worker reported it).
    {
      std::optional<std::string> network;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (network_failure_ && !network_failure_sent_ && !unit_running_) {
          network = network_failure_;
          network_failure_sent_ = true;
        }
      }
      if (network) send_failure("network", *network);
    }
    flush_logs(false);
    if (std::chrono::steady_clock::now() - last_heartbeat >= 500ms) {
      // sluiced takes an app daemon silent for 4 s for hung, and kills it.
      last_heartbeat = std::chrono::steady_clock::now();
      Envelope h;
      h.mutable_heartbeat()->set_sequence(++heartbeat_sequence);
      send(h);
    }
    if (unit_running_ && std::chrono::steady_clock::now() - last_progress >= 500ms) {
      last_progress = std::chrono::steady_clock::now();
      Envelope p = progress_report();
      // For the console's stall report: only when nothing moved here (asking the I/O thread
      // costs a hand-off, and a moving host's numbers are stale at once).
      std::uint64_t moved = 0;
      for (const auto& s : p.progress().streams()) moved += s.buffers() + s.consumed();
      if (plane_ && moved == last_moved) p.mutable_progress()->set_in_flight(plane_->in_flight());
      last_moved = moved;
      send(p);
    }
    if (status != sluice::control::FdChannel::Status::kMessage) continue;
    switch (m.body_case()) {
      case Envelope::kHeartbeat:
        break;
      case Envelope::kLaunch:
        if (engine_ || !launch(m.launch())) {
          if (engine_) send_failure("launch", "launched twice");
          quit(1);
        }
        break;
      case Envelope::kWiring:
        if (!engine_ || !wire(m.wiring())) quit(1);
        break;
      case Envelope::kStartUnit:
        if (!engine_ || unit_running_ || failed_) {
          send_failure("run", "start_unit while " + std::string(!engine_ ? "not launched" : failed_ ? "failed" : "a unit runs"));
          quit(1);
        }
        start_unit(m.start_unit());
        break;
      case Envelope::kAbort: {
        // A failure elsewhere, a cancel: this host's last word on what moved here (a unit
        // shorter than a progress report's 500 ms has sent none), so that the summary counts
        // its share, then out at once (sluiced signals the group if this does not end).
        dlog::info("aborted by the console: " + m.abort().reason());
        if (engine_) {
          Envelope last = progress_report();
          last.mutable_progress()->set_final(true);
          send(last);
        }
        quit(1);
      }
      case Envelope::kShutdown: {
        dlog::info("shutdown");
        if (worker_.joinable()) {
          if (unit_running_) quit(0);  // cannot join a unit in progress
          worker_.join();
        }
        if (plane_) plane_->stop();
        if (engine_ && !engine_->stuck_copies().empty()) quit(0);
        engine_.reset();
        plane_.reset();
        quit(0);
      }
      default:
        dlog::warn(std::string("ignoring unexpected ") + sluice::control::kind(m));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  dlog::set_name("sluice-appd");
  int fd = -1;
  int crash_fd = -1;
  bool verbose = false;
  CLI::App app{"sluice-appd: the sluice app daemon, started by sluiced, not by hand (docs/operations.md)"};
  app.set_version_flag("--version", std::string("sluice-appd ") + SLUICE_VERSION);
  sluice::text::add_integer_option(app, "--control-fd", &fd, "the control connection to sluiced (normally 3)", 0,
                                  1 << 20)
      ->type_name("FD")
      ->required();
  sluice::text::add_integer_option(app, "--crash-fd", &crash_fd, "where a crash report goes (normally 4)", 0,
                                  1 << 20)
      ->type_name("FD");
  app.add_flag("--verbose", verbose, "debug lines too");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  if (verbose) dlog::set_level(dlog::Level::kDebug);  // else SLUICE_LOG (log/backend.h)
  if (crash_fd >= 0 && ::fcntl(crash_fd, F_SETFD, FD_CLOEXEC) != 0) {
    std::cerr << "sluice-appd: --crash-fd " << crash_fd << " is not an open file descriptor\n";
    return 2;
  }
  // Its stderr is sluiced's log: when that log's reader is gone (a `| tee` that died), a line
  // is lost (EPIPE), not the application; when it stops reading, lines wait (1 MiB), then are
  // dropped and counted, and the copies that log go on.
  ::signal(SIGPIPE, SIG_IGN);
  sluice::logging::write_in_background();
  // Before any thread, and before a JVM (which keeps these handlers and chains to them).
  set_crash_output(crash_fd);
  sluice::crash::install_handlers();
  sluice::process::end_before_jvm_statics_at_exit();  // its own process (process_exit.h)
  // What the filters print goes to the console, as embedded; before any thread.
  std::unique_ptr<sluice::daemon::StdoutForwarder> output;
  try {
    output = std::make_unique<sluice::daemon::StdoutForwarder>(nullptr);
  } catch (const std::exception& e) {
    dlog::warn(std::string(e.what()) + "; the filters' stdout goes where sluiced's does");
  }
  const int status = [&] {
    AppDaemon daemon(fd, crash_fd, output.get());
    // Past StdoutForwarder::kSendAt bytes the reader sends them itself; before the daemon
    // goes (the destructor's order: `output` outlives `daemon`), it stops doing so.
    if (output) output->set_send([&daemon] { daemon.send_output(); });
    const int s = daemon.run();
    if (output) output->set_send(nullptr);
    return s;
  }();
  sluice::process::finish(status);  // a JVM ran: end here, before libjvm's static destructors
  return status;
}
