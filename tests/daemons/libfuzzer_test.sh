#!/usr/bin/env bash
# Short libFuzzer runs (SECONDS each, default 10) under ASan and UBSan, when clang is
# installed; skipped (exit 77) otherwise. Builds only the fuzz targets, in BUILD_DIR/fuzz,
# with clang:
#   fuzz_control           the control decoder (framing and Envelope parsing)
#   fuzz_console_protocol  sluiced's stateful reader: a console session's state machine fed
#                          the bytes that come out of TLS, from the first one; seeded with
#                          conversations that get past the hello
#   fuzz_serve_protocol    sluice serve's stateful reader, the same way (submit, stop)
#   data_plane_fuzz        the data plane's stateful reader (HELLO, AUTH, credit, payloads)
#                          through a real DataPlane; run alone when asked for by name
#   libfuzzer_test.sh SOURCE_DIR BUILD_DIR [SECONDS] [data_plane_fuzz]
set -euo pipefail
src=$1
build=$2/fuzz
seconds=${3:-10}
only=${4:-}
if ! command -v clang++ > /dev/null; then
  echo "SKIP: clang++ is not installed (apt-get install clang libclang-rt-14-dev); control.fuzz_smoke still ran"
  exit 77
fi
if [ ! -f "$build/build.ninja" ]; then
  CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DSLUICE_BUILD_FUZZERS=ON -DSLUICE_BUILD_TESTS=OFF -DSLUICE_BUILD_EXAMPLES=OFF -DSLUICE_BUILD_BENCH=OFF \
    -DSLUICE_BUILD_JAVA=OFF > "$build.log" 2>&1 || { cat "$build.log"; exit 1; }
fi
if [ "$only" = data_plane_fuzz ]; then
  cmake --build "$build" --target data_plane_fuzz > "$build.dp.log" 2>&1 || { cat "$build.dp.log"; exit 1; }
  corpus=$(mktemp -d)
  trap 'rm -rf "$corpus"' EXIT
  # A crash, a leak or a sanitizer report makes libFuzzer exit non-zero: the test fails.
  "$build/core-cpp/data_plane_fuzz" "$corpus" -max_total_time="$seconds" -max_len=4096 -print_final_stats=1 \
    > "$corpus/log" 2>&1 || { grep -v "^sluice data plane" "$corpus/log" | tail -60; exit 1; }
  grep -E "stat::number_of_executed_units|stat::new_units_added" "$corpus/log"
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$corpus/log")
  [ "${runs:-0}" -gt 100 ] || { echo "FAIL: only ${runs:-0} inputs ran in $seconds s"; exit 1; }
  exit 0
fi
cmake --build "$build" --target fuzz_control fuzz_console_protocol fuzz_serve_protocol > "$build.log" 2>&1 || { cat "$build.log"; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/control" "$work/protocol" "$work/serve"

# Seeds for the session: byte 0 is the fake app daemon's behaviour and the chunk size
# (fuzz_console_protocol.cc), then control frames, hand-encoded like docs/protocol.md says.
python3 - "$work/protocol" <<'PY'
import struct, sys
def frame(body): return struct.pack(">I", len(body)) + body
def msg(field, inner): return bytes([field << 3 | 2, len(inner)]) + inner
hello = frame(msg(1, b"\x08\x02"))                                  # hello{protocol_version: 2}
launch = frame(msg(5, b"\x0a\x03app\x12\x01x"))                     # launch{application_id, topology_text}
entry = b"\x0a\x01b\x12\x03a:1"
wiring = frame(msg(7, bytes([0x0a, len(entry)]) + entry))           # wiring{peers: {b: a:1}}
start = frame(msg(9, b"\x12\x01w"))                                 # start_unit{payload: w}
beat = frame(msg(15, b"\x08\x01"))                                  # heartbeat{sequence: 1}
abort = frame(msg(13, b"\x0a\x01r"))                                # abort{reason: r}
stop = frame(msg(14, b""))                                          # shutdown{}
seeds = [b"\x00" + hello, b"\x04" + hello + launch + wiring + start + beat + abort + stop,
         b"\x01" + hello + launch + launch + start, b"\xfe" + hello + beat + start + launch + stop]
for i, s in enumerate(seeds):
    open(f"{sys.argv[1]}/seed{i}", "wb").write(s)
PY
# Seeds for sluice serve's session: byte 0 turns submits down (bit 0) and sets the chunk size.
python3 - "$work/serve" <<'PY'
import struct, sys
def frame(body): return struct.pack(">I", len(body)) + body
def varint(n): return bytes([n & 0x7f | 0x80, n >> 7]) if n > 0x7f else bytes([n])
def msg(field, inner): return varint(field << 3 | 2) + varint(len(inner)) + inner
hello = frame(msg(1, b"\x08\x02"))                                  # hello{protocol_version: 2}
submit = frame(msg(18, b"\x0a\x07count=3"))                         # submit{work: "count=3"}
stop = frame(msg(22, b""))                                          # stop{}
beat = frame(msg(15, b"\x08\x01"))                                  # heartbeat{sequence: 1}
seeds = [b"\x00" + hello, b"\x04" + hello + submit + beat + beat, b"\x01" + hello + submit,
         b"\xfe" + hello + stop + beat + submit]
for i, s in enumerate(seeds):
    open(f"{sys.argv[1]}/seed{i}", "wb").write(s)
PY

status=0
"$build/control/fuzz_control" "$work/control" -max_total_time="$seconds" -max_len=4096 \
  -print_final_stats=1 > "$work/control.log" 2>&1 || status=$?
tail -3 "$work/control.log"
[ "$status" -eq 0 ] || { echo "fuzz_control found a problem:"; tail -40 "$work/control.log"; exit 1; }
"$build/daemons/fuzz_console_protocol" "$work/protocol" -max_total_time="$seconds" -max_len=4096 \
  -print_final_stats=1 > "$work/protocol.log" 2>&1 || status=$?
tail -3 "$work/protocol.log"
[ "$status" -eq 0 ] || { echo "fuzz_console_protocol found a problem:"; tail -40 "$work/protocol.log"; exit 1; }
"$build/console/fuzz_serve_protocol" "$work/serve" -max_total_time="$seconds" -max_len=4096 \
  -print_final_stats=1 > "$work/serve.log" 2>&1 || status=$?
tail -3 "$work/serve.log"
[ "$status" -eq 0 ] || { echo "fuzz_serve_protocol found a problem:"; tail -40 "$work/serve.log"; exit 1; }
