// Java filters next to C++ ones, side by side in one run (make bench; bench/RESULTS.md).
//
//   forward   C++ BenchSource -> {C++ forward | Java forward} -> C++ BenchSink, 10 B .. 1 MiB:
//             ns per buffer (unit-of-work time / buffers), medians of interleaved repetitions.
//             The difference is what a Java filter costs over a C++ one per buffer.
//   java2java Java source -> Java sink vs C++ -> C++ at 64 KiB, MB/s: hand-off only (8 bytes
//             written, one read: the per-buffer overhead), and with the payload moved (the source
//             copies 64 KiB in, the sink copies them out: memcpy in C++, bulk put/get in Java).
//   first     JVM start + the first Java filter's check, creation and first unit of work, each
//             in a fresh process (this program re-run with --first-filter), medians.
//   later     each later Java filter: creation (thread, attach, object) of a class already
//             loaded, and of a class not loaded yet; a C++ filter's for scale.
// The seed system's figures (Koren, DataCutter + JNI) stand beside ours.
// Usage: java_bench [--reps N] [--quick]
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "runtime/backends.h"
#include "runtime/engine.h"
#include "bench_common.h"
#include "sluice/sluice.h"
#include "topology/size.h"
#include "topology/topology.h"

namespace {

using Clock = std::chrono::steady_clock;

using bench::count_for;
using bench::depth_for;
using bench::median;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// args: count, size, fill (copy `size` bytes in from a private array, not just 8).
class BenchSource : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count");
    const std::size_t size = ctx.arg<std::size_t>("size");
    const bool fill = ctx.arg<bool>("fill", false);
    std::vector<std::byte> data(size, std::byte{1});
    for (std::uint64_t i = 0; i < count; ++i) {
      sluice::Buffer b = out.allocate();
      b.resize(size);
      if (fill) std::memcpy(b.data(), data.data(), size);
      std::memcpy(b.data(), &i, std::min<std::size_t>(size, 8));
      out.write(std::move(b));
    }
  }
};

class BenchForward : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    while (auto b = in.read()) out.write(std::move(*b));
  }
};

// args: fill (copy every byte out to a private array, not just read one).
class BenchSink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    const bool fill = ctx.arg<bool>("fill", false);
    std::vector<std::byte> data(fill ? in_size(ctx) : 0);
    std::uint64_t sum = 0;
    while (auto b = in.read()) {
      if (fill) std::memcpy(data.data(), b->data(), b->size());
      sum += static_cast<std::uint8_t>(fill ? data[0] : b->data()[0]);
    }
    sink_ = sum;
  }
  static std::size_t in_size(sluice::Context& ctx) { return ctx.arg<std::size_t>("size"); }
  volatile std::uint64_t sink_ = 0;
};

class BenchNoop : public sluice::Filter {
 public:
  void process(sluice::Context&) override {}
};

std::string java(const std::string& cls) {
  return "{lang: java, class: org.sluice.bench." + cls + ", classpath: [" JAVA_BENCH_JAR "]";
}

sluice::topo::Topology parse(const std::string& yaml) {
  sluice::topo::Topology t = sluice::topo::parse_topology_text(yaml, "java_bench.yaml", ".");
  sluice::check_loadable(t);
  return t;
}

// Runs one unit of work of `t` and returns its wall time in seconds. threads: every C++ copy
// on an OS thread of its own, as a Java copy always is (EngineOptions::tasks off).
double run_unit(const sluice::topo::Topology& t, bool threads = false) {
  sluice::EngineOptions options;
  options.tasks = !threads;
  sluice::Engine engine(t, options);
  if (auto f = engine.start()) throw sluice::Error(f->str());
  auto start = Clock::now();
  if (auto f = engine.run_unit(0, "")) throw sluice::Error(f->str());
  return ms_since(start) / 1e3;
}

std::string stream(const char* from, const char* to, std::size_t size) {
  return "  - {from: " + std::string(from) + ", to: " + to + ", buffer_size: " + std::to_string(size) +
         ", depth: " + std::to_string(depth_for(size)) + "}\n";
}

