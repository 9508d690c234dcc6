// `sluice run` and `sluice validate` across hosts: the console side of the control plane.
//
// 1. Connect to every host daemon and authenticate (challenge-response over the token),
//    all before anything starts; a host that does not answer or authenticate ends the run
//    with kExitHostUnavailable, naming the host and its address.
// 2. Place copies (place:, else round-robin over hosts in file order) and send each host
//    with copies a launch; its sluiced starts a sluice-appd, which answers app_ready with
//    its data plane's address.
// 3. Send every app daemon the others' data addresses (wiring); wait for started.
// 4. Per unit of work: start_unit to every host, then wait for unit_done from every host
//    (the barrier the data plane relies on); progress and summary merge the hosts' stats.
// 5. shutdown to every host; wait for their exit reports; close.
// Any failure (a failure message, an app daemon that ends unexpectedly, a connection that
// closes, a host silent for kSilence) aborts every host and ends the run non-zero.
#include <signal.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>

#include "console/exit_codes.h"
#include "console/host_client.h"
#include "console/remote.h"
#include "console/report.h"
#include "control/auth.h"
#include "runtime/backends.h"
#include "sluice/error.h"

namespace sluice::console {

namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;
using control::Envelope;

constexpr auto kConnectTimeout = 5s;      // connect + handshake, per host
constexpr auto kHeartbeatEvery = 500ms;   // console -> each host daemon
constexpr auto kSilence = 2500ms;         // a host daemon this quiet is gone
constexpr auto kLaunchTimeout = 60s;      // app_ready / started (JVM start, library loading)
constexpr auto kSettle = 300ms;           // after a first failure, for the root cause to arrive
constexpr auto kTeardown = 1500ms;        // waiting for exit reports after abort / shutdown

std::string signal_name(int sig) {
  const char* abbrev = sigabbrev_np(sig);
  return abbrev != nullptr ? "SIG" + std::string(abbrev) : "signal " + std::to_string(sig);
}

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

std::size_t terminal_width() {
  struct winsize ws;
  if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) return ws.ws_col;
  return 120;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot read '" + path + "'");
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// How much a failure explains: the root cause wins over its consequences.
int rank(const Failure& f) {
  if (!f.filter.empty() && f.stage != "cancelled") return 0;  // a filter failed
  if (f.stage == "app daemon" || f.stage == "host daemon" || f.stage == "load" || f.stage == "launch") return 1;
  if (f.stage == "link") return 2;
  if (f.stage == "network") return 3;
  return 4;
}

// Connects to every host in parallel. Returns the clients, or prints why some could not
// be reached and returns an empty vector.
std::vector<std::unique_ptr<HostClient>> connect_all(const topo::Topology& t, const std::string& token,
                                                     bool verbose) {
  std::vector<std::unique_ptr<HostClient>> clients;
  std::vector<std::optional<std::string>> errors(t.hosts.size());
  for (const topo::HostSpec& h : t.hosts) clients.push_back(std::make_unique<HostClient>(h.name, h.address));
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    threads.emplace_back([&, i] {
      try {
        errors[i] = clients[i]->connect(token, kConnectTimeout);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  }
  for (auto& th : threads) th.join();
  bool ok = true;
  for (std::size_t i = 0; i < clients.size(); ++i) {
    if (errors[i]) {
      // At the host's line in the file, like every other mistake found before a run.
      const topo::Mark mark = t.hosts[i].mark;
      if (mark.line > 0) {
        std::cerr << t.file << ":" << mark.line << ":" << mark.column << ": ";
      } else {
        std::cerr << "sluice: ";
      }
      std::cerr << clients[i]->label() << ": " << *errors[i] << "\n";
      ok = false;
    } else if (verbose) {
      std::cout << clients[i]->label() << ": ok, sluiced on " << clients[i]->daemon_hostname() << "\n";
    }
  }
  if (!ok) {
    std::cerr << "sluice: nothing was started; start sluiced on every host listed in hosts: (see "
                 "docs/operations.md) and check the console's --token-file\n";
    clients.clear();
  }
  return clients;
}

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

// One run across hosts.
class RemoteRun {
 public:
  RemoteRun(const RunOptions& options, const topo::Topology& topology, std::map<std::string, Placement> placements,
            std::vector<std::unique_ptr<HostClient>> clients)
      : options_(options), t_(topology), placements_(std::move(placements)), clients_(std::move(clients)) {
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      if (placements_.count(clients_[i]->name())) active_.push_back(static_cast<int>(i));
    }
    for (const topo::StreamSpec& s : t_.streams) labels_.push_back(s.from.str() + " -> " + s.to.str());
    per_host_.resize(clients_.size());
  }

  int run();

 private:
  enum class Phase { kLaunching, kWiring, kUnit, kShuttingDown };

  // Waits until every active host has sent `want` (for unit `unit` when unit_done), or a
  // failure. Returns false on failure (already recorded).
  bool wait_all(Envelope::BodyCase want, std::uint64_t unit, Clock::duration timeout);
  // Handles one event; records a failure when it is one.
  void handle(const HostEvent& e, Envelope::BodyCase want, std::uint64_t unit, std::set<int>& done);
  void heartbeats_and_liveness();
  void check_signals();
  void fail(Failure f);
  void broadcast(const Envelope& m);
  void teardown(bool abort);
  void redraw_progress(bool force_clear = false);
  std::vector<StreamStats> merged() const;
  void store_metrics(int host, const google::protobuf::RepeatedPtrField<control::StreamMetrics>& streams);

  const RunOptions& options_;
  const topo::Topology& t_;
  std::map<std::string, Placement> placements_;
  std::vector<std::unique_ptr<HostClient>> clients_;
  std::vector<int> active_;  // indices of hosts with copies
  std::vector<std::string> labels_;
  EventQueue events_;
  std::vector<std::map<std::string, StreamStats>> per_host_;
  std::map<int, std::string> data_addresses_;
  std::set<int> gone_;          // hosts whose connection is lost
  std::set<int> app_ended_;     // hosts whose app daemon's exit was reported
  std::optional<Failure> failure_;
  std::vector<std::string> stuck_;
  bool interrupted_ = false;
  std::uint64_t current_unit_ = 0;  // for failures that are not a filter's
  bool ending_ = false;         // shutdown or abort sent: exits are expected
  Clock::time_point last_heartbeat_ = Clock::now();
  // Progress line.
  bool progress_ = false;
  std::string unit_label_;
  std::vector<StreamStats> previous_;
  Clock::time_point last_draw_ = Clock::now();
  std::uint64_t heartbeat_seq_ = 0;
};

void RemoteRun::fail(Failure f) {
  if (ending_ && !failure_) {
    // Every unit finished everywhere and shutdown went out: what happens while the app
    // daemons stop (a peer's data connection closing first, say) does not undo the run.
    std::cerr << "sluice: warning: while shutting down: " << f.str() << "\n";
    return;
  }
  if (!failure_ || rank(f) < rank(*failure_)) failure_ = std::move(f);
}

void RemoteRun::broadcast(const Envelope& m) {
  for (int i : active_) {
    if (!gone_.count(i)) clients_[i]->send(m);
  }
}

void RemoteRun::store_metrics(int host, const google::protobuf::RepeatedPtrField<control::StreamMetrics>& streams) {
  auto& mine = per_host_[host];
  for (const auto& m : streams) {
    StreamStats& s = mine[m.label()];
    s.label = m.label();
    s.producer_copies = m.producer_copies();
    s.consumer_copies = m.consumer_copies();
    s.buffers = m.buffers();
    s.bytes = m.bytes();
    s.producer_blocked_ns = m.producer_blocked_ns();
    s.consumer_blocked_ns = m.consumer_blocked_ns();
  }
}

std::vector<StreamStats> RemoteRun::merged() const {
  std::vector<StreamStats> out;
  for (std::size_t i = 0; i < t_.streams.size(); ++i) {
    StreamStats s;
    s.label = labels_[i];
    s.producer_copies = t_.find_filter(t_.streams[i].from.filter)->copies;
    s.consumer_copies = t_.find_filter(t_.streams[i].to.filter)->copies;
    for (const auto& host : per_host_) {
      auto it = host.find(labels_[i]);
      if (it == host.end()) continue;
      s.buffers += it->second.buffers;
      s.bytes += it->second.bytes;
      s.producer_blocked_ns += it->second.producer_blocked_ns;
      s.consumer_blocked_ns += it->second.consumer_blocked_ns;
    }
    out.push_back(s);
  }
  return out;
}

void RemoteRun::redraw_progress(bool clear) {
  if (!progress_) return;
  if (clear) {
    std::cerr << "\r\033[K" << std::flush;
    return;
  }
  if (Clock::now() - last_draw_ < 500ms) return;
  std::vector<StreamStats> now = merged();
  const double dt = seconds_since(last_draw_);
  last_draw_ = Clock::now();
  if (previous_.size() != now.size()) previous_ = now;
  std::cerr << "\r\033[K" << progress_line(unit_label_, now, previous_, dt, terminal_width() - 1) << std::flush;
  previous_ = std::move(now);
}

void RemoteRun::check_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  timespec zero{0, 0};
  const int sig = sigtimedwait(&set, nullptr, &zero);
  if (sig > 0 && !interrupted_) {
    interrupted_ = true;
    fail(Failure{"", -1, "", current_unit_, "interrupted", std::string("interrupted by ") + signal_name(sig)});
  }
}

void RemoteRun::heartbeats_and_liveness() {
  if (Clock::now() - last_heartbeat_ >= kHeartbeatEvery) {
    last_heartbeat_ = Clock::now();
    Envelope h;
    h.mutable_heartbeat()->set_sequence(++heartbeat_seq_);
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      if (!gone_.count(static_cast<int>(i))) clients_[i]->send(h);
    }
  }
  for (int i : active_) {
    if (gone_.count(i)) continue;
    const auto quiet = Clock::now() - clients_[i]->last_heard();
    if (quiet > kSilence) {
      gone_.insert(i);
      fail(Failure{"", -1, clients_[i]->name(), current_unit_, "link",
                   clients_[i]->label() + ": no word from the host daemon for " +
                       std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(quiet).count()) +
                       " ms; the link is down or the host is unresponsive"});
    }
  }
}

