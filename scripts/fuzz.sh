#!/usr/bin/env bash
# The one way to build and run sluice's libFuzzer targets (ASan + UBSan, clang):
#   scripts/fuzz.sh [-t SECONDS] [-b BUILD_DIR] TARGET...      default: 10 s each, build/
# Targets (sluice_add_fuzzer in the CMakeLists):
#   fuzz_frame             the data plane's frame decoder (core-cpp/src/net/fuzz_frame.cc)
#   fuzz_data_plane        the data plane's stateful reader (HELLO, AUTH, credit, payloads)
#                          through a real DataPlane
#   fuzz_control           the control decoder (framing and Envelope parsing)
#   fuzz_console_protocol  sluiced's stateful reader: a console session fed the bytes that
#                          come out of TLS, from the first one
#   fuzz_serve_protocol    sluice serve's stateful reader, the same way (submit, stop)
# The first run configures BUILD_DIR/fuzz with clang (SLUICE_BUILD_FUZZERS=ON: everything
# instrumented); later runs only rebuild. Each target's corpus is BUILD_DIR/fuzz/corpus/TARGET
# (seeded by scripts/fuzz_seeds.py, growing across runs); a crash leaves its input in
# BUILD_DIR/fuzz/crashes/TARGET/.
# Exit status: 0 clean; 1 a target found a problem (or ran too few inputs); 77 when clang or
# libFuzzer is not installed (ctest: skipped; scripts/install-deps.sh installs both).
set -euo pipefail
seconds=10
root=$(cd "$(dirname "$0")/.." && pwd)
build=$root/build
while getopts "t:b:" opt; do
  case $opt in
    t) seconds=$OPTARG ;;
    b) build=$OPTARG ;;
    *) echo "usage: scripts/fuzz.sh [-t SECONDS] [-b BUILD_DIR] TARGET..." >&2; exit 2 ;;
  esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || { echo "usage: scripts/fuzz.sh [-t SECONDS] [-b BUILD_DIR] TARGET... (see the top of this file)" >&2; exit 2; }
fuzz=$build/fuzz
if ! command -v clang++ > /dev/null; then
  echo "SKIP: clang++ is not installed (apt-get install clang libclang-rt-14-dev, or scripts/install-deps.sh)"
  exit 77
fi
if [ ! -f "$fuzz/build.ninja" ]; then
  mkdir -p "$fuzz"
  if ! CXX=clang++ cmake -S "$root" -B "$fuzz" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DSLUICE_BUILD_FUZZERS=ON -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DSLUICE_BUILD_BENCH=OFF \
      -DSLUICE_BUILD_JAVA=OFF > "$fuzz.configure.log" 2>&1; then
    cat "$fuzz.configure.log"
    rm -f "$fuzz/build.ninja"
    exit 1
  fi
fi
if ! cmake --build "$fuzz" --target "$@" > "$fuzz.build.log" 2>&1; then
  if grep -q "libclang_rt.fuzzer\|cannot find -lclang_rt" "$fuzz.build.log"; then
    echo "SKIP: libFuzzer is missing (apt-get install libclang-rt-14-dev)"; exit 77
  fi
  tail -40 "$fuzz.build.log"
  exit 1
fi
for target in "$@"; do
  corpus=$fuzz/corpus/$target
  crashes=$fuzz/crashes/$target
  mkdir -p "$corpus" "$crashes"
  python3 "$root/scripts/fuzz_seeds.py" "$target" "$corpus"
  log=$fuzz/$target.log
  status=0
  # A crash, a leak or a sanitizer report makes libFuzzer exit non-zero.
  "$fuzz/fuzzers/$target" "$corpus" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    -artifact_prefix="$crashes/" > "$log" 2>&1 || status=$?
  if [ "$status" -ne 0 ]; then
    echo "$target found a problem (inputs in $crashes):"
    grep -v "^sluice data plane" "$log" | tail -60
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "$target: ${runs:-0} inputs in $seconds s, $(ls "$corpus" | wc -l) in the corpus"
  [ "${runs:-0}" -gt 100 ] || { echo "FAIL: $target ran only ${runs:-0} inputs in $seconds s"; tail -20 "$log"; exit 1; }
done
