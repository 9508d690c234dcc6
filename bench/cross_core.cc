// cross_core: what a cache line costs to cross between two CPUs, one way, right now.
//
// Two threads pinned to two CPUs take turns incrementing one atomic on its own line; each
// turn is one hand-over of that line. The figure decides whether splitting a hand-off
// pipeline over two workers pays (docs/runtime.md, "Placement"): on the 2-core VM of
// bench/RESULTS.md it is ~42 ns in one mode and ~200 ns in the other, and the host switches
// between them while processes run, so bench/run.sh prints it before and after the pipeline
// shapes.
//
//   build/bench/cross_core [--cpus A,B] [--rounds N] [--reps N]
#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <thread>
#include <vector>

#include "bench_common.h"
#include "sync/cpu_relax.h"

namespace {

bool pin(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof set, &set) == 0;
}

// The first two CPUs this process may run on (its affinity mask), or none.
std::vector<int> first_two_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> cpus;
  if (sched_getaffinity(0, sizeof set, &set) != 0) return cpus;
  for (int c = 0; c < CPU_SETSIZE && cpus.size() < 2; ++c) {
    if (CPU_ISSET(c, &set)) cpus.push_back(c);
  }
  return cpus;
}

// One measurement: `rounds` hand-overs each way, timed once both threads sit on their CPUs;
// returns ns per one-way hand-over, or a negative value when a thread could not be pinned
// (then nothing is timed: two threads sharing a CPU would take a time slice a turn).
double one_way_ns(int cpu_a, int cpu_b, long rounds) {
  enum : int { kPending, kPinned, kFailed };
  alignas(64) std::atomic<long> turn{0};
  alignas(64) std::atomic<int> other_state{kPending};
  std::atomic<bool> go{false};
  std::thread other([&] {
    other_state.store(pin(cpu_b) ? kPinned : kFailed, std::memory_order_release);
    while (!go.load(std::memory_order_acquire)) sluice::cpu_relax();
    if (turn.load(std::memory_order_relaxed) < 0) return;  // called off
    for (long i = 1; i < 2 * rounds; i += 2) {
      while (turn.load(std::memory_order_acquire) != i) sluice::cpu_relax();
      turn.store(i + 1, std::memory_order_release);
    }
  });
  const bool pinned = pin(cpu_a);
  int state;
  while ((state = other_state.load(std::memory_order_acquire)) == kPending) sluice::cpu_relax();
  if (!pinned || state != kPinned) {
    turn.store(-1, std::memory_order_relaxed);
    go.store(true, std::memory_order_release);
    other.join();
    return -1;
  }
  go.store(true, std::memory_order_release);
  const auto start = std::chrono::steady_clock::now();
  for (long i = 0; i < 2 * rounds; i += 2) {
    while (turn.load(std::memory_order_acquire) != i) sluice::cpu_relax();
    turn.store(i + 1, std::memory_order_release);
  }
  while (turn.load(std::memory_order_acquire) != 2 * rounds) sluice::cpu_relax();
  const auto end = std::chrono::steady_clock::now();
  other.join();
  return std::chrono::duration<double, std::nano>(end - start).count() / static_cast<double>(2 * rounds);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"cross_core: one-way hand-over of a cache line between two CPUs, in ns"};
  std::vector<int> cpus = first_two_cpus();
  int rounds = 100000;
  int reps = 5;
  app.add_option("--cpus", cpus, "the two CPUs, e.g. 0,1 (default: the first two this process may use)")
      ->delimiter(',')
      ->expected(2);
  sluice::text::add_integer_option(app, "--rounds", &rounds, "hand-overs each way per measurement", 1, 100000000);
  sluice::text::add_integer_option(app, "--reps", &reps, "measurements; the median is printed", 1, 1000);
  bench::parse_or_exit(app, argc, argv);
  if (cpus.size() != 2 || cpus[0] == cpus[1]) {
    std::fprintf(stderr, "cross_core: needs two different CPUs (--cpus A,B); this process may use %s\n",
                 cpus.size() < 2 ? "fewer than two" : "them, but the two given are the same");
    return 2;
  }
  std::vector<double> ns;
  for (int r = 0; r < reps; ++r) {
    const double one = one_way_ns(cpus[0], cpus[1], rounds);
    if (one < 0) {
      std::fprintf(stderr, "cross_core: could not pin threads to CPUs %d and %d; pick two this process may use "
                   "(taskset -p $$ shows them)\n", cpus[0], cpus[1]);
      return 2;
    }
    ns.push_back(one);
  }
  std::sort(ns.begin(), ns.end());
  std::printf("one-way hand-over of a cache line, CPU %d <-> %d: median %.1f ns (min %.1f, max %.1f, %d runs)\n",
              cpus[0], cpus[1], ns[ns.size() / 2], ns.front(), ns.back(), reps);
  return 0;
}