void RemoteRun::handle(const HostEvent& e, Envelope::BodyCase want, std::uint64_t unit, std::set<int>& done) {
  HostClient& c = *clients_[e.host];
  if (e.kind != HostEvent::Kind::kMessage) {
    if (gone_.insert(e.host).second && !(ending_ && app_ended_.count(e.host))) {
      fail(Failure{"", -1, c.name(), current_unit_, "host daemon",
                   c.label() + ": lost the connection to the host daemon (" + e.error +
                       "); sluiced died or the host went away"});
    }
    return;
  }
  const Envelope& m = e.message;
  switch (m.body_case()) {
    case Envelope::kAppReady:
      data_addresses_[e.host] = m.app_ready().data_address();
      break;
    case Envelope::kProgress:
      store_metrics(e.host, m.progress().streams());
      return;
    case Envelope::kUnitDone:
      store_metrics(e.host, m.unit_done().streams());
      if (m.unit_done().index() != unit) return;
      break;
    case Envelope::kFailure: {
      const auto& f = m.failure();
      Failure failure{f.filter(), f.copy(), f.host().empty() ? c.name() : f.host(), f.unit(), f.stage(), f.message()};
      if (failure.filter.empty()) {
        failure.message = "host " + failure.host + ": " + failure.stage + ": " + failure.message;
      }
      for (const auto& s : f.stuck()) stuck_.push_back(s + " on host " + failure.host);
      fail(std::move(failure));
      return;
    }
    case Envelope::kExitReport: {
      const auto& r = m.exit_report();
      app_ended_.insert(e.host);
      if (ending_ || r.expected()) return;
      const std::string how = r.exited() ? "exited with status " + std::to_string(r.exit_status())
                                         : "was killed by " + signal_name(r.signal());
      fail(Failure{"", -1, c.name(), current_unit_, "app daemon",
                   "host " + c.name() + ": the app daemon (sluice-appd pid " + std::to_string(r.pid()) + ") " + how +
                       " during the run"});
      return;
    }
    case Envelope::kError:
      fail(Failure{"", -1, c.name(), current_unit_, "host daemon", c.label() + ": the host daemon said: " + m.error().message()});
      return;
    default:
      break;
  }
  if (m.body_case() == want) done.insert(e.host);
}

