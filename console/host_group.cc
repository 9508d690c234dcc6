#include "console/host_group.h"

#include "console/filter_log.h"
#include "console/subprocess.h"
#include "control/own_pause.h"
#include "log/backend.h"
#include "net/silent_connection.h"

#include <algorithm>
#include <cstdio>
#include <iostream>
#include <regex>

namespace sluice::console {

namespace {

using namespace std::chrono_literals;
using control::Envelope;
using Clock = HostGroup::Clock;

constexpr auto kHeartbeatEvery = 500ms;  // console -> each host daemon
constexpr auto kSilence = 2500ms;        // a host daemon this quiet is gone
constexpr auto kSettle = 300ms;          // after a first failure, for the root cause to arrive
// ... when that first failure is a data connection gone silent (3 s), which a frozen app daemon
// at its other end causes too: its host daemon names it 4 s after its last heartbeat. (Not
// for a reset connection: an app daemon killed outright is named by its host daemon at once.)
constexpr auto kSettleAfterSilence = 1500ms;
constexpr auto kTeardown = 1500ms;       // waiting for exit reports after abort / shutdown
// The liveness check runs every 200 ms at most (the heartbeats depend on it): a longer gap
// means this process did not run (stopped by Ctrl-Z or SIGSTOP, starved of CPU, a paused VM).
// Silence is then counted from the resumption (the hosts' words wait unread in the sockets),
// and a pause past what the host daemons allow (3 s) is named as the cause of what follows.
// (A gap past control::kOwnPause, as the daemons tell their own pauses: control/own_pause.h.)
constexpr auto kDaemonsAllow = 3s;   // a host daemon ends the application of a console this silent
constexpr auto kPauseExplains = 10s;  // after resuming, for the consequences to arrive

// How much a failure explains: the root cause wins over its consequences.
int rank(const Failure& f) {
  if (!f.filter.empty() && f.stage != "cancelled") return 0;  // a filter failed
  if (f.stage == "crash") return 0;                           // ... or crashed its app daemon
  if (f.stage == "app daemon" || f.stage == "host daemon" || f.stage == "load" || f.stage == "launch") return 1;
  // --stall-timeout and Ctrl-C: the console's own verdicts; the connections their abort
  // closes must not replace them (they are consequences).
  if (f.stage == "stall" || f.stage == "interrupted") return 1;
  if (f.stage == "link") return 2;
  if (f.stage == "network") return 3;
  return 4;
}

// The failure an app daemon's crash line (ExitReport.crash) names: "filter 'x' copy 1 on
// host b crashed with SIGSEGV in process (unit of work 0)", or "... called exit(7) in ...",
// gives filter, copy, host, stage (which may hold spaces: "end of work") and unit; a line
// without a copy ("crashed with SIGSEGV outside any filter ...", "ended the JVM ...") gives
// none of them, and stage "crash".
Failure crash_failure(const std::string& line, const std::string& host, std::uint64_t current_unit) {
  static const std::regex kCopyLine(
      R"(^filter '([^']+)' copy (\d+) on host (\S+) (?:crashed with \S+(?: \([^)]*\))?|called (?:System\.)?exit\(-?\d+\)) in )"
      R"((.+) \(unit of work (\d+)\)$)");
  Failure f{"", -1, host, current_unit, "crash", ""};
  // How it ended: "SIGSEGV" (crashed with SIGSEGV), "exit(7)", "System.exit(3)", or "JVM
  // ended (status 3)".
  static const std::regex kHow(
      R"((?:^|\s)(?:crashed with (SIG[A-Z0-9]+)|called ((?:System\.)?exit\(-?\d+\))|ended the JVM \((status -?\d+)\)))");
  std::smatch how;
  if (std::regex_search(line, how, kHow)) {
    f.crash = how[1].matched ? how[1].str() : how[2].matched ? how[2].str() : "JVM ended (" + how[3].str() + ")";
  }
  std::smatch m;
  if (std::regex_match(line, m, kCopyLine)) {
    f.filter = m[1];
    f.copy = std::stoi(m[2]);
    f.host = m[3];
    f.stage = m[4];
    // The unit is the copy's latest (for destroy, the run's last); a number past what fits is
    // no unit to name.
    const std::string unit = m[5];
    if (unit.size() < 20) f.unit = std::stoull(unit);
  }
  return f;
}

// "c#0, up#1" (at most 8 named, then "and 5 more").
std::string copies_text(const Placement& p) {
  constexpr int kNamed = 8;
  std::string out;
  int n = 0;
  for (const auto& [filter, copies] : p.local) {
    for (int copy : copies) {
      if (n++ < kNamed) out += (out.empty() ? "" : ", ") + filter + "#" + std::to_string(copy);
    }
  }
  if (n > kNamed) out += " and " + std::to_string(n - kNamed) + " more";
  return out;
}

}  // namespace

HostGroup::HostGroup(std::vector<std::unique_ptr<HostClient>> clients,
                     const std::map<std::string, Placement>& placements, HostStats& stats)
    : clients_(std::move(clients)), stats_(stats) {
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    if (const auto p = placements.find(clients_[i]->name()); p != placements.end()) {
      active_.push_back(static_cast<int>(i));
      copies_on_[p->first] = copies_text(p->second);
    } else {
      // A host without copies took part in the check only: its daemon may restart or go
      // away during the run without harming it, so the console lets it go now.
      clients_[i]->close();
      gone_.insert(static_cast<int>(i));
    }
  }
}

