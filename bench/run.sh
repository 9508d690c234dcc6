#!/usr/bin/env bash
# Runs every benchmark and prints Markdown (make bench tees it to bench/out/).
# Root-only parts (network namespaces and a veth pair) say so and are skipped when not root.
set -euo pipefail
BUILD=${1:-build}
HERE=$(cd "$(dirname "$0")" && pwd)
REPS=${BENCH_REPS:-5}
echo "# sluice benchmarks — $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r)"
echo
echo "Command: \`make bench\` (bench/run.sh $BUILD); load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
"$BUILD/bench/local_stream_bench" --reps "$REPS"
"$BUILD/bench/local_stream_bench" --reps "$REPS" --hogs 2
echo
# More copies than cores: pipeline shapes, on a quiet machine and with two CPU hogs. Before
# and after them, what a cache line costs to cross between two CPUs now: on a VM it changes
# with the host's placement of the vCPUs, and every cross-core figure with it.
echo "Cache line between two CPUs, before the shapes: $("$BUILD/bench/cross_core")"
echo
"$BUILD/bench/graph_bench" --reps "$REPS"
"$BUILD/bench/graph_bench" --reps "$REPS" --hogs 2
# The same quiet shapes with every copy packed on one worker (the scheduler's trial off):
# what trying spread gained or cost in this run (docs/runtime.md, "Placement").
echo "With SLUICE_LAYOUT=packed:"
SLUICE_LAYOUT=packed "$BUILD/bench/graph_bench" --reps "$REPS"
echo "Cache line between two CPUs, after the shapes: $("$BUILD/bench/cross_core")"
echo
# The same shapes in Apache Flink 1.20 (a warm local MiniCluster, operator chaining, object
# reuse), alternating with graph_bench, quiet and with two CPU hogs. bench/flink is a
# standalone Maven project, built on first use (Flink comes from Maven Central into ~/.m2).
if command -v mvn >/dev/null 2>&1; then
  /usr/bin/python3 "$HERE/flink_peer.py" --build "$BUILD" --reps 3
  /usr/bin/python3 "$HERE/flink_peer.py" --build "$BUILD" --reps 3 --hogs 2
else
  echo "## Beside Apache Flink 1.20: the same shapes, 100 B, one machine"
  echo
  echo "Skipped: needs mvn (Maven) to build bench/flink/ and fetch Flink from Maven Central."
  echo
fi
# What watching a run costs: the local pipeline with and without --ui (polled as the page
# does), in interleaved pairs; the bar: --ui costs less than 2 % of its throughput.
if [ -f "$BUILD/examples/libexamples.so" ]; then
  /usr/bin/python3 "$HERE/ui_cost.py" --build "$BUILD" --pairs "${UI_PAIRS:-25}"
  echo
fi
"$BUILD/bench/net_bench" --reps "$REPS"
echo
# The same comparisons across a veth pair between two network namespaces (root only).
"$HERE/net_veth.sh" "$BUILD" --reps "$REPS"
echo
# A by_key all-to-all stream over 2, 3 and 4 network namespaces on a bridge, against
# iperf3 pairs (root only; draws bench/four_hosts.png).
/usr/bin/python3 "$HERE/four_hosts.py" --build "$BUILD" --reps 3
if [ -x "$BUILD/bench/java_bench" ]; then
  echo
  "$BUILD/bench/java_bench" --reps "$REPS"
  echo
  # A whole mixed C++/Java graph, embedded and across two app daemons on this machine.
  /usr/bin/python3 "$HERE/whole_graph.py" --build "$BUILD" --reps 3
fi
echo
# A deployed application: an empty unit's round trip and results throughput to the client,
# against sluice run per unit, embedded and across two app daemons.
/usr/bin/python3 "$HERE/application.py" --build "$BUILD" --reps "$REPS"
echo
# A long-lived serve across two app daemons: resident memory per failed unit.
/usr/bin/python3 "$HERE/serve_memory.py" --build "$BUILD" --units "${SERVE_UNITS:-200}"
echo
# Launch overhead of --launcher slurm against hand-started daemons, on a throw-away local
# Slurm (root only; says so and skips otherwise).
if [ -f "$BUILD/examples/libexamples.so" ] && { command -v slurmctld >/dev/null 2>&1 || [ -x /usr/sbin/slurmctld ]; }; then
  /usr/bin/python3 "$HERE/slurm_launch.py" --build "$BUILD" --reps "$REPS"
fi
echo
# The seed's producer/consumer table (veth between namespaces as root, else loopback ports),
# with its plot bench/seed_table.png. Debian's python3 has python3-matplotlib; a python3
# from elsewhere (pyenv) may not, and the script then falls back to gnuplot.
if [ -f "$BUILD/bench/libseed_filters.so" ] && [ -f "$BUILD/bench/java_bench_filters.jar" ]; then
  PY=/usr/bin/python3
  [ -x "$PY" ] || PY=python3
  "$PY" "$HERE/seed_table.py" --build "$BUILD" --reps "${SEED_REPS:-3}"
else
  echo "## The seed's producer/consumer table"
  echo
  echo "Skipped: needs the Java build (SLUICE_BUILD_JAVA) for bench/java_bench_filters.jar."
fi