bool RemoteRun::wait_all(Envelope::BodyCase want, std::uint64_t unit, Clock::duration timeout) {
  std::set<int> done;
  const auto deadline = Clock::now() + timeout;
  std::optional<Clock::time_point> settle;
  for (;;) {
    if (failure_ && !settle) settle = Clock::now() + kSettle;
    if (settle && Clock::now() >= *settle) return false;
    if (!failure_ && done.size() == active_.size()) return true;
    if (!failure_ && Clock::now() > deadline) {
      std::string missing;
      for (int i : active_) {
        if (!done.count(i)) missing += " " + clients_[i]->name();
      }
      fail(Failure{"", -1, "", unit, "timeout", "no answer within the timeout from host(s):" + missing});
      return false;
    }
    if (auto e = events_.pop(50ms)) handle(*e, want, unit, done);
    heartbeats_and_liveness();
    check_signals();
    redraw_progress();
  }
}

void RemoteRun::teardown(bool abort) {
  ending_ = true;
  Envelope m;
  if (abort) {
    m.mutable_abort()->set_reason(failure_ ? failure_->str() : "aborted");
  } else {
    m.mutable_shutdown();
  }
  broadcast(m);
  // Wait for each reachable host's exit report; the daemons kill what is left when we close.
  const auto deadline = Clock::now() + kTeardown;
  std::set<int> unused;
  auto all_ended = [&] {
    for (int i : active_) {
      if (!gone_.count(i) && !app_ended_.count(i)) return false;
    }
    return true;
  };
  while (!all_ended() && Clock::now() < deadline) {
    if (auto e = events_.pop(50ms)) handle(*e, Envelope::BODY_NOT_SET, 0, unused);
    heartbeats_and_liveness();
  }
  for (auto& c : clients_) c->close();
}

