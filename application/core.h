// AppCore: what an Application and its Units share: the topology, the queue of submitted
// units, and the runner thread that deploys the application and runs the units one at a
// time, in submission order (sluice/application.h).
//
// Ownership: Application and every Unit hold a shared_ptr<AppCore>, so a Unit stays usable
// (it reports how it ended) after its Application is gone. The runner thread owns the
// current Deployment. A deployment that had a failed unit is destroyed once the unit's end
// is reported, its threads and connections with it, but its pools wait in a PoolRefuge
// (and so do the last deployment's at stop()) until the AppCore goes, so that result buffers
// a client still holds stay valid (their memory goes as soon as every block is back).
//
// Thread safety: every method may be called from any thread.
#ifndef SLUICE_APPLICATION_CORE_H_
#define SLUICE_APPLICATION_CORE_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "application/deployment.h"
#include "application/watch.h"
#include "log/backend.h"
#include "runtime/failure.h"
#include "sluice/application.h"
#include "stream/input_port.h"
#include "topology/topology.h"

namespace sluice {

class AppCore;

// The `to: client` stream of one unit, as the client reads it.
class UnitResults final : public InputStream {
 public:
  explicit UnitResults(Unit::State& unit) : unit_(unit) {}
  const std::string& name() const override;

  // Who reads: the client's read(), which throws sluice::Error once Application::stop()
  // discarded the results; the client's wait(), which drops them; the application itself,
  // discarding them. The client, either way, hears after a while when an earlier unit whose
  // results no one reads holds its unit back.
  enum class Reader { kClient, kWaiter, kDiscarder };
  // The unit's next result buffer; empty once its results ended. Waits while the unit is
  // queued.
  static std::optional<Buffer> next(Unit::State& unit, Reader reader);
  // Reads what is left of the unit's results and drops it, whatever the client does.
  static void discard_rest(Unit::State& unit, Reader reader = Reader::kDiscarder);

 private:
  // Every read lands here (this stream never takes buffers ahead): reads the unit's port.
  std::optional<Buffer> read_more() override;

  Unit::State& unit_;
};

}  // namespace sluice

// One submitted unit of work (the state behind a sluice::Unit handle).
struct sluice::Unit::State {
  State(std::shared_ptr<AppCore> core, std::uint64_t index, std::string work)
      : core(std::move(core)), index(index), work(std::move(work)) {}

  // Marks the results ended: read() returns empty from now on. Waits until a read in
  // progress has returned (it unwinds promptly: the unit ended or was aborted).
  void close_results();

  const std::shared_ptr<AppCore> core;
  const std::uint64_t index;
  const std::string work;
  UnitResults results{*this};

  std::mutex mu;  // guards what follows
  std::condition_variable changed;
  enum class Phase { kQueued, kRunning, kEnded } phase = Phase::kQueued;
  InputPort* port = nullptr;     // while running: the deployment's client end (or null)
  bool results_closed = false;   // the reader saw the end, or the unit failed
  bool cancel_requested = false;
  std::optional<UnitReport> report;  // once ended
  std::string discarded;  // why the client's reads throw: Application::stop() discarded them

  std::mutex read_mu;  // held while reading from `port`
  // When the unit started running, or a result was last handed to the client (steady clock,
  // ns): how a reader of a later unit tells this unit's results are not being read
  // (UnitResults::read_more).
  std::atomic<std::int64_t> last_progress_ns{0};
};

namespace sluice {

// Makes a deployment of `topology` (embedded or across hosts). Throws sluice::Error.
// The AppCore behind `app` (null for a moved-from Application): for what the public API
// does not offer, such as sluice serve's live view (set_watcher, sample).
std::shared_ptr<AppCore> core_of(const Application& app);

using DeploymentFactory = std::function<std::unique_ptr<Deployment>(const topo::Topology&)>;

class AppCore : public std::enable_shared_from_this<AppCore> {
 public:
  AppCore(topo::Topology topology, DeploymentFactory factory, bool remote);
  ~AppCore();

  // From now until the core goes, nothing logged in this process reaches stderr
  // (ApplicationOptions::log_to_stderr = false; process-wide, as the log is).
  void mute_stderr() { mute_ = std::make_unique<logging::MuteStderr>(); }

  const topo::Topology& topology() const { return topology_; }
  bool remote() const { return remote_; }

