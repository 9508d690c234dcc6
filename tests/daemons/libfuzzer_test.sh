#!/usr/bin/env bash
# A short libFuzzer run of the control decoder (10 s), when clang is installed; skipped
# (exit 77) otherwise. Builds only the fuzz target, in BUILD_DIR/fuzz, with clang.
#   libfuzzer_test.sh SOURCE_DIR BUILD_DIR [SECONDS]
set -euo pipefail
src=$1
build=$2/fuzz
seconds=${3:-10}
if ! command -v clang++ > /dev/null; then
  echo "SKIP: clang++ is not installed (apt-get install clang libclang-rt-14-dev); control.fuzz_smoke still ran"
  exit 77
fi
if [ ! -f "$build/build.ninja" ]; then
  CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLUICE_BUILD_FUZZERS=ON -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DSLUICE_BUILD_BENCH=OFF > "$build.log" 2>&1 \
    || { cat "$build.log"; exit 1; }
fi
cmake --build "$build" --target fuzz_control > "$build.log" 2>&1 || { cat "$build.log"; exit 1; }
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
"$build/core-cpp/src/control/fuzz_control" "$corpus" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 2>&1 | tail -3