int RemoteRun::run() {
  RunReport report;
  report.topology_name = t_.name;
  report.topology_file = t_.file;
  const auto start = Clock::now();
  progress_ = options_.progress && isatty(STDERR_FILENO);
  for (std::size_t i = 0; i < clients_.size(); ++i) clients_[i]->start_reader(static_cast<int>(i), events_);

  // Launch.
  const std::string text = read_file(t_.file);
  const std::string app_id = t_.name + "-" + hex(control::random_bytes(4));
  for (int i : active_) {
    Envelope m;
    auto* l = m.mutable_launch();
    l->set_application_id(app_id);
    l->set_topology_text(text);
    l->set_topology_file(t_.file);
    l->set_topology_dir(t_.dir);
    l->set_host(clients_[i]->name());
    // The data plane listens on the address the console reached this host at (resolved:
    // hosts: may name the host), on a free port.
    const std::string& ip = clients_[i]->peer_ip();
    if (!ip.empty()) l->set_data_listen((ip.find(':') != std::string::npos ? "[" + ip + "]" : ip) + ":0");
    for (const auto& [host, placement] : placements_) {
      auto* hp = l->add_placement();
      hp->set_host(host);
      for (const auto& [filter, copies] : placement.local) {
        auto& list = (*hp->mutable_copies())[filter];
        for (int c : copies) list.add_index(c);
      }
    }
    clients_[i]->send(m);
  }
  bool ok = wait_all(Envelope::kAppReady, 0, kLaunchTimeout);
  if (ok) {
    Envelope w;
    for (const auto& [i, address] : data_addresses_) (*w.mutable_wiring()->mutable_peers())[clients_[i]->name()] = address;
    broadcast(w);
    ok = wait_all(Envelope::kStarted, 0, kLaunchTimeout);
  }
  for (std::size_t i = 0; ok && i < t_.work.size(); ++i) {
    UnitRecord unit{i, t_.work[i], 0, false};
    current_unit_ = i;
    unit_label_ = "unit " + std::to_string(i + 1) + "/" + std::to_string(t_.work.size()) + " [" + unit.work + "]";
    const auto unit_start = Clock::now();
    Envelope m;
    m.mutable_start_unit()->set_index(i);
    m.mutable_start_unit()->set_payload(t_.work[i]);
    broadcast(m);
    ok = wait_all(Envelope::kUnitDone, i, std::chrono::hours(24 * 365));
    unit.seconds = seconds_since(unit_start);
    unit.finished = ok;
    report.units.push_back(unit);
  }
  for (std::size_t i = report.units.size(); i < t_.work.size(); ++i) {
    report.units.push_back(UnitRecord{i, t_.work[i], 0, false});
  }
  redraw_progress(true);
  teardown(!ok);
  report.wall_seconds = seconds_since(start);
  report.streams = merged();
  report.failure = failure_;
  report.stuck = stuck_;
  report.exit_code = !failure_ ? kExitOk : interrupted_ ? kExitInterrupted : kExitRunFailed;

  std::cerr << summary_table(report);
  if (report.failure) std::cerr << "sluice: run failed: " << report.failure->str() << "\n";
  if (!report.stuck.empty()) {
    std::cerr << "sluice: these copies did not stop after the failure (stuck in user code; their app "
                 "daemons were killed):";
    for (const std::string& s : report.stuck) std::cerr << " " << s;
    std::cerr << "\n";
  }
  if (!options_.metrics_path.empty()) {
    try {
      write_metrics_json(report, options_.metrics_path);
    } catch (const std::exception& e) {
      std::cerr << "sluice: " << e.what() << "\n";
    }
  }
  return report.exit_code;
}

}  // namespace