void HostGroup::start_readers() {
  for (std::size_t i = 0; i < clients_.size(); ++i) {
    if (!gone_.count(static_cast<int>(i))) clients_[i]->start_reader(static_cast<int>(i), events_);
  }
}

void HostGroup::fail(Failure f) {
  // A host lost, or its app daemon: which copies went with it (a copy's failure names its own).
  if (f.filter.empty() && (f.stage == "app daemon" || f.stage == "host daemon" || f.stage == "link")) {
    if (const auto c = copies_on_.find(f.host); c != copies_on_.end() && !c->second.empty()) {
      f.message += "; host " + f.host + " ran " + c->second;
    }
  }
  if (ending_ && !failure_) {
    // Every unit finished everywhere and shutdown went out: what happens while the app
    // daemons stop (a peer's data connection closing first, say) does not undo the run.
    if (!logging::stderr_muted()) std::cerr << "sluice: warning: while shutting down: " << f.str() << "\n";
    return;
  }
  if (!failure_ || rank(f) < rank(*failure_)) failure_ = std::move(f);
}

void HostGroup::broadcast(const Envelope& m) {
  for (int i : active_) {
    if (gone_.count(i)) continue;
    clients_[i]->send(m);
    if (m.has_start_unit()) stats_.mark_running(i);
  }
}

void HostGroup::check_signals() {
  if (!take_signals_) return;
  const int sig = take_interrupt();
  if (sig > 0 && !interrupted_) {
    interrupted_ = true;
    fail(Failure{"", -1, "", current_unit_, "interrupted", std::string("interrupted by ") + signal_name(sig)});
  }
}

std::string HostGroup::own_pause() const {
  // The daemons' clock started at the last heartbeat sent, up to kHeartbeatEvery before the pause.
  if (paused_for_ < kDaemonsAllow - kHeartbeatEvery || Clock::now() - resumed_at_ > kPauseExplains) return "";
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%.1f", std::chrono::duration<double>(paused_for_).count());
  return std::string("this console did not run for ") + seconds +
         " s (stopped, by Ctrl-Z or SIGSTOP, or starved of CPU), and a host daemon ends the application of a "
         "console silent for " + std::to_string(std::chrono::seconds(kDaemonsAllow).count()) +
         " s; a stopped console loses its run";
}

