#include "runtime/engine.h"

#include <cxxabi.h>

#include <algorithm>
#include <map>
#include <memory>
#include <cstdlib>
#include <typeinfo>
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <system_error>

#include <sched.h>

#include "runtime/backends.h"
#include "runtime/context_impl.h"
#include "runtime/crash_report.h"
#include "runtime/graph.h"
#include "sched/scheduler.h"
#include "text/integer.h"
#include "text/shortened.h"
#include "topology/suggest.h"
#include "stream/input_port.h"
#include "sync/waiter.h"
#include "sync/run_signal.h"
#include "sync/thread_name.h"

namespace sluice {

std::string Failure::str() const {
  if (filter.empty()) return message;
  const std::string who = "filter '" + filter + "' copy " + std::to_string(copy) + " on host " + host + " ";
  if (message.rfind(who, 0) == 0) return message;  // a crash line: it says who itself
  return who + "failed in " + stage + " (unit of work " + std::to_string(unit) + "): " + message;
}

std::string cut_failure_message(std::string message) {
  // Up to the length of a message cut already: cutting twice (the engine, then the app
  // daemon) would name the first cut's length as the message's.
  if (message.size() <= kFailureMessageMax + 64) return message;
  const std::size_t whole = message.size();
  message.resize(text::utf8_cut(message, kFailureMessageMax));
  return message + "\n... (" + std::to_string(whole) + " bytes in all: cut to 64 KiB)";
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
  // A C++ copy runs as a task on the Engine's scheduler; a Java copy on a thread of its own
  // (a JVM cannot have native stacks switched under its frames).
  bool as_task = false;
  std::thread thread;
  WaitRecord waiting;  // what it waits for on a stream, if anything
  bool busy = false;   // guarded by State::mu
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
  std::unique_ptr<InputPort> client_port;  // the `to: client` stream's end, when it is here

  std::unique_ptr<sched::Scheduler> scheduler;  // when C++ copies run here
  // Copies wait for their next command here (tasks and threads alike). Never aborted.
  RunSignal control;
  Waiter command_ready{control};
  std::atomic<std::uint64_t> generation{0};  // bumped per command (under mu)

  std::mutex mu;  // guards everything below
  std::condition_variable changed;  // the controlling thread waits here for copies
  Command command = Command::kNone;
  std::uint64_t unit = 0;
  std::string work;
  int pending = 0;  // copies that have not finished the current command
  bool started = false;  // start() was called: creation was waited for
  std::optional<Failure> failure;
  bool failed = false;  // a failure happened: no more units
  bool args_checked = false;  // warn_of_unread_args ran (after the first unit that ended well)

  State(const topo::Topology& t, EngineOptions o)
      : topology(t),
        options(std::move(o)),
        placement(options.placement ? *options.placement : Placement::everything(t)),
        graph(t, signal, placement, options.wiring) {}

  void fail(Failure f) {
    {
      std::lock_guard<std::mutex> lock(mu);
      if (failure) return;  // the first failure is the one to report
      f.message = cut_failure_message(std::move(f.message));
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

namespace {

// The type of the exception being handled, demangled ("int", "MyError"), for one that is not
// a std::exception and so has no what(). Call only inside a catch block.
std::string demangled(const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> name(abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return status == 0 && name ? name.get() : type.name();
}

std::string current_exception_type() {
  const std::type_info* type = abi::__cxa_current_exception_type();
  if (type == nullptr) return "of unknown type";
  return "of type " + demangled(*type);
}

// A filter's exception as its failure's message: what() alone for sluice::Error (the
// runtime's and the Java bridge's, whose messages say what happened) and for a plain
// std::runtime_error (the filter's own sentence); else the type first, as Java's are named,
// since a library's what() alone may say little ("stol" from std::invalid_argument: an
// outside review).
std::string exception_message(const std::exception& e) {
  if (dynamic_cast<const Error*>(&e) != nullptr || typeid(e) == typeid(std::runtime_error)) return e.what();
  const std::string type = demangled(typeid(e));
  const std::string what = e.what();
  return what.empty() || what == type ? type : type + ": " + what;
}

}  // namespace

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
    report(copy, index, exception_message(e));
  } catch (...) {
    report(copy, index, "threw an exception that is not a std::exception: " + current_exception_type());
  }
  stage = "idle";
}

// The copies that run as tasks (indices into `copies`), in stream order: filters
// topologically sorted, each filter's copies together.
std::vector<std::size_t> tasks_in_stream_order(const topo::Topology& topology,
                                               const std::vector<std::unique_ptr<CopyRunner>>& copies) {
  // Filters in topological order (streams point downstream; the graph is acyclic).
  std::map<std::string, int> indegree;
  for (const auto& f : topology.filters) indegree[f.name] = 0;
  for (const auto& st : topology.streams) ++indegree[st.to.filter];
  std::vector<std::string> order;
  std::vector<std::string> ready;
  for (const auto& f : topology.filters) {
    if (indegree[f.name] == 0) ready.push_back(f.name);
  }
  while (!ready.empty()) {
    const std::string name = ready.front();
    ready.erase(ready.begin());
    order.push_back(name);
    for (const auto& st : topology.streams) {
      if (st.from.filter == name && --indegree[st.to.filter] == 0) ready.push_back(st.to.filter);
    }
  }
  std::map<std::string, int> rank;
  for (std::size_t i = 0; i < order.size(); ++i) rank[order[i]] = static_cast<int>(i);
  std::vector<std::size_t> tasks;  // indices into copies, in that order
  for (std::size_t i = 0; i < copies.size(); ++i) {
    if (copies[i]->as_task) tasks.push_back(i);
  }
  std::stable_sort(tasks.begin(), tasks.end(), [&](std::size_t a, std::size_t b) {
    return rank[copies[a]->spec->name] < rank[copies[b]->spec->name];
  });
  return tasks;
}

// Each of `copies` copies' worker when `tasks` (in stream order) are cut into contiguous
// runs, one per worker, `tasks_per_worker` before a second worker gets a run of its own: so
// that pipeline neighbours share one.
std::vector<int> cut_in_runs(const std::vector<std::size_t>& tasks, std::size_t copies, int workers,
                             std::size_t tasks_per_worker) {
  std::vector<int> where(copies, 0);
  const std::size_t used = std::max<std::size_t>(
      1, std::min<std::size_t>(static_cast<std::size_t>(workers), tasks.size() / tasks_per_worker));
  for (std::size_t k = 0; k < tasks.size(); ++k) where[tasks[k]] = static_cast<int>(k * used / tasks.size());
  return where;
}

// Each task's two homes (sched::TaskHome). Packed: copies that mostly pass buffers on run
// fastest side by side on one core, a queue's worth at a time with no system call, so every
// task starts on the first worker (up to 64 a worker), and the others take tasks that wait
// there for a CPU (a copy doing real work per buffer keeps the first worker busy, and its
// neighbours' ready work is taken within a fraction of a millisecond). Spread: one run per
// worker on the CPUs that this process's own threads leave free (`spread_workers`), which
// beats packed while a cache line crosses between the cores cheaply (the scheduler's trial
// finds out which holds, docs/runtime.md "Placement").
std::vector<sched::TaskHome> task_homes(const topo::Topology& topology,
                                        const std::vector<std::unique_ptr<CopyRunner>>& copies, int workers,
                                        int spread_workers) {
  const std::vector<std::size_t> tasks = tasks_in_stream_order(topology, copies);
  const std::vector<int> packed = cut_in_runs(tasks, copies.size(), workers, 64);
  const std::vector<int> spread = cut_in_runs(tasks, copies.size(), std::max(1, std::min(workers, spread_workers)), 1);
  std::vector<sched::TaskHome> homes(copies.size());
  for (std::size_t i = 0; i < copies.size(); ++i) homes[i] = {packed[i], spread[i]};
  return homes;
}

// EngineOptions::layout, or SLUICE_LAYOUT when that is kAuto (unset or empty: auto).
sched::LayoutChoice layout_choice(sched::LayoutChoice given) {
  const char* env = std::getenv("SLUICE_LAYOUT");
  if (given != sched::LayoutChoice::kAuto || env == nullptr || *env == '\0') return given;
  const std::string value = env;
  if (value == "auto") return sched::LayoutChoice::kAuto;
  if (value == "packed") return sched::LayoutChoice::kPacked;
  if (value == "spread") return sched::LayoutChoice::kSpread;
  throw Error("SLUICE_LAYOUT '" + value +
              "' is not auto, packed or spread; unset it (auto: the scheduler tries both and keeps the faster)");
}

// EngineOptions::workers, or SLUICE_WORKERS when that is 0 (0 or unset: one per CPU).
int worker_count(int given) {
  const char* env = std::getenv("SLUICE_WORKERS");
  if (given != 0 || env == nullptr) return given;
  const std::optional<int> n = text::parse_integer<int>(env, 0, 4096);
  if (!n) {
    throw Error(std::string("SLUICE_WORKERS '") + env + "' is not " + text::integer_range_text(0, 4096) +
                "; set it to the number of worker threads, or unset it (or 0) for one per CPU");
  }
  return *n;
}

void Engine::State::run_copy(CopyRunner& copy) {
  // On a thread of its own, a crash there names the copy, and the alternate stack lets the
  // report run even when the filter overflowed the thread's stack. (A task's worker has
  // both: the scheduler makes the task's record current whenever it runs.)
  std::optional<crash::AltStack> alt_stack;
  std::optional<crash::ScopedCurrent> current;
  if (!copy.as_task) {
    alt_stack.emplace();
    current.emplace(&copy.record);
  }
  LanguageBackend* backend = nullptr;
  std::unique_ptr<Filter> filter;
  try {
    backend = &backend_for(copy.spec->lang);
    backend->thread_started();
    filter = backend->create(*copy.spec);
  } catch (const std::exception& e) {
    report(copy, 0, exception_message(e));
  }
  copy.record.stage = "idle";
  finished_command(copy);

  std::uint64_t seen = 0;
  for (;;) {
    command_ready.wait([&] { return generation.load(std::memory_order_acquire) != seen; });
    std::uint64_t index;
    std::string unit_work;
    {
      std::lock_guard<std::mutex> lock(mu);
      seen = generation.load(std::memory_order_relaxed);
      if (command == Command::kStop) break;
      index = unit;
      unit_work = work;
    }
    if (filter) run_unit_on(copy, *filter, index, unit_work);
    finished_command(copy);
  }
  // Destroy the filter where it lived (a Java filter drops its JVM references here).
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

// What a filter's copies here asked for, together (a copy may ask only for what concerns it),
// and its first copy, through whose log it is said.
struct AskedByFilter {
  const ContextImpl* first = nullptr;
  std::vector<std::string> asked;
  bool has(const std::string& name) const { return std::find(asked.begin(), asked.end(), name) != asked.end(); }
};

// `asked(context)`: the names one copy asked for (its args, or its output ports).
template <typename Asked>
std::map<const topo::FilterSpec*, AskedByFilter> asked_by_filter(const std::vector<std::unique_ptr<CopyRunner>>& copies,
                                                                 Asked asked) {
  std::map<const topo::FilterSpec*, AskedByFilter> by_filter;
  for (const auto& copy : copies) {
    AskedByFilter& f = by_filter[copy->spec];
    if (f.first == nullptr) f.first = copy->context.get();
    for (const std::string& name : asked(*copy->context)) {
      if (!f.has(name)) f.asked.push_back(name);
    }
  }
  return by_filter;
}

// After the first unit of work that ended well: each key of a filter's `args:` that none of
// its copies here asked for. A misspelt optional argument is otherwise ignored without a word
// and its default used.
void warn_of_unread_args(const std::vector<std::unique_ptr<CopyRunner>>& copies) {
  for (const auto& [spec, f] : asked_by_filter(copies, [](const ContextImpl& c) { return c.asked_args(); })) {
    for (const auto& [key, value] : spec->args) {
      if (!f.has(key)) f.first->log().warn(unread_arg_message(*spec, key, f.asked));
    }
  }
}

// After the first unit of work that ended well: each output port that none of a filter's
// copies here asked for (ctx.output). Its stream carried nothing from them: a port the code
// never names (a new port added to the topology only, or a name spelt differently in the
// code, found only when asked) is otherwise silent.
void warn_of_unopened_outputs(const std::vector<std::unique_ptr<CopyRunner>>& copies) {
  for (const auto& [spec, f] : asked_by_filter(copies, [](const ContextImpl& c) { return c.asked_outputs(); })) {
    for (const auto& port : f.first->outputs()) {
      if (f.has(port->name())) continue;
      f.first->log().warn("no copy of " + spec->name + " asked for its output '" + port->name() + "' (ctx.output(\"" +
                          port->name() + "\")) in the first unit of work, so " + port->stream_label() +
                          " carried nothing from it" +
                          (f.asked.empty() ? "" : " (it asked for " + topo::join(f.asked) + ")") +
                          "; check the port's name in the code and the topology");
    }
  }
}

// What to do when a copy or a worker gets no thread or stack.
constexpr const char* kOutOfThreads =
    ". The process is out of threads or memory: run fewer copies here, or raise its limits (ulimit -u, ulimit -v)";

Engine::Engine(const topo::Topology& topology, EngineOptions options)
    : state_(std::make_unique<State>(topology, std::move(options))) {
  // Before any copy runs (and before a JVM, if none runs yet: see crash_report.h).
  crash::install_handlers();
  State& s = *state_;
  // The environment's settings first: a bad one stops the run before anything is wired.
  const int workers = worker_count(s.options.workers);
  const sched::LayoutChoice layout = layout_choice(s.options.layout);
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
        auto port = std::make_unique<OutputPort>(spec.from.port, stream.label, spec.policy, stream.pool_of(p),
                                                 stream.endpoints, *stream.room, static_cast<std::uint32_t>(p),
                                                 &producer->waiting, &producer->record);
        s.producer_ports.push_back({i, port.get()});
        producer->context->add_output(std::move(port));
      }
    }
    if (spec.to_client() && stream.channels[0] != nullptr) {
      // The submitting program reads this one (sluice/application.h).
      s.client_port = std::make_unique<InputPort>("client", *stream.channels[0]);
      s.consumer_ports.push_back({i, s.client_port.get()});
    }
    for (int c = 0; c < stream.consumer_copies; ++c) {
      if (CopyRunner* consumer = copy_of(spec.to.filter, c)) {
        auto port = std::make_unique<InputPort>(spec.to.port, *stream.channels[c], &consumer->waiting,
                                                /*read_ahead=*/spec.policy != topo::Policy::kDemandDriven,
                                                &consumer->record);
        s.consumer_ports.push_back({i, port.get()});
        consumer->context->add_input(std::move(port));
      }
    }
  }
  if (s.options.wiring != nullptr) s.options.wiring->graph_ready(s.graph);
  // From here on the wiring may deliver into the graph: if the construction fails, it must
  // stop before the graph dies with the state.
  struct TellWiringOnFailure {
    StreamWiring* wiring;
    ~TellWiringOnFailure() {
      if (wiring != nullptr) wiring->graph_gone();
    }
  } tell_wiring{s.options.wiring};
  int tasks = 0;
  const char* tasks_env = std::getenv("SLUICE_TASKS");  // "off": every copy on a thread of its own
  const bool use_tasks = s.options.tasks && !(tasks_env != nullptr && std::string(tasks_env) == "off");
  for (auto& copy : s.copies) {
    copy->as_task = use_tasks && copy->spec->lang == topo::Lang::kCpp;
    tasks += copy->as_task ? 1 : 0;
  }
  if (tasks > 0) {
    sched::SchedulerOptions so;
    so.workers = workers;
    so.tasks_hint = tasks;
    so.layout = layout;
    // The work done: buffers written by this process's copies (each port's own counter,
    // one writer, read here about once a millisecond).
    so.progress = [&s] {
      std::uint64_t written = 0;
      for (const auto& [stream, port] : s.producer_ports) written += port->counters().buffers.get();
      return written;
    };
    try {
      s.scheduler = std::make_unique<sched::Scheduler>(so);
    } catch (const std::exception& e) {  // no copy runs yet: nothing to stop
      throw Error(std::string("cannot start the worker threads that run this process's C++ copies: ") + e.what() +
                  kOutOfThreads);
    }
  }
  // Spread only over the CPUs that this process's other busy threads leave: a Java copy's
  // thread and the data plane's I/O thread each want one. Two app daemons on a 2-core
  // machine, each with a Java copy and an I/O thread, ran the whole graph across at 0.6-0.9x
  // when their tasks spread as well (bench/RESULTS.md, "2026-12-07").
  const int threads_of_their_own =
      static_cast<int>(s.copies.size()) - tasks + (s.options.wiring != nullptr ? 1 : 0);
  const std::vector<sched::TaskHome> homes =
      tasks > 0 ? task_homes(topology, s.copies, s.scheduler->workers(), sched::cpus_allowed() - threads_of_their_own)
                : std::vector<sched::TaskHome>(s.copies.size());
  std::unique_lock<std::mutex> lock(s.mu);
  s.pending = static_cast<int>(s.copies.size());
  for (std::size_t i = 0; i < s.copies.size(); ++i) {
    CopyRunner* raw = s.copies[i].get();
    raw->busy = true;
    try {
      if (raw->as_task) {
        s.scheduler->spawn([&s, raw] { s.run_copy(*raw); }, homes[i], &raw->record);
      } else {
        raw->thread = std::thread([&s, raw] {
          name_this_thread(raw->spec->name, "#" + std::to_string(raw->index));
          s.run_copy(*raw);
        });
      }
    } catch (const std::exception& e) {
      // No thread or stack for this copy (a limit on threads or address space). It and the
      // copies after it never run; the ones started are creating their filters. Stop those
      // as the destructor would (the destructor does not run for a constructor that throws,
      // and a joinable std::thread destroyed with the state would end the process).
      raw->busy = false;
      s.pending -= static_cast<int>(s.copies.size() - i);
      // Building the message may itself run out of memory: that must not skip stopping the
      // started copies below.
      std::string message;
      try {
        message = "cannot start filter '" + raw->spec->name + "' copy " + std::to_string(raw->index) + " (" +
                  std::to_string(i) + " of this process's " + std::to_string(s.copies.size()) +
                  " copies had started): " + e.what() + kOutOfThreads;
      } catch (...) {  // out of memory, most likely: left empty
      }
      // Wait for the started copies to create their filters, as start() would (not only
      // for the abort grace): one left behind as stuck would go on using the topology after
      // the caller, told the Engine failed, may have freed it.
      s.started = true;
      lock.unlock();
      (void)s.wait_pending();
      stop_copies();
      if (message.empty()) throw;  // the cause itself, which needs no memory to pass on
      throw Error(message);
    }
  }
  tell_wiring.wiring = nullptr;  // every copy runs
}

void Engine::hand_pools_to(PoolRefuge* refuge) {
  if (state_) state_->graph.hand_pools_to(refuge);
}

Engine::~Engine() {
  if (state_) stop_copies();
}

void Engine::stop_copies() {
  State& s = *state_;
  bool stuck = false;
  {
    std::unique_lock<std::mutex> lock(s.mu);
    // Destroyed before start(): copies may still be creating their filters (a constructor at
    // work, a JVM starting). They are not stuck: wait up to the abort grace for creation to
    // finish, so that their filters are destroyed where they live.
    if (!s.started && s.pending != 0) {
      s.changed.wait_for(lock, s.options.abort_grace, [&] { return s.pending == 0; });
    }
    stuck = s.pending != 0;
    s.command = Command::kStop;
    s.generation.fetch_add(1, std::memory_order_release);
    s.signal.abort();  // in case a copy is still blocked on a stream
  }
  s.command_ready.notify();
  if (stuck) {
    // A copy is stuck in user code: joining would hang. Leave the threads, the workers and
    // the state they use; the process is about to report the failure and exit.
    for (auto& copy : s.copies) {
      if (copy->thread.joinable()) copy->thread.detach();
    }
    if (s.scheduler) s.scheduler->abandon();
    (void)state_.release();
    return;
  }
  for (auto& copy : s.copies) {
    if (copy->thread.joinable()) copy->thread.join();
  }
  s.scheduler.reset();  // waits for every task to end
}

std::optional<Failure> Engine::start() {
  {
    std::lock_guard<std::mutex> lock(state_->mu);
    state_->started = true;
  }
  return state_->wait_pending();
}

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
    s.generation.fetch_add(1, std::memory_order_release);
  }
  s.command_ready.notify();
  std::optional<Failure> failure = s.wait_pending();
  if (!failure && !s.args_checked) {
    s.args_checked = true;
    warn_of_unread_args(s.copies);
    warn_of_unopened_outputs(s.copies);
  }
  return failure;
}