void apply_hosts_option(topo::Topology& topology, const std::string& hosts) {
  std::stringstream ss(hosts);
  std::string item;
  while (std::getline(ss, item, ',')) {
    if (item.empty()) continue;
    const auto eq = item.find('=');
    std::string h, p;
    if (eq == std::string::npos || eq == 0 || !split_address(item.substr(eq + 1), &h, &p)) {
      throw Error("--hosts: '" + item + "' is not NAME=ADDR:PORT, e.g. a=127.0.0.1:7700");
    }
    const std::string name = item.substr(0, eq);
    auto it = std::find_if(topology.hosts.begin(), topology.hosts.end(),
                           [&](const topo::HostSpec& s) { return s.name == name; });
    if (it != topology.hosts.end()) {
      it->address = item.substr(eq + 1);
    } else {
      topology.hosts.push_back(topo::HostSpec{name, item.substr(eq + 1), {}});
    }
  }
}

std::map<std::string, Placement> place_copies(const topo::Topology& t) {
  std::map<std::string, Placement> out;
  std::size_t next = 0;  // the deal continues from filter to filter
  for (const topo::FilterSpec& f : t.filters) {
    if (!f.place.empty()) {
      int index = 0;
      for (const auto& [host, n] : f.place) {
        for (int k = 0; k < n; ++k) out[host].local[f.name].push_back(index++);
      }
    } else {
      for (int c = 0; c < f.copies; ++c) out[t.hosts[next++ % t.hosts.size()].name].local[f.name].push_back(c);
    }
  }
  return out;
}

std::string token_path(const std::string& path) {
  if (!path.empty()) return path;
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.config/sluice/token";
}

int check_hosts(const topo::Topology& topology, const std::string& token_file) {
  std::string token;
  try {
    token = control::read_token_file(token_path(token_file));
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << " (--token-file)\n";
    return kExitHostUnavailable;
  }
  auto clients = connect_all(topology, token, true);
  if (clients.empty()) return kExitHostUnavailable;
  for (auto& c : clients) c->close();
  return kExitOk;
}

int run_remote(const RunOptions& options, topo::Topology& topology) {
  std::string token;
  try {
    token = control::read_token_file(token_path(options.token_file));
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << " (--token-file)\n";
    return kExitHostUnavailable;
  }
  // SIGINT/SIGTERM are taken with sigtimedwait by the run loop.
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
  auto clients = connect_all(topology, token, false);
  if (clients.empty()) return kExitHostUnavailable;
  RemoteRun run(options, topology, place_copies(topology), std::move(clients));
  try {
    return run.run();
  } catch (const std::exception& e) {
    std::cerr << "sluice: " << e.what() << "\n";
    return kExitRunFailed;
  }
}

}  // namespace sluice::console
