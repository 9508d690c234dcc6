#include "runtime/engine.h"

#include <algorithm>
#include <cstdlib>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>

#include <sched.h>

#include "runtime/backends.h"
#include "runtime/context_impl.h"
#include "runtime/crash_report.h"
#include "runtime/graph.h"
#include "stream/run_signal.h"

namespace sluice {

std::string Failure::str() const {
  if (filter.empty()) return message;
  return "filter '" + filter + "' copy " + std::to_string(copy) + " on host " + host +
         " failed in " + stage + " (unit of work " + std::to_string(unit) + "): " + message;
}

namespace {
enum class Command { kNone, kRun, kStop };
}  // namespace

// One filter copy: its thread, its filter object and its context.
struct CopyRunner {
  // `host` must outlive the runner (the Engine's options).
  CopyRunner(const topo::FilterSpec& s, int i, const std::string& host)
      : spec(&s), index(i), record(s.name.c_str(), i, host.c_str()) {}

  const topo::FilterSpec* spec;
  int index;
  // What the copy is doing (unit of work, stage): for failures, stuck reports and crashes.
  crash::CopyRecord record;
  std::unique_ptr<ContextImpl> context;
  std::thread thread;
  WaitRecord waiting;  // what it waits for on a stream, if anything
  bool busy = false;   // guarded by State::mu
  int cpu = -1;        // the CPU it is pinned to; -1: none
};

struct Engine::State {
  const topo::Topology& topology;
  EngineOptions options;
  Placement placement;
  RunSignal signal;
  Graph graph;
  std::vector<std::unique_ptr<CopyRunner>> copies;
  // Every port in this process with the index of its stream, for stream_stats(). The
  // ports belong to the copies' contexts.
  std::vector<std::pair<std::size_t, const OutputPort*>> producer_ports;
  std::vector<std::pair<std::size_t, const InputPort*>> consumer_ports;

  std::mutex mu;  // guards everything below
  std::condition_variable changed;
  Command command = Command::kNone;
  std::uint64_t generation = 0;  // bumped per command
  std::uint64_t unit = 0;
  std::string work;
  int pending = 0;  // copies that have not finished the current command
  std::optional<Failure> failure;
  bool failed = false;  // a failure happened: no more units

  State(const topo::Topology& t, EngineOptions o)
      : topology(t),
        options(std::move(o)),
        placement(options.placement ? *options.placement : Placement::everything(t)),
        graph(t, signal, placement, options.wiring) {}

  void fail(Failure f) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (failure) return;  // the first failure is the one to report
      failure = std::move(f);
      failed = true;
    }
    signal.abort();
    changed.notify_all();
  }

  void finished_command(CopyRunner& copy) {
    std::lock_guard<std::mutex> lock(mu);
    copy.busy = false;
    if (--pending == 0) changed.notify_all();
  }

  void report(CopyRunner& copy, std::uint64_t index, const std::string& message) {
    fail(Failure{copy.spec->name, copy.index, options.host, index, copy.record.stage.load(), message});
  }

  void run_copy(CopyRunner& copy);
  void run_unit_on(CopyRunner& copy, Filter& filter, std::uint64_t index, const std::string& work);
  std::optional<Failure> wait_pending();
};

void Engine::State::run_unit_on(CopyRunner& copy, Filter& filter, std::uint64_t index,
                                const std::string& unit_work) {
  ContextImpl& ctx = *copy.context;
  std::atomic<const char*>& stage = copy.record.stage;
  copy.record.unit = index;
  try {
    ctx.begin_unit(index, unit_work);
    stage = "init";
    filter.init(ctx);
    stage = "process";
    filter.process(ctx);
    stage = "end of work";
    ctx.end_process();
    stage = "finalize";
    filter.finalize(ctx);
  } catch (const Aborted&) {
    // Another part failed first (or the run was cancelled); that failure is reported.
    if (!signal.aborted()) report(copy, index, "threw sluice::Aborted although the run was not aborted");
  } catch (const std::exception& e) {
    report(copy, index, e.what());
  } catch (...) {
    report(copy, index, "threw an exception that is not a std::exception");
  }
  stage = "idle";
}

// Pins the calling thread to `cpu` (-1: leaves it alone). Two copies that spin briefly
// while waiting for each other can end up sharing one CPU and stay there (both always
// look busy to the load balancer), which cuts a stream's throughput by 4x or more; pinned
// to distinct CPUs they cannot. See docs/runtime.md, "Threads and CPUs".
void pin_to_cpu(int cpu) {
  if (cpu < 0) return;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(cpu, &one);
  sched_setaffinity(0, sizeof one, &one);  // best effort: running unpinned is still correct
}