void Engine::cancel(const std::string& reason, const std::string& stage) {
  state_->fail(Failure{"", -1, state_->options.host, state_->unit, stage, reason});
}

void add_counters(StreamStats& into, const StreamStats& from) {
  into.buffers += from.buffers;
  into.bytes += from.bytes;
  into.consumed += from.consumed;
  into.producer_blocked_ns += from.producer_blocked_ns;
  into.consumer_blocked_ns += from.consumer_blocked_ns;
  into.queued += from.queued;
  into.capacity += from.capacity;
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
  // Waits under way count too: a producer blocked all along shows blocked, not 0.
  const std::uint64_t now = Waiter::coarse_now_ns();
  for (const auto& [stream, port] : state_->producer_ports) {
    out[stream].buffers += port->counters().buffers.get();
    out[stream].bytes += port->counters().bytes.get();
    out[stream].producer_blocked_ns += port->counters().blocked_ns.get() + port->waiting_ns(now);
  }
  for (const auto& [stream, port] : state_->consumer_ports) add_reads(out[stream], *port, now);
  const auto& streams = state_->graph.streams();
  for (std::size_t i = 0; i < streams.size(); ++i) add_queues(out[i], *streams[i]);
  return out;
}

void add_reads(StreamStats& into, const InputPort& port, std::uint64_t now_ns) {
  into.consumed += port.counters().buffers.get();
  into.consumer_blocked_ns += port.counters().blocked_ns.get() + port.waiting_ns(now_ns);
  // A run the copy took off its queue and has not finished reading: still waiting for the
  // filter as far as users can tell (read() counts it as read once it is over).
  into.queued += port.counters().in_hand.get();
  into.capacity += port.run_size();
}

void add_queues(StreamStats& into, const StreamRuntime& stream) {
  for (const auto& channel : stream.channels) {
    if (!channel) continue;
    into.capacity += channel->capacity();
    into.queued += channel->queued();
  }
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
    a.unit = copy->record.unit.load(std::memory_order_relaxed);
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

InputPort* Engine::client_port() { return state_->client_port.get(); }

}  // namespace sluice