void HostGroup::heartbeats_and_liveness() {
  const auto now = Clock::now();
  if (last_liveness_ != Clock::time_point{} && now - last_liveness_ > control::kOwnPause) {
    paused_for_ = now - last_liveness_;
    resumed_at_ = now;
  }
  last_liveness_ = now;
  write_filter_output(false);  // what the filters printed, as stdout takes it
  if (Clock::now() - last_heartbeat_ >= kHeartbeatEvery) {
    last_heartbeat_ = Clock::now();
    Envelope h;
    h.mutable_heartbeat()->set_sequence(++heartbeat_seq_);
    for (std::size_t i = 0; i < clients_.size(); ++i) {
      if (!gone_.count(static_cast<int>(i))) clients_[i]->send(h);
    }
  }
  std::vector<int> silent, quiet;  // past kSilence; past half of it
  std::size_t live = 0;
  Clock::duration longest{};
  for (int i : active_) {
    if (gone_.count(i)) continue;
    ++live;
    const auto q = now - std::max(clients_[i]->last_heard(), resumed_at_);
    if (q > kSilence) silent.push_back(i);
    if (q > kSilence / 2) quiet.push_back(i);
    longest = std::max(longest, q);
  }
  if (silent.empty()) return;
  auto ms = [](Clock::duration d) {
    return std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(d).count()) + " ms";
  };
  if (live > 1 && quiet.size() == live) {
    // Every host fell silent at once (each has missed several heartbeats, the first has
    // passed the limit): the likelier cause is this console's own link, not each host's.
    std::string names;
    for (int i : quiet) names += (names.empty() ? "" : ", ") + clients_[i]->label();
    for (int i : quiet) gone_.insert(i);
    fail(Failure{"", -1, "", current_unit_, "link",
                 "no word from any host daemon (" + names + ") for over " + ms(kSilence / 2) + " (the longest " + ms(longest) + ")" +
                     "; this console's own link is down (or every host is unresponsive)"});
    return;
  }
  for (int i : silent) {
    gone_.insert(i);
    fail(Failure{"", -1, clients_[i]->name(), current_unit_, "link",
                 clients_[i]->label() + ": no word from the host daemon for " +
                     ms(Clock::now() - clients_[i]->last_heard()) + "; the link is down or the host is unresponsive"});
  }
}

void HostGroup::handle(const HostEvent& e, Envelope::BodyCase want, std::uint64_t unit, std::set<int>& done) {
  HostClient& c = *clients_[e.host];
  if (e.kind != HostEvent::Kind::kMessage) {
    if (gone_.insert(e.host).second && !(ending_ && app_ended_.count(e.host))) {
      if (const std::string pause = own_pause(); !pause.empty()) {
        fail(Failure{"", -1, c.name(), current_unit_, "host daemon",
                     c.label() + ": the host daemon closed the connection: " + pause});
      } else if (e.explained) {
        fail(Failure{"", -1, c.name(), current_unit_, "control connection", c.label() + ": " + e.error});
      } else {
        fail(Failure{"", -1, c.name(), current_unit_, "host daemon",
                     c.label() + ": lost the connection to the host daemon (" + e.error +
                         "); sluiced died or the host went away"});
      }
    }
    return;
  }
  const Envelope& m = e.message;
  switch (m.body_case()) {
    case Envelope::kAppReady:
      data_addresses_[e.host] = m.app_ready().data_address();
      break;
    case Envelope::kProgress:
      stats_.store(e.host, m.progress().streams());
      stats_.store_activity(e.host, c.name(), m.progress().copies());
      stats_.store_in_flight(e.host, c.name(), m.progress().in_flight());
      if (m.progress().final()) stats_.mark_final(e.host);  // its answer to abort: nothing follows
      return;
    case Envelope::kUnitDone:
      stats_.store(e.host, m.unit_done().streams());
      if (m.unit_done().copies_size() > 0) stats_.store_activity(e.host, c.name(), m.unit_done().copies());
      stats_.mark_idle(e.host, m.unit_done().index());
      if (m.unit_done().index() != unit) return;
      break;
    case Envelope::kFailure: {
      const auto& f = m.failure();
      if (f.streams_size() > 0) {  // its counts at the failure
        stats_.store(e.host, f.streams());
        stats_.mark_final(e.host);
      }
      Failure failure{f.filter(), f.copy(), f.host().empty() ? c.name() : f.host(), f.unit(), f.stage(), f.message()};
      if (failure.filter.empty()) {
        failure.message = "host " + failure.host + ": " + failure.stage + ": " + failure.message;
      }
      for (const auto& s : f.stuck()) stuck_.push_back(s + " on host " + failure.host);
      reported_.insert(e.host);
      fail(std::move(failure));
      return;
    }
    case Envelope::kExitReport: {
      const auto& r = m.exit_report();
      app_ended_.insert(e.host);
      const std::string daemon = "the app daemon (sluice-appd pid " + std::to_string(r.pid()) + ")";
      const std::string how = r.exited() ? "exited with status " + std::to_string(r.exit_status())
                                         : "was killed by " + signal_name(r.signal());
      if (!r.crash().empty()) {
        // Its crash handler said what crashed: the root cause, even while the run ends.
        Failure f = crash_failure(r.crash(), c.name(), current_unit_);
        f.message = f.filter.empty() ? "host " + c.name() + ": " + daemon + " " + r.crash()
                                     : r.crash() + "; " + daemon + " " + how;
        fail(std::move(f));
        return;
      }
      // An app daemon that reported its failure then exits: that exit is a consequence,
      // and must not replace the cause (a network failure ranks below an app daemon's end).
      if (ending_ || r.expected() || reported_.count(e.host)) return;
      fail(Failure{"", -1, c.name(), current_unit_, "app daemon",
                   "host " + c.name() + ": " + daemon + " " + how +
                       (between_units_ ? " while no unit of work ran" : " during the run"),
                   r.exited() ? "exit(" + std::to_string(r.exit_status()) + ")" : signal_name(r.signal())});
      return;
    }
    case Envelope::kError:
      fail(Failure{"", -1, c.name(), current_unit_, "host daemon", c.label() + ": the host daemon said: " + m.error().message()});
      return;
    case Envelope::kFilterLog:
      print_filter_log(c.name(), m.filter_log());
      return;
    default:
      break;
  }
  if (m.body_case() == want) done.insert(e.host);
}

