// Pipeline shapes with more runnable copies than cores, in one process, at 100 B, hand-off
// only: a pair (source -> sink), a 3-stage and a 5-stage chain (sources and sinks around
// Forward stages), 2+2 and 4+4 copies, and a keyed 2 -> 2 shuffle. Repetitions interleave
// the shapes so machine noise hits all alike; medians, and each shape's ratio to the pair
// of the same run (the bars: chains and the shuffle >= 0.8 of the pair, 4+4 >= 0.5 of 1+1).
//
// Usage: graph_bench [--reps N] [--quick] [--hogs N] [--only TEXT]
//   --only TEXT: run just the shapes whose name contains TEXT (for profiling).
//   --hogs N: run N busy-looping threads in a child process the whole time (a machine whose
//   cores are wanted by someone else).
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "runtime/backends.h"
#include "runtime/engine.h"
#include "sluice/sluice.h"
#include "topology/topology.h"

namespace {

using Clock = std::chrono::steady_clock;

// Spins about `us` microseconds: a stand-in for real work per buffer.
void work(double us) {
  if (us <= 0) return;
  const auto until = Clock::now() + std::chrono::nanoseconds(static_cast<long long>(us * 1000));
  while (Clock::now() < until) {
  }
}

// Passes every buffer on unchanged (after args.work_us of work, default none).
class BenchForward : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    auto& out = ctx.output("out");
    const double us = ctx.arg<double>("work_us", 0);
    while (auto b = in.read()) {
      work(us);
      out.write(std::move(*b));
    }
  }
};

// Like BenchSource, with key = sequence number (for by_key).
class KeyedSource : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count");
    for (std::uint64_t i = 0; i < count; ++i) {
      sluice::Buffer b = out.allocate();
      b.resize(100);
      std::memcpy(b.data(), &i, 8);
      b.set_key(i);
      out.write(std::move(b));
    }
  }
};

struct Shape {
  std::string name;
  std::string yaml;
  std::uint64_t buffers = 0;  // through the last stream, per run
};

std::size_t g_depth = 256;  // --depth

std::string defaults() { return "defaults: {buffer_size: 100B, depth: " + std::to_string(g_depth) + "}\nfilters:\n"; }

std::string source(const std::string& cls, int copies, std::uint64_t count) {
  return "  src:  {class: " + cls + ", copies: " + std::to_string(copies) + ", args: {count: " +
         std::to_string(count) + ", size: 100}}\n";
}

Shape chain(int stages, std::uint64_t count) {
  Shape s;
  s.name = std::to_string(stages) + "-stage chain";
  s.yaml = defaults() + source("BenchSource", 1, count);
  std::string streams = "streams:\n";
  std::string previous = "src";
  for (int i = 1; i < stages - 1; ++i) {
    const std::string name = "f" + std::to_string(i);
    s.yaml += "  " + name + ": {class: BenchForward}\n";
    streams += "  - {from: " + previous + ".out, to: " + name + ".in}\n";
    previous = name;
  }
  s.yaml += "  sink: {class: BenchSink}\n";
  streams += "  - {from: " + previous + ".out, to: sink.in}\n";
  s.yaml += streams;
  s.buffers = count;
  if (stages == 2) s.name = "pair (1+1)";
  return s;
}

// A 4-stage chain whose two forwards each work ~2 us per buffer: enough for one core to be
// the limit, so it shows whether the scheduler spreads the work over the cores.
Shape busy_chain(std::uint64_t count) {
  Shape s;
  s.name = "4-stage chain, 2 us of work in each forward";
  s.yaml = defaults() + source("BenchSource", 1, count) +
           "  f1: {class: BenchForward, args: {work_us: 2}}\n"
           "  f2: {class: BenchForward, args: {work_us: 2}}\n"
           "  sink: {class: BenchSink}\n"
           "streams:\n  - {from: src.out, to: f1.in}\n  - {from: f1.out, to: f2.in}\n  - {from: f2.out, to: sink.in}\n";
  s.buffers = count;
  return s;
}

Shape copies(int n, std::uint64_t count) {
  Shape s;
  s.name = std::to_string(n) + "+" + std::to_string(n) + " copies";
  s.yaml = defaults() + source("BenchSource", n, count / n) +
           "  sink: {class: BenchSink, copies: " + std::to_string(n) + "}\n"
           "streams:\n  - {from: src.out, to: sink.in}\n";
  s.buffers = count / n * n;
  return s;
}