// C++ source -> forward (C++ or Java) -> C++ sink; ns per buffer.
double forward_ns(bool in_java, std::size_t size, std::uint64_t count) {
  const std::string yaml =
      "filters:\n"
      "  src:  {class: BenchSource, args: {count: " + std::to_string(count) + ", size: " + std::to_string(size) + "}}\n"
      "  fwd:  " + (in_java ? java("Forward") + "}" : std::string("{class: BenchForward}")) + "\n"
      "  sink: {class: BenchSink}\n"
      "streams:\n" + stream("src.out", "fwd.in", size) + stream("fwd.out", "sink.in", size);
  return run_unit(parse(yaml)) * 1e9 / static_cast<double>(count);
}

// Source -> sink, each in C++ or in Java; MB/s. fill: the payload is copied in and out.
// threads: C++ copies on threads of their own (the Java copies' placement), not tasks.
double pair_mb_per_s(bool java_source, bool java_sink, std::size_t size, std::uint64_t count, bool fill,
                     bool threads = false) {
  const std::string fill_arg = fill ? "true" : "false";
  const std::string args = "args: {count: " + std::to_string(count) + ", size: " + std::to_string(size) +
                           ", fill: " + fill_arg + "}}";
  const std::string sink_args = "args: {size: " + std::to_string(size) + ", fill: " + fill_arg + "}}";
  const std::string source = java_source ? java("Source") : std::string("{class: BenchSource");
  const std::string sink = java_sink ? java("Sink") : std::string("{class: BenchSink");
  const std::string yaml = "filters:\n"
                           "  src:  " + source + ", " + args + "\n"
                           "  sink: " + sink + ", " + sink_args + "\n"
                           "streams:\n" + stream("src.out", "sink.in", size);
  return static_cast<double>(count) * static_cast<double>(size) / run_unit(parse(yaml), threads) / 1e6;
}

// One fresh-process sample of the first Java filter: prints "jvm check create unit" in ms.
int first_filter() {
  const auto t0 = Clock::now();
  sluice::topo::Topology t = sluice::topo::parse_topology_text(
      "filters:\n  noop: " + java("Noop") + "}\n", "java_bench.yaml", ".");
  auto start = Clock::now();
  sluice::backend_for(sluice::topo::Lang::kJava).prepare(t);  // loads the bridge, starts the JVM
  const double jvm = ms_since(start);
  start = Clock::now();
  sluice::check_loadable(t);  // finds and checks the class
  const double check = ms_since(start);
  start = Clock::now();
  sluice::Engine engine(t);
  if (auto f = engine.start()) throw sluice::Error(f->str());  // thread, attach, the object
  const double create = ms_since(start);
  start = Clock::now();
  if (auto f = engine.run_unit(0, "")) throw sluice::Error(f->str());  // init, process, finalize
  const double unit = ms_since(start);
  std::printf("%.3f %.3f %.3f %.3f %.3f\n", jvm, check, create, unit, ms_since(t0));
  return 0;
}

// The creation of one filter (Engine + start: thread, attach, object), in ms.
double creation_ms(const std::string& filter_yaml) {
  sluice::topo::Topology t = parse("filters:\n  f: " + filter_yaml + "\n");
  const auto start = Clock::now();
  sluice::Engine engine(t);
  if (auto f = engine.start()) throw sluice::Error(f->str());
  return ms_since(start);
}