  // Deploys (on the runner thread) and waits; throws sluice::Error naming the failure.
  void start();
  // Why start() failed (its stage says what: "connect" when a host daemon could not be
  // reached), or nothing.
  std::optional<Failure> start_failure() const;
  std::shared_ptr<Unit::State> submit(std::string payload);
  // Cancels unit `unit`: dropped when queued, aborted when running.
  void cancel(Unit::State& unit);
  // Its Unit handle was destroyed before its results ended: a thread of the application's
  // own (the drainer, started at the first such unit, joined by stop()) reads and drops
  // them once it runs, so the unit runs to its end and the next one after it. ~Unit never waits: a thread holding an earlier, unread unit cannot block on it.
  // Throws when no thread can be started (nothing is queued then).
  void orphan(std::shared_ptr<Unit::State> unit);
  // The state behind `unit` (null for a moved-from Unit), for DetachedUnit.
  using UnitState = Unit::State;
  static std::shared_ptr<UnitState> state_of(const Unit& unit) { return unit.state_; }
  // Marks the results of every unit that has not ended discarded (a client's read throws
  // sluice::Error(why) from then on), then reads and drops them, unit after unit, until
  // each unit's results ended. What Application::stop() does first.
  void discard_unread(const std::string& why);
  // Runs what is queued (or, with `abort`, cancels it), then stops the runner and destroys
  // every deployment (their pools wait in the refuge for the result buffers a client still
  // holds, until the AppCore goes). Idempotent.
  void stop(bool abort);
  std::uint64_t units_ended() const;
  // The unit running now, when it runs ahead of unit `index` and no one is in the middle of
  // reading its results (nor did they end): its index and how long since it started or a
  // result was last read. What a reader of a later unit, waiting for it to start, checks for
  // a client that reads units out of order (a unit ends only once its results are read).
  struct RunningUnread {
    std::uint64_t index = 0;
    double unread_seconds = 0;
  };
  std::optional<RunningUnread> running_unread_before(std::uint64_t index) const;

  // Why the application cannot be deployed again (its Slurm job ended), once a failed
  // deployment said so; every later unit fails at once with it. sluice serve ends then.
  std::optional<std::string> gone() const;

  // Tells `watcher` about every unit from now on (null: nobody). Call before start(); the
  // watcher must outlive stop().
  void set_watcher(AppWatcher* watcher);
  // What the application's streams carried over its whole life (deployments replaced after a
  // failed unit included) and what its copies do now; nullopt before the first deployment.
  std::optional<DeploymentSample> sample() const;

 private:
  void run();  // the runner thread
  void drain();  // the drainer thread (orphan())
  void run_one(Unit::State& unit);
  // Makes and starts a deployment when there is none. The failure, if that failed.
  std::optional<Failure> ensure_deployed();
  void end_unit(Unit::State& unit, UnitReport report);
  // The current deployment is not used again: it goes to retired_, its pools promised to
  // refuge_. Left as it is when copies are stuck in user code.
  void retire_deployment();
  // Destroys the retired deployments, and frees what the refuge no longer needs.
  void bury_retired();
  // deployment_->keep_alive(), with an exception as a failure.
  std::optional<Failure> keep_deployment_alive();
  bool aborting() const;
  // A deployment that broke between units (Deployment::keep_alive): says so, and retires it.
  void retire_broken_deployment(const Failure& why);
  // No deployment is current from now on; its counters join carried_.
  void let_go_of_deployment();
  // At the end: frees the refuge, or keeps it for good (with a warning) while a client still
  // holds result buffers from its pools.
  void keep_pools_of_held_buffers();

  std::unique_ptr<logging::MuteStderr> mute_;  // first: it outlives what ~AppCore logs
  const topo::Topology topology_;
  const DeploymentFactory factory_;
  const bool remote_;

  mutable std::mutex mu_;  // guards what follows
  std::condition_variable changed_;
  std::deque<std::shared_ptr<Unit::State>> queue_;
  std::vector<std::weak_ptr<Unit::State>> submitted_;  // every unit, for discard_unread
  std::uint64_t next_index_ = 0;
  std::uint64_t ended_ = 0;
  bool stopping_ = false;
  bool aborting_ = false;
  bool start_requested_ = false;
  bool start_done_ = false;
  std::optional<Failure> start_failure_;
  std::optional<std::string> gone_;
  Unit::State* running_ = nullptr;
  Deployment* current_ = nullptr;  // the runner's deployment, for cancel() and sample()
  AppWatcher* watcher_ = nullptr;
  std::vector<StreamStats> carried_;  // counters of the deployments retired so far
  std::map<std::string, console::HostTraffic> carried_hosts_;  // ... and their hosts' shares
  std::thread runner_;
  std::mutex join_mu_;  // one stop() at a time joins the threads (two at once hung)
  // See orphan(). Guarded by mu_: units to drain, in order; those drained, let go of by the
  // next orphan() or stop() (the drainer may not hold the core's last reference).
  std::deque<std::shared_ptr<Unit::State>> orphans_;
  std::deque<std::shared_ptr<Unit::State>> drained_;
  bool drainer_done_ = false;
  std::thread drainer_;

  // The runner thread's own. The refuge outlives the deployments whose pools it takes.
  std::unique_ptr<PoolRefuge> refuge_ = std::make_unique<PoolRefuge>();
  std::unique_ptr<Deployment> deployment_;
  std::vector<std::unique_ptr<Deployment>> retired_;
};

}  // namespace sluice

#endif  // SLUICE_APPLICATION_CORE_H_