Shape shuffle(std::uint64_t count) {
  Shape s;
  s.name = "keyed shuffle 2 -> 2";
  s.yaml = defaults() + source("KeyedSource", 2, count / 2) +
           "  sink: {class: BenchSink, copies: 2}\n"
           "streams:\n  - {from: src.out, to: sink.in, policy: by_key}\n";
  s.buffers = count / 2 * 2;
  return s;
}

// Buffers per second through the shape's last stream, one unit of work.
double run(const Shape& shape) {
  sluice::topo::Topology t = sluice::topo::parse_topology_text(shape.yaml, "bench.yaml", ".");
  sluice::check_loadable(t);
  sluice::Engine engine(t);
  if (auto f = engine.start()) throw sluice::Error(f->str());
  const auto start = Clock::now();
  if (auto f = engine.run_unit(0, "")) throw sluice::Error(f->str());
  return static_cast<double>(shape.buffers) / std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

using bench::BenchSink;
using bench::BenchSource;
SLUICE_FILTER(BenchSource)
SLUICE_FILTER(BenchSink)
SLUICE_FILTER(BenchForward)
SLUICE_FILTER(KeyedSource)

int main(int argc, char** argv) {
  std::string only;
  bench::Options options;
  CLI::App app{"graph_bench: pipeline shapes with more copies than cores, one process"};
  bench::add_common_options(app, &options);
  app.add_option("--depth", g_depth, "every stream's depth (default: 256)")->type_name("N");
  app.add_option("--only", only, "run only the shapes whose name contains this text (and the pair)")->type_name("TEXT");
  bench::parse_or_exit(app, argc, argv);
  const std::uint64_t count = options.quick ? 400000 : 4000000;
  const std::vector<Shape> shapes = {chain(2, count),  chain(3, count),  chain(5, count),        copies(2, count),
                                     copies(4, count), shuffle(count), busy_chain(count / 20)};
  const int hogs = options.hogs;
  std::optional<bench::Hogs> hog_process(std::in_place, hogs);
  std::vector<std::vector<double>> rates(shapes.size());
  try {
    for (int rep = 0; rep < options.reps; ++rep) {
      for (std::size_t i = 0; i < shapes.size(); ++i) {
        // The pair (shape 0) always runs: the ratios are to it.
        if (i == 0 || only.empty() || shapes[i].name.find(only) != std::string::npos) rates[i].push_back(run(shapes[i]));
      }
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "graph_bench: %s\n", e.what());
    return 1;
  }
  hog_process.reset();
  // A fixed layout (the scheduler's trial off) shows in the heading, so that its table is
  // told apart from the default's (bench/plots.py).
  const char* layout = std::getenv("SLUICE_LAYOUT");
  const std::string layout_note = layout != nullptr && *layout != '\0' ? std::string(", SLUICE_LAYOUT=") + layout : "";
  std::printf("## More copies than cores: pipeline shapes at 100 B, one process (%u cores%s%s)\n\n",
              std::thread::hardware_concurrency(),
              hogs > 0 ? (", " + std::to_string(hogs) + " CPU hogs running").c_str() : "", layout_note.c_str());
  std::printf("Medians of %d interleaved repetitions, %s buffers each through the last stream; hand-off only\n"
              "(sources write 8 bytes, forwards pass buffers on, sinks touch one byte).\n\n",
              options.reps, bench::si(static_cast<double>(count)).c_str());
  std::printf("| shape | buffers/s | ratio to the pair | bar |\n|---|---:|---:|---|\n");
  const double pair = bench::median(rates[0]);
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    const double r = bench::median(rates[i]);
    const std::string& name = shapes[i].name;
    const char* bar = i == 0 || name.find("2+2") != std::string::npos || name.find("busy") != std::string::npos ||
                              name.find("work") != std::string::npos
                          ? ""
                      : name.find("4+4") != std::string::npos   ? ">= 0.5"
                                                                 : ">= 0.8";
    std::printf("| %s | %s | %s | %s |\n", shapes[i].name.c_str(), bench::si(r).c_str(),
                i == 0 ? "1" : (std::to_string(r / pair).substr(0, 4)).c_str(), bar);
  }
  std::printf("\n");
  return 0;
}