bool HostGroup::wait_all(Envelope::BodyCase want, std::uint64_t unit, Clock::duration timeout,
                         const std::function<void()>& tick, std::set<int> done) {
  const auto deadline = Clock::now() + timeout;
  std::optional<Clock::time_point> settle;
  for (;;) {
    if (failure_ && !settle) {
      const bool silence = failure_->stage == "network" && net::names_a_silent_connection(failure_->message);
      settle = Clock::now() + (silence ? kSettleAfterSilence : kSettle);
    }
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
    tick();
  }
}

bool HostGroup::poll(Envelope::BodyCase want, std::uint64_t unit, std::set<int>& done) {
  while (auto e = events_.pop(0ms)) handle(*e, want, unit, done);
  heartbeats_and_liveness();
  check_signals();
  return !failure_;
}

std::vector<std::string> HostGroup::without_final_counts() const {
  std::vector<std::string> hosts;
  for (int i : active_) {
    if (stats_.counts_final(i)) continue;
    const double age = stats_.report_age_seconds(i);
    char last[64];
    std::snprintf(last, sizeof last, ", last reported %.1f s before the end", age);
    hosts.push_back(clients_[static_cast<std::size_t>(i)]->name() + (age < 0 ? ", which never reported" : last));
  }
  return hosts;
}

bool HostGroup::keep_alive() {
  std::set<int> unused;
  struct BetweenUnits {  // set while this runs, however it ends
    bool& flag;
    explicit BetweenUnits(bool& f) : flag(f) { flag = true; }
    ~BetweenUnits() { flag = false; }
  } between(between_units_);
  while (auto e = events_.pop(0ms)) handle(*e, Envelope::BODY_NOT_SET, current_unit_, unused);
  heartbeats_and_liveness();
  return !failure_;
}

void HostGroup::teardown(bool abort) {
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
  write_filter_output(true);  // all of it, before the run's summary
}

std::vector<HostTraffic> host_traffic(HostGroup& hosts, const HostStats& stats) {
  std::vector<HostTraffic> traffic;
  for (int i : hosts.active()) {
    HostTraffic h = traffic_of(hosts.client(i).name(), stats.of_host(i));
    // Between units a host sends no report (its counters cannot change then): its numbers
    // are as fresh as the last word from it, a heartbeat every 500 ms.
    h.report_age_seconds =
        stats.idle(i) ? std::chrono::duration<double>(Clock::now() - hosts.client(i).last_heard()).count()
                      : stats.report_age_seconds(i);
    traffic.push_back(h);
  }
  return traffic;
}

}  // namespace sluice::console