// The first Java filter, in fresh processes (one JVM per process).
void print_first(int reps) {
  std::array<std::vector<double>, 5> first;
  for (int r = 0; r < reps; ++r) {
    const std::string command = "/proc/" + std::to_string(getpid()) + "/exe --first-filter";
    FILE* child = popen(command.c_str(), "r");
    std::array<double, 5> v{};
    if (child == nullptr || std::fscanf(child, "%lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4]) != 5) {
      std::fprintf(stderr, "java_bench --first-filter failed\n");
      std::exit(1);
    }
    pclose(child);
    for (std::size_t i = 0; i < v.size(); ++i) first[i].push_back(v[i]);
  }

  std::printf("### The first Java filter (fresh process each time)\n\n");
  std::printf("| step | sluice ms | seed system (DataCutter + JNI) |\n|---|---:|---:|\n");
  std::printf("| JVM start (dlopen the bridge and libjvm, JNI_CreateJavaVM, look up classes, register natives) | %.1f | 1200 |\n", median(first[0]));
  std::printf("| class found and checked (URLClassLoader over the topology's classpath) | %.1f | |\n", median(first[1]));
  std::printf("| filter created (copy thread attached, object constructed) | %.1f | 250 |\n", median(first[2]));
  std::printf("| first unit of work (init, process, finalize) | %.1f | |\n", median(first[3]));
  std::printf("| **total: JVM start + first Java filter's init** (bar: <= 150 ms) | **%.1f** | **1560** |\n\n", median(first[4]));
  std::fflush(stdout);
}

void print_forward(int reps, bool quick) {
  std::printf("### A forwarding filter between a C++ source and a C++ sink\n\n");
  std::printf("| size | C++ forward ns/buffer | Java forward ns/buffer | Java adds ns/buffer (bar: <= 200) | seed: Java read alone |\n");
  std::printf("|---:|---:|---:|---:|---:|\n");
  for (std::size_t size : {10, 100, 1000, 10000, 65536, 1048576}) {
    const std::uint64_t count = count_for(size, quick);
    std::vector<double> cpp, java_ns;
    for (int r = 0; r < reps; ++r) {
      cpp.push_back(forward_ns(false, size, count));
      java_ns.push_back(forward_ns(true, size, count));
    }
    const double c = median(cpp), j = median(java_ns);
    std::printf("| %s | %.0f | %.0f | **%+.0f** | 500000 |\n", sluice::topo::format_size(size).c_str(), c, j, j - c);
    std::fflush(stdout);
  }
}

// hand_off_only: just the first row (for profiling the per-buffer path).
void print_pair(int reps, bool quick, bool hand_off_only) {
  std::printf("\n### Source to sink at 64 KiB, both C++ or both Java (and, for the hand-off, one of each)\n\n");
  // The last two columns: the C++ pair as a Java pair must run, each copy an OS thread of its
  // own (the JVM cannot have its stacks switched, so a Java copy is never a task), and the
  // Java pair against that. The bar's ratio is against the C++ pair as the runtime runs it
  // (both copies tasks, usually on one core); the second one is what Java itself costs.
  std::printf("| what the filters do with the payload | C++ -> C++ MB/s | Java -> Java MB/s | ratio (bar: >= 0.90) "
              "| C++ -> C++, each copy a thread, MB/s | Java -> Java / that |\n");
  std::printf("|---|---:|---:|---:|---:|---:|\n");
  std::array<double, 2> side_ratios{};
  for (bool fill : {false, true}) {
    if (fill && hand_off_only) break;
    // Hand-off only touches 16 bytes of each buffer, so it gets as many buffers as 100 B
    // streams do: at 100,000 (4-8 ms of C++ work) the run measured the unit's start and end
    // and the Java filters' warm-up, not the hand-off.
    const std::uint64_t count = fill ? count_for(65536, quick) : count_for(100, quick);
    // Hand-off only also runs each side alone in Java (the other in C++), in the same
    // rounds: which of the two crossings a buffer limits the pair.
    std::vector<double> cpp, cpp_threads, java_mb, java_sink_only, java_source_only;
    for (int r = 0; r < reps; ++r) {
      cpp.push_back(pair_mb_per_s(false, false, 65536, count, fill));
      java_mb.push_back(pair_mb_per_s(true, true, 65536, count, fill));
      cpp_threads.push_back(pair_mb_per_s(false, false, 65536, count, fill, true));
      if (fill) continue;
      java_sink_only.push_back(pair_mb_per_s(false, true, 65536, count, fill));
      java_source_only.push_back(pair_mb_per_s(true, false, 65536, count, fill));
    }
    std::printf("| %s | %.0f | %.0f | **%.2f** | %.0f | %.2f |\n",
                fill ? "moved: 64 KiB copied in by the source and out by the sink"
                     : "hand-off only: 8 bytes written, 1 read (zero copy; MB/s = buffers/s x 64 KiB)",
                median(cpp), median(java_mb), median(java_mb) / median(cpp), median(cpp_threads),
                median(java_mb) / median(cpp_threads));
    if (!fill) {
      side_ratios = {median(java_sink_only) / median(cpp), median(java_source_only) / median(cpp)};
    }
    std::fflush(stdout);
  }
  std::printf("\nHand-off only with one side in Java, the same rounds (ratio to C++ -> C++): "
              "C++ source -> Java sink **%.2f**, Java source -> C++ sink **%.2f**.\n\n",
              side_ratios[0], side_ratios[1]);
}

void print_later(int reps) {
  std::printf("### Each later filter (the JVM runs already)\n\n");
  {
    std::vector<double> loaded, fresh, cpp;
    for (int r = 0; r < std::max(reps, 9); ++r) {
      loaded.push_back(creation_ms(java("Noop") + "}"));
      cpp.push_back(creation_ms("{class: BenchNoop}"));
    }
    for (const char* cls : {"NoopA", "NoopB", "NoopC", "NoopD", "NoopE", "NoopF", "NoopG", "NoopH"}) {
      fresh.push_back(creation_ms(java(cls) + "}"));
    }
    std::printf("| filter | creation ms (bar: <= 5) | seed system |\n|---|---:|---:|\n");
    std::printf("| Java, class already loaded | **%.2f** | 400 |\n", median(loaded));
    std::printf("| Java, class not loaded yet | **%.2f** | |\n", median(fresh));
    std::printf("| C++ | %.2f | |\n", median(cpp));
    std::printf("\nCreation = Engine setup + start(): one copy thread, attached to the JVM, and its\n"
                "filter object; the first unit of work is not included.\n");
  }
}

}  // namespace

