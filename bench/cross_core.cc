// cross_core: what a cache line costs to cross between two CPUs, one way, right now.
//
// Two threads pinned to two CPUs take turns incrementing one atomic on its own line; each
// turn is one hand-over of that line. The figure decides whether splitting a hand-off
// pipeline over two workers pays (docs/runtime.md, "Placement"): on the 2-core VM of
// bench/RESULTS.md it is ~42 ns in one mode and ~200 ns in the other, and the host switches
// between them while processes run, so run this beside any benchmark whose copies or threads
// span both cores.
//
//   build/bench/cross_core [--cpus A,B] [--rounds N] [--reps N]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

namespace {

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// One measurement: `rounds` hand-overs each way; returns ns per one-way hand-over.
double one_way_ns(int cpu_a, int cpu_b, long rounds) {
  alignas(64) std::atomic<long> turn{0};
  bool pinned_b = false;
  std::thread other([&] {
    pinned_b = pin(cpu_b);
    for (long i = 1; i < 2 * rounds; i += 2) {
      while (turn.load(std::memory_order_acquire) != i) {
      }
      turn.store(i + 1, std::memory_order_release);
    }
  });
  const bool pinned_a = pin(cpu_a);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < 2 * rounds; i += 2) {
    while (turn.load(std::memory_order_acquire) != i) {
    }
    turn.store(i + 1, std::memory_order_release);
  }
  other.join();
  const auto end = std::chrono::steady_clock::now();
  if (!pinned_a || !pinned_b) {
    std::fprintf(stderr, "cross_core: could not pin to CPUs %d and %d (see --cpus)\n", cpu_a, cpu_b);
    std::exit(2);
  }
  return std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(2 * rounds);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cross_core: one-way hand-over of a cache line between two CPUs, in ns"};
  std::vector<int> cpus{0, 1};
  long rounds = 100000;
  int reps = 5;
  app.add_option("--cpus", cpus, "the two CPUs (default: 0,1)")->delimiter(',')->expected(2);
  app.add_option("--rounds", rounds, "hand-overs each way per measurement (default: 100000)");
  app.add_option("--reps", reps, "measurements; the median is printed (default: 5)");
  CLI11_PARSE(app, argc, argv);
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) ns.push_back(one_way_ns(cpus[0], cpus[1], rounds));
  std::sort(ns.begin(), ns.end());
  std::printf("one-way hand-over CPU %d <-> %d: median %.1f ns (min %.1f, max %.1f, %d runs)\n", cpus[0], cpus[1],
              ns[ns.size() / 2], ns.front(), ns.back(), reps);
  return 0;
}
