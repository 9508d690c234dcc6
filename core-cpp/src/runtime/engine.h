// Engine: runs an application's filter copies in this process, unit of work by unit of work.
//
// The embedded console and the app daemon both drive an Engine. It builds the streams
// (Graph), runs each C++ copy as a task on a few worker threads (sched/scheduler.h) and each
// Java copy on a thread of its own, creates each copy's filter object there, and then, per run_unit(), has every copy run init -> process -> finalize. The
// first failure anywhere aborts the run: every blocked read, write and allocate throws
// sluice::Aborted so the other threads unwind promptly.
// A copy that crashes the process (SIGSEGV, abort...) is named on stderr before it dies:
// the Engine installs the crash handlers and keeps each copy's crash::CopyRecord current on
// its thread (runtime/crash_report.h).
//
// Thread safety: start, run_unit and cancel may be called from any thread; the stats
// accessors too (the console's progress thread reads them while a unit runs).
#ifndef SLUICE_RUNTIME_ENGINE_H_
#define SLUICE_RUNTIME_ENGINE_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "buffer/pool_refuge.h"
#include "runtime/failure.h"
#include "runtime/placement.h"
#include "runtime/stream_wiring.h"
#include "sched/layout_trial.h"
#include "topology/topology.h"

namespace sluice {

class InputPort;
struct StreamRuntime;

struct EngineOptions {
  // What Context::host() says. Default: "local" (embedded).
  std::string host = "local";
  // After a failure, how long to wait for the other copies to unwind before declaring them
  // stuck (a filter in an endless computation cannot be interrupted). Default: 5 s.
  std::chrono::milliseconds abort_grace{5000};
  // The copies that run in this process. Default (nullopt): all of them (embedded).
  std::optional<Placement> placement;
  // How streams reach copies in other processes; required when `placement` leaves out a
  // consumer copy that a local producer writes to. Not owned; must outlive the Engine.
  StreamWiring* wiring = nullptr;
  // Run C++ copies as tasks on a scheduler's worker threads, one per CPU (see
  // sched/scheduler.h). false: every copy on a thread of its own. Default: true.
  bool tasks = true;
  // Worker threads for the tasks. Default (0): one per CPU this process may use, at most one
  // per C++ copy. Nothing is pinned, so several processes share the machine's CPUs fairly.
  int workers = 0;
  // Packed (every task on the first worker, for graphs of up to 64 C++ copies a worker) or
  // spread (the copies in stream order cut into one contiguous run per worker). Default
  // (kAuto): packed, trying spread now and then and keeping it while it moves more buffers
  // a second (sched/layout_trial.h). Under kAuto, the SLUICE_LAYOUT environment variable
  // (auto, packed, spread; unset or empty: auto) decides; anything else throws.
  sched::LayoutChoice layout = sched::LayoutChoice::kAuto;
};

struct StreamStats {
  std::string label;  // "read.out -> count.in"
  int producer_copies = 0;
  int consumer_copies = 0;
  std::uint64_t buffers = 0;   // written by producer copies
  std::uint64_t bytes = 0;
  std::uint64_t consumed = 0;  // read by consumer copies (counted a run of up to 32 at a time)
  std::uint64_t producer_blocked_ns = 0;  // summed over producer copies
  std::uint64_t consumer_blocked_ns = 0;  // summed over consumer copies
  std::uint64_t queued = 0;    // buffers waiting for consumer copies now, in their queues or
                               // in a run taken and not all read yet (a snapshot)
  std::uint64_t capacity = 0;  // what those hold at most (depth per consumer copy here, plus
                               // the run it may have taken: up to 32 buffers and no more than
                               // depth, 1 on demand_driven)
};

// Adds `from`'s counters, queue depth and capacity to `into` (label and copy counts stay).
void add_counters(StreamStats& into, const StreamStats& from);
// Adds what consumer copy `port` read of its stream to `into`: consumed, time blocked (with
// a wait under way at `now_ns`, Waiter::coarse_now_ns), and the run it took and has not read
// to the end (as queued, with the run's room as capacity).
void add_reads(StreamStats& into, const InputPort& port, std::uint64_t now_ns);
// Adds what waits in `stream`'s queues in this process, every lane, to `into`'s queued and
// capacity.
void add_queues(StreamStats& into, const StreamRuntime& stream);

// What one copy is doing right now (Engine::activity), for the console's stall report.
struct CopyActivity {
  std::string filter;
  int copy = 0;
  std::string host;
  std::string stage;        // create, init, process, end of work, finalize, idle
  std::string waiting_for;  // "read", "write", "allocate"; "" when not waiting on a stream
  std::string stream;       // the stream it waits on: "a.out -> b.in"
  double waiting_seconds = 0;
  std::uint64_t unit = 0;  // the unit of work it runs, or ran last
};

class Engine {
 public:
  // Builds the graph and starts the copy threads. `topology` must outlive the Engine and
  // must have passed check_loadable(). Throws sluice::Error when the graph cannot be built,
  // or when a copy cannot be started (no thread or stack to be had): the copies already
  // started are then stopped and joined, as by the destructor, before it throws.
  Engine(const topo::Topology& topology, EngineOptions options = {});
  // Stops and joins the copy threads. If some are stuck in user code after a failure,
  // leaves them running (detached) with the state they use. Destroyed before start(), it
  // first waits up to EngineOptions::abort_grace for the copies to create their filters;
  // copies still creating after that count as stuck.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Waits until every copy has created its filter object. Returns the first failure.
  std::optional<Failure> start();
  // Runs one unit of work on every copy and waits for all of them. Returns the first
  // failure, after which the engine runs no more units.
  // REQUIRES: start() returned no failure.
  std::optional<Failure> run_unit(std::uint64_t index, const std::string& work);
  // Aborts the current unit (e.g. on Ctrl-C) with `reason`; run_unit returns it as a
  // Failure of stage `stage`.
  void cancel(const std::string& reason, const std::string& stage = "cancelled");

  // Traffic of this process's ports (producers' writes, consumers' blocked time).
  std::vector<StreamStats> stream_stats() const;
  // What every copy in this process is doing now (a snapshot; any thread).
  std::vector<CopyActivity> activity() const;
  // Copies that did not unwind within abort_grace after a failure: "name#copy (stage)".
  std::vector<std::string> stuck_copies() const;
  int copy_count() const;

  // The `to: client` stream's consumer end when the client runs in this process (the
  // placement has topo::kClient), else null. Owned by the Engine. Whoever reads it (one
  // thread at a time: the Application's current unit) calls begin_unit() before
  // each unit's first read and reads to the end (or the unit cannot end).
  InputPort* client_port();
  // When the Engine goes, keep its pools in `refuge` (Graph::hand_pools_to): a client may
  // still hold result buffers. `refuge` must outlive the Engine.
  void hand_pools_to(PoolRefuge* refuge);

 private:
  struct State;
  // The destructor's work: stops the copies and joins them, or leaves the stuck ones.
  void stop_copies();

  std::unique_ptr<State> state_;
};

}  // namespace sluice

#endif  // SLUICE_RUNTIME_ENGINE_H_