SLUICE_FILTER(BenchSource)
SLUICE_FILTER(BenchForward)
SLUICE_FILTER(BenchSink)
SLUICE_FILTER(BenchNoop)

int main(int argc, char** argv) {
  bool first_only = false;
  std::string only;
  bench::Options options;
  CLI::App app{"java_bench: Java filters next to C++ ones"};
  bench::add_common_options(app, &options);
  app.add_flag("--first-filter", first_only, "(internal) time the first Java filter in this fresh process");
  app.add_option("--only", only, "run one section: first, forward, pair, hand-off (the pair's first row) or later (for profiling)")
      ->check(CLI::IsMember({"first", "forward", "pair", "hand-off", "later"}));
  bench::parse_or_exit(app, argc, argv);
  if (first_only) return first_filter();
  const int reps = options.reps;
  const bool quick = options.quick;

  std::printf("## Java filters next to C++ ones\n\n");
  std::printf("Medians of %d interleaved repetitions. One JVM per process (default options, no\n"
              "-Xcheck:jni); the Java filters are bench/java/org/sluice/bench/*.java.\n\n", reps);

  if (only.empty() || only == "first") print_first(reps);
  if (only == "first") return 0;

  // Warm the JIT up on the Java filters before measuring them.
  forward_ns(true, 100, count_for(100, quick));
  pair_mb_per_s(true, true, 65536, count_for(100, quick), false);
  pair_mb_per_s(true, true, 65536, count_for(65536, quick), true);

  if (only.empty() || only == "forward") print_forward(reps, quick);
  if (only.empty() || only == "pair" || only == "hand-off") print_pair(reps, quick, only == "hand-off");
  if (only.empty() || only == "later") print_later(reps);
  return 0;
}