// The CPUs to pin copies to, one each, or none when there are more copies than CPUs
// this process may use, or when SLUICE_PIN=off.
std::vector<int> cpus_for_copies(std::size_t copies) {
  const char* pin = std::getenv("SLUICE_PIN");
  if (pin != nullptr && (std::string(pin) == "off" || std::string(pin) == "0")) return {};
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return {};
  std::vector<int> cpus;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (CPU_ISSET(cpu, &allowed)) cpus.push_back(cpu);
  }
  if (copies > cpus.size()) return {};
  cpus.resize(copies);
  return cpus;
}

void Engine::State::run_copy(CopyRunner& copy) {
  // A crash on this thread names the copy; the alternate stack lets the report run even
  // when the filter overflowed the thread's stack.
  crash::AltStack alt_stack;
  crash::ScopedCurrent current(&copy.record);
  pin_to_cpu(copy.cpu);
  LanguageBackend* backend = nullptr;
  std::unique_ptr<Filter> filter;
  try {
    backend = &backend_for(copy.spec->lang);
    backend->thread_started();
    filter = backend->create(*copy.spec);
  } catch (const std::exception& e) {
    report(copy, 0, e.what());
  }
  copy.record.stage = "idle";
  finished_command(copy);

  std::uint64_t seen = 0;
  for (;;) {
    std::uint64_t index;
    std::string unit_work;
    {
      std::unique_lock<std::mutex> lock(mu);
      changed.wait(lock, [&] { return generation != seen; });
      seen = generation;
      if (command == Command::kStop) break;
      index = unit;
      unit_work = work;
    }
    if (filter) run_unit_on(copy, *filter, index, unit_work);
    finished_command(copy);
  }
  // Destroy the filter on its own thread (a Java filter drops its JVM references here).
  copy.record.stage = "destroy";
  try {
    filter.reset();
  } catch (...) {
  }
  if (backend != nullptr) backend->thread_stopping();
}

std::optional<Failure> Engine::State::wait_pending() {
  std::unique_lock<std::mutex> lock(mu);
  changed.wait(lock, [&] { return pending == 0 || failed; });
  if (pending != 0) {
    // Give the others a moment to unwind from the abort.
    changed.wait_for(lock, options.abort_grace, [&] { return pending == 0; });
  }
  return failure;
}

Engine::Engine(const topo::Topology& topology, EngineOptions options)
    : state_(std::make_unique<State>(topology, std::move(options))) {
  // Before any copy runs (and before a JVM, if none runs yet: see crash_report.h).
  crash::install_handlers();
  State& s = *state_;
  // Contexts and ports first, so every stream has its writers and readers before any
  // thread runs.
  for (const topo::FilterSpec& spec : topology.filters) {
    for (int c = 0; c < spec.copies; ++c) {
      if (!s.placement.runs_here(spec.name, c)) continue;
      auto copy = std::make_unique<CopyRunner>(spec, c, s.options.host);
      copy->context = std::make_unique<ContextImpl>(spec, c, s.options.host, topology.dir);
      s.copies.push_back(std::move(copy));
    }
  }
  auto copy_of = [&](const std::string& filter, int index) -> CopyRunner* {
    for (auto& copy : s.copies) {
      if (copy->spec->name == filter && copy->index == index) return copy.get();
    }
    return nullptr;  // runs in another process
  };
  for (std::size_t i = 0; i < s.graph.streams().size(); ++i) {
    StreamRuntime& stream = *s.graph.streams()[i];
    const topo::StreamSpec& spec = *stream.spec;
    for (int p = 0; p < stream.producer_copies; ++p) {
      if (CopyRunner* producer = copy_of(spec.from.filter, p)) {
        auto port = std::make_unique<OutputPort>(spec.from.port, stream.label, spec.policy, *stream.pool,
                                                 stream.endpoints, *stream.room, static_cast<std::uint32_t>(p),
                                                 &producer->waiting);
        s.producer_ports.push_back({i, port.get()});
        producer->context->add_output(std::move(port));
      }
    }
    for (int c = 0; c < stream.consumer_copies; ++c) {
      if (CopyRunner* consumer = copy_of(spec.to.filter, c)) {
        auto port = std::make_unique<InputPort>(spec.to.port, *stream.channels[c], &consumer->waiting);
        s.consumer_ports.push_back({i, port.get()});
        consumer->context->add_input(std::move(port));
      }
    }
  }
  if (s.options.wiring != nullptr) s.options.wiring->graph_ready(s.graph);
  const std::vector<int> cpus = s.options.pin_copies ? cpus_for_copies(s.copies.size()) : std::vector<int>{};
  for (std::size_t i = 0; i < cpus.size(); ++i) s.copies[i]->cpu = cpus[i];
  // A pinned copy's peers have CPUs of their own, so yielding could only hand our CPU to
  // some other process for a whole time slice: spin ~5 us, then sleep. Measured (quick
  // local_stream_bench, 10 B .. 1 MiB) with two CPU hogs running: 1.8x/2.0x/0.75x/1.3x/7x/0.5x
  // ZeroMQ with the yield phase, 2.8x/4.7x/3.7x/7.2x/47x/106x without; the same on a quiet
  // machine. A 2 us spin without yield lost at 10 KB and up (more futex sleeps at depth 16).
  if (!cpus.empty()) s.signal.set_patience({5000, 0});
  std::lock_guard<std::mutex> lock(s.mu);
  s.pending = static_cast<int>(s.copies.size());
  for (auto& copy : s.copies) {
    copy->busy = true;
    CopyRunner* raw = copy.get();
    copy->thread = std::thread([&s, raw] { s.run_copy(*raw); });
  }
}

