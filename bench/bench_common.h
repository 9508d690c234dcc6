// What the benchmarks share: a source and a sink that do as little as possible per buffer
// (so the stream's own cost is what gets measured), the common command-line options, buffer
// counts and stream depths per size, medians, and compact number formatting.
// Each benchmark registers the filters it uses with SLUICE_FILTER in its own .cc.
#ifndef SLUICE_BENCH_BENCH_COMMON_H_
#define SLUICE_BENCH_BENCH_COMMON_H_

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include "sluice/sluice.h"
#include "text/cli_options.h"

namespace bench {

// Writes args.count buffers of args.size bytes; only the first 8 bytes are written.
class BenchSource : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& out = ctx.output("out");
    const std::uint64_t count = ctx.arg<std::uint64_t>("count");
    const std::size_t size = ctx.arg<std::size_t>("size");
    for (std::uint64_t i = 0; i < count; ++i) {
      sluice::Buffer b = out.allocate();
      b.resize(size);
      std::memcpy(b.data(), &i, std::min<std::size_t>(size, 8));
      out.write(std::move(b));
    }
  }
};

// Reads every buffer and touches its first byte.
class BenchSink : public sluice::Filter {
 public:
  void process(sluice::Context& ctx) override {
    auto& in = ctx.input("in");
    std::uint64_t sum = 0;
    while (auto b = in.read()) sum += static_cast<std::uint8_t>(b->data()[0]);
    sink_ = sum;
  }
  volatile std::uint64_t sink_ = 0;
};

// --reps N (default 5), --quick and --hogs N, shared by every benchmark.
struct Options {
  int reps = 5;
  bool quick = false;
  int hogs = 0;  // --hogs N: CPU hogs to run beside the benchmark (see Hogs)
};

// N busy-looping threads in a child process for as long as this object lives: a machine
// whose cores other work also wants. Comparisons stay fair because the peer (ZeroMQ, the
// pair) runs under the same hogs, interleaved.
class Hogs {
 public:
  explicit Hogs(int n) {
    if (n <= 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<std::thread> hogs;
      for (int i = 0; i < n; ++i) {
        hogs.emplace_back([] {
          volatile std::uint64_t x = 0;
          for (;;) x = x + 1;
        });
      }
      for (auto& h : hogs) h.join();
      _exit(0);
    }
  }
  ~Hogs() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  Hogs(const Hogs&) = delete;
  Hogs& operator=(const Hogs&) = delete;

 private:
  pid_t pid_ = -1;
};

// Adds --reps, --quick and --hogs to `app` (CLI11), stored in `*o` (not owned; must outlive
// the parse); a benchmark adds its own options, then calls parse_or_exit.
inline void add_common_options(CLI::App& app, Options* o) {
  sluice::text::add_integer_option(app, "--reps", &o->reps, "interleaved repetitions; the tables show medians", 1,
                                   100000);
  app.add_flag("--quick", o->quick, "a tenth of the buffers per run");
  sluice::text::add_integer_option(app, "--hogs", &o->hogs, "busy-looping threads to run beside the benchmark", 0,
                                   1024);
}

// Parses the command line; on a bad or unknown option prints what CLI11 found (naming the
// option and what it accepts) and exits with status 2; --help prints the options, exits 0.
inline void parse_or_exit(CLI::App& app, int argc, char** argv) {
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
}

// Buffers per run for a buffer size (a tenth with --quick).
inline std::uint64_t count_for(std::size_t size, bool quick) {
  std::uint64_t n = size <= 100 ? 2000000 : size <= 1000 ? 1000000 : size <= 10000 ? 300000
                  : size <= 65536 ? 100000 : 5000;
  return quick ? n / 10 : n;
}

// Stream depth for a buffer size: 256 buffers up to 1 KiB, 16 above.
inline std::size_t depth_for(std::size_t size) { return size <= 1024 ? 256 : 16; }

inline double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : (v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2);
}

// 1234567 -> "1.23M", 12345 -> "12.3k".
inline std::string si(double v) {
  char text[32];
  if (v >= 1e6) std::snprintf(text, sizeof text, "%.2fM", v / 1e6);
  else if (v >= 1e3) std::snprintf(text, sizeof text, "%.1fk", v / 1e3);
  else std::snprintf(text, sizeof text, "%.0f", v);
  return text;
}

}  // namespace bench

#endif  // SLUICE_BENCH_BENCH_COMMON_H_
