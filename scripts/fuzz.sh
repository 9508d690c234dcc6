#!/usr/bin/env bash
# Builds the data-plane frame decoder's libFuzzer target with clang and runs it.
#   scripts/fuzz.sh [SECONDS] [BUILD_DIR]      default: 10 seconds, build/
# Exit status: 0 clean, 77 when clang/libFuzzer is not available (ctest: skipped),
# anything else: the fuzzer found a crash (the input is saved as BUILD_DIR/fuzz/crash-*).
# Longer runs: scripts/fuzz.sh 3600 (the corpus in BUILD_DIR/fuzz/corpus grows across runs).
set -euo pipefail
SECONDS_TO_RUN=${1:-10}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${2:-$ROOT/build}
CLANG=${CLANGXX:-clang++}
command -v "$CLANG" >/dev/null 2>&1 || { echo "fuzz.sh: $CLANG not found; install clang and libclang-rt-14-dev" >&2; exit 77; }
OUT=$BUILD/fuzz
mkdir -p "$OUT/corpus"
if ! "$CLANG" -std=c++20 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
     -I "$ROOT/core-cpp/src" "$ROOT/core-cpp/src/net/frame.cc" "$ROOT/core-cpp/src/net/frame_fuzz.cc" \
     -o "$OUT/frame_fuzz" 2>"$OUT/build.log"; then
  if grep -q "fuzzer" "$OUT/build.log"; then
    echo "fuzz.sh: libFuzzer is missing (install libclang-rt-14-dev):" >&2
    tail -3 "$OUT/build.log" >&2
    exit 77
  fi
  cat "$OUT/build.log" >&2
  exit 1
fi
cd "$OUT"
exec ./frame_fuzz -max_total_time="$SECONDS_TO_RUN" -max_len=4096 -print_final_stats=1 corpus
