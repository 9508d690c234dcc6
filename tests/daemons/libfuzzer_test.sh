#!/usr/bin/env bash
# A short libFuzzer run of one fuzz target, built with clang in BUILD_DIR/fuzz (a build of
# its own, configured once with SLUICE_BUILD_FUZZERS=ON). Skipped (exit 77) without clang.
#   libfuzzer_test.sh SOURCE_DIR BUILD_DIR [SECONDS] [TARGET]
# TARGET: fuzz_control (default: the control decoder) or data_plane_fuzz (the data plane's
# stateful reader, through a real DataPlane).
set -euo pipefail
src=$1
build=$2/fuzz
seconds=${3:-10}
target=${4:-fuzz_control}
if ! command -v clang++ > /dev/null; then
  echo "SKIP: clang++ is not installed (apt-get install clang libclang-rt-14-dev)"
  exit 77
fi
if [ ! -f "$build/build.ninja" ]; then
  CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLUICE_BUILD_FUZZERS=ON -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DSLUICE_BUILD_BENCH=OFF \
    -DSLUICE_BUILD_JAVA=OFF > "$build.$target.log" 2>&1 || { cat "$build.$target.log"; exit 1; }
fi
cmake --build "$build" --target "$target" > "$build.$target.log" 2>&1 || { cat "$build.$target.log"; exit 1; }
binary=$(find "$build" -name "$target" -type f -perm -u+x | head -1)
corpus=$(mktemp -d)
trap 'rm -rf "$corpus"' EXIT
# A crash, a leak or a sanitizer report makes libFuzzer exit non-zero: the test fails.
"$binary" "$corpus" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 > "$corpus/log" 2>&1 \
  || { grep -v "^sluice data plane" "$corpus/log" | tail -60; exit 1; }
grep -E "stat::number_of_executed_units|stat::new_units_added" "$corpus/log"
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$corpus/log")
[ "${runs:-0}" -gt 100 ] || { echo "FAIL: only ${runs:-0} inputs ran in $seconds s"; exit 1; }
