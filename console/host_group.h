// HostGroup: the host daemons of one run, as the console drives them. It sends to every
// host, waits until every host with copies has answered (the barrier between units of work
// that the data plane relies on), and turns whatever else they say into metrics or into a
// failure: the one that explains the most (a filter's failure or crash over a lost link over
// a network error) is kept as the run's.
//
// A host daemon this quiet for 2.5 s, a closed connection, an app daemon that ends during
// the run, or SIGINT/SIGTERM (taken with sigtimedwait; REQUIRES: blocked in every thread)
// is a failure too.
//
// Not thread-safe: the console's main thread only (each HostClient's reader thread feeds
// the event queue).
#ifndef SLUICE_CONSOLE_HOST_GROUP_H_
#define SLUICE_CONSOLE_HOST_GROUP_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "console/host_client.h"
#include "console/host_stats.h"
#include "runtime/failure.h"
#include "runtime/placement.h"

namespace sluice::console {

class HostGroup {
 public:
  using Clock = std::chrono::steady_clock;

  // `clients`: connected and authenticated, in hosts: order. The hosts with copies are
  // those `placements` names. `stats` (outlives the HostGroup) receives their metrics.
  HostGroup(std::vector<std::unique_ptr<HostClient>> clients, const std::map<std::string, Placement>& placements,
            HostStats& stats);

  // Starts every host's reader thread.
  void start_readers();

  HostClient& client(int host) { return *clients_[static_cast<std::size_t>(host)]; }
  const std::vector<int>& active() const { return active_; }

  // Sends `message` to every host with copies whose connection is up.
  void broadcast(const control::Envelope& message);

  // Waits until every host with copies has sent `want` (for unit `unit` when unit_done),
  // or a failure; then, for the root cause to arrive, 300 ms more. Calls `tick` between
  // events (at least every 50 ms). Returns false on a failure (see failure()). `done`: the
  // hosts that sent it already (poll).
  bool wait_all(control::Envelope::BodyCase want, std::uint64_t unit, Clock::duration timeout,
                const std::function<void()>& tick, std::set<int> done = {});

  // One step of wait_all, without waiting: handles what the hosts said meanwhile (adding
  // those that sent `want` to `done`), sends the heartbeats that are due, looks at signals.
  // For a caller that waits for something else meanwhile. False on a failure.
  bool poll(control::Envelope::BodyCase want, std::uint64_t unit, std::set<int>& done);

  // Between units of a deployment that stays up (sluice serve, an Application): sends the
  // heartbeats that are due and handles what the hosts said meanwhile, without waiting.
  // Returns false once the deployment broke: a host lost or silent, an app daemon ended, a
  // failure reported (failure() says which). Call it at least every 500 ms: a host daemon
  // closes a console it has not heard from for 3 s.
  bool keep_alive();

  // Sends abort (when `abort`) or shutdown to every host with copies, waits up to 1.5 s for
  // their exit reports, and closes every connection (the daemons kill what is left).
  void teardown(bool abort);

  // Records a failure the console itself found (a stalled run): wait_all returns false.
  void fail_run(Failure f) { fail(std::move(f)); }

  // false: leave SIGINT/SIGTERM alone (a program that drives an Application handles its
  // own signals). Default: true (the console).
  void set_take_signals(bool take) { take_signals_ = take; }

  // The unit of work that failures which are not a filter's are reported against.
  void set_unit(std::uint64_t unit) { current_unit_ = unit; }
  // After a failure: the hosts whose final counts never came, each as "b, which never
  // reported" or "b, last reported 0.4 s before the end"; the streams' counts are then lower
  // bounds (RunReport::partial_counts, UnitReport::partial_counts).
  std::vector<std::string> without_final_counts() const;

  // Each host's data plane address, from its app_ready: host index -> "addr:port".
  const std::map<int, std::string>& data_addresses() const { return data_addresses_; }
  const std::optional<Failure>& failure() const { return failure_; }
  // Copies that did not stop after the failure: "name#copy (stage) on host h".
  const std::vector<std::string>& stuck() const { return stuck_; }
  bool interrupted() const { return interrupted_; }

 private:
  // Handles one event; records a failure when it is one.
  void handle(const HostEvent& e, control::Envelope::BodyCase want, std::uint64_t unit, std::set<int>& done);
  void heartbeats_and_liveness();
  // Why what follows happened, when this console itself did not run for longer than the host
  // daemons allow, shortly before; else "".
  std::string own_pause() const;
  void check_signals();
  void fail(Failure f);

  EventQueue events_;  // before clients_: their reader threads push here until joined
  std::vector<std::unique_ptr<HostClient>> clients_;
  std::vector<int> active_;  // indices of the hosts with copies
  HostStats& stats_;
  std::map<int, std::string> data_addresses_;
  std::map<std::string, std::string> copies_on_;  // host -> "c#0, up#1": what its loss takes
  std::set<int> gone_;       // hosts whose connection is lost
  std::set<int> app_ended_;  // hosts whose app daemon's exit was reported
  std::set<int> reported_;   // hosts that reported a failure (their app daemon then exits)
  std::optional<Failure> failure_;
  std::vector<std::string> stuck_;
  bool interrupted_ = false;
  bool take_signals_ = true;
  std::uint64_t current_unit_ = 0;
  bool ending_ = false;  // shutdown or abort sent: exits are expected
  bool between_units_ = false;  // in keep_alive(): what breaks now broke no unit
  Clock::time_point last_heartbeat_ = Clock::now();
  std::uint64_t heartbeat_seq_ = 0;
  Clock::time_point last_liveness_{};  // the last heartbeats_and_liveness
  Clock::time_point resumed_at_{};     // the end of this console's last pause
  Clock::duration paused_for_{};       // ... and its length
};

// Every active host's traffic, as `stats` last heard it.
std::vector<HostTraffic> host_traffic(HostGroup& hosts, const HostStats& stats);

}  // namespace sluice::console

#endif  // SLUICE_CONSOLE_HOST_GROUP_H_