Engine::~Engine() {
  State& s = *state_;
  bool stuck = false;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    stuck = s.pending != 0;
    s.command = Command::kStop;
    ++s.generation;
    s.signal.abort();  // in case a copy is still blocked on a stream
  }
  s.changed.notify_all();
  if (stuck) {
    // A copy is stuck in user code: joining would hang. Leave the threads and the state
    // they use; the process is about to report the failure and exit.
    for (auto& copy : s.copies) copy->thread.detach();
    (void)state_.release();
    return;
  }
  for (auto& copy : s.copies) copy->thread.join();
}

std::optional<Failure> Engine::start() { return state_->wait_pending(); }

std::optional<Failure> Engine::run_unit(std::uint64_t index, const std::string& work) {
  State& s = *state_;
  {
    std::lock_guard<std::mutex> lock(s.mu);
    if (s.failed) return s.failure;
    if (s.pending != 0) throw Error("internal: run_unit while a unit is still running");
    s.command = Command::kRun;
    s.unit = index;
    s.work = work;
    s.pending = static_cast<int>(s.copies.size());
    for (auto& copy : s.copies) copy->busy = true;
    ++s.generation;
  }
  s.changed.notify_all();
  return s.wait_pending();
}

void Engine::cancel(const std::string& reason, const std::string& stage) {
  state_->fail(Failure{"", -1, state_->options.host, state_->unit, stage, reason});
}

std::vector<StreamStats> Engine::stream_stats() const {
  std::vector<StreamStats> out;
  for (const auto& stream : state_->graph.streams()) {
    StreamStats stats;
    stats.label = stream->label;
    stats.producer_copies = stream->producer_copies;
    stats.consumer_copies = stream->consumer_copies;
    out.push_back(stats);
  }
  for (const auto& [stream, port] : state_->producer_ports) {
    out[stream].buffers += port->counters().buffers.get();
    out[stream].bytes += port->counters().bytes.get();
    out[stream].producer_blocked_ns += port->counters().blocked_ns.get();
  }
  for (const auto& [stream, port] : state_->consumer_ports) {
    out[stream].consumed += port->counters().buffers.get();
    out[stream].consumer_blocked_ns += port->counters().blocked_ns.get();
  }
  return out;
}

std::vector<CopyActivity> Engine::activity() const {
  std::vector<CopyActivity> out;
  const std::uint64_t now = Waiter::now_ns();
  for (const auto& copy : state_->copies) {
    CopyActivity a;
    a.filter = copy->spec->name;
    a.copy = copy->index;
    a.host = state_->options.host;
    a.stage = copy->record.stage.load();
    if (const char* op = copy->waiting.op.load(std::memory_order_acquire)) {
      a.waiting_for = op;
      const std::string* stream = copy->waiting.stream.load(std::memory_order_relaxed);
      a.stream = stream != nullptr ? *stream : "";
      const std::uint64_t since = copy->waiting.since_ns.load(std::memory_order_relaxed);
      a.waiting_seconds = now > since ? static_cast<double>(now - since) / 1e9 : 0;
    }
    out.push_back(std::move(a));
  }
  return out;
}

std::vector<std::string> Engine::stuck_copies() const {
  std::lock_guard<std::mutex> lock(state_->mu);
  std::vector<std::string> out;
  for (const auto& copy : state_->copies) {
    if (copy->busy) {
      out.push_back(copy->spec->name + "#" + std::to_string(copy->index) + " (in " +
                    copy->record.stage.load() + ")");
    }
  }
  return out;
}

int Engine::copy_count() const { return static_cast<int>(state_->copies.size()); }

}  // namespace sluice
