#!/usr/bin/env bash
# Runs every benchmark and prints Markdown (make bench tees it to bench/out/).
set -euo pipefail
BUILD=${1:-build}
echo "# sluice benchmarks — $(date -u +%Y-%m-%d), $(nproc) cores, $(uname -r)"
echo
echo "Command: \`make bench\` (bench/run.sh $BUILD)"
echo
"$BUILD/bench/local_stream_bench" --reps "${BENCH_REPS:-5}"
echo
"$BUILD/bench/net_bench" --reps "${BENCH_REPS:-5}"
if [ -x "$BUILD/bench/java_bench" ]; then
  echo
  "$BUILD/bench/java_bench" --reps "${BENCH_REPS:-5}"
fi
