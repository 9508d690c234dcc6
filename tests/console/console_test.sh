#!/usr/bin/env bash
# End-to-end tests of the console binary: exit statuses, messages, --metrics, the examples'
# results checked against an independent computation, and filters that crash the process.
#   console_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1
build=$2
sluice="$build/console/sluice"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ulimit -c 0  # the crash tests below: no core files, wherever the system puts them
failures=0
passed=0

fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
pass() { passed=$((passed + 1)); }
# expect_status WANT DESCRIPTION -- command...
expect_status() {
  local want=$1 what=$2
  shift 3
  "$@" > "$work/out" 2> "$work/err"
  local got=$?
  if [ "$got" -ne "$want" ]; then
    fail "$what: exit $got, want $want"; sed 's/^/  | /' "$work/err" >&2
  else
    pass
  fi
}
expect_in() {  # expect_in FILE TEXT DESCRIPTION
  if grep -qF -- "$2" "$1"; then pass; else fail "$3: '$2' not in output"; sed 's/^/  | /' "$1" >&2; fi
}

lib="$build/examples/libexamples.so"

# --- word count: the result equals an independent count of the same file --------------
expect_status 0 "wordcount runs" -- "$sluice" run "$src/examples/wordcount.yaml" --work one --work two --metrics "$work/m.json"
tr 'A-Z' 'a-z' < "$src/examples/data/words.txt" | tr -cs "a-z'" '\n' | sed "s/^'*//" | grep -v '^$' \
  | sort | uniq -c | sort -k1,1nr -k2,2 | head -8 | awk '{print "  " $1 "\t" $2}' > "$work/expected_top"
total=$(tr 'A-Z' 'a-z' < "$src/examples/data/words.txt" | tr -cs "a-z'" '\n' | sed "s/^'*//" | grep -cv '^$')
grep -A8 '^unit 0 \[one\]' "$work/out" | tail -8 > "$work/got_top"
if diff -u "$work/expected_top" "$work/got_top" > "$work/diff"; then pass; else fail "wordcount top words differ from tr|sort|uniq"; cat "$work/diff" >&2; fi
expect_in "$work/out" "unit 0 [one]: $total words" "wordcount total"
expect_in "$work/out" "unit 1 [two]: $total words" "second unit of work"
expect_in "$work/err" "units of work: 2/2 finished" "summary"

# --- a --metrics file that cannot be written: said before the run, status 2 ------------
expect_status 2 "unwritable --metrics" -- "$sluice" run "$src/examples/wordcount.yaml" --metrics /nonexistent-dir/m.json
expect_in "$work/err" "cannot write --metrics '/nonexistent-dir/m.json'" "unwritable --metrics named"
if grep -q "units of work" "$work/err"; then fail "a run with an unwritable --metrics ran"; else pass; fi
# ... and one that fails after the run (a full disk): said, and not status 0
expect_status 1 "--metrics on a full disk" -- "$sluice" run "$src/examples/wordcount.yaml" --metrics /dev/full
expect_in "$work/err" "sluice: cannot write metrics to '/dev/full': No space left on device" "--metrics on a full disk named"

# --- stdout that refuses the filters' output (a full disk): said, and not status 0; a pipe
# whose reader stops early (| head) is the reader's choice: status 0 ------------------------
"$sluice" run "$src/examples/wordcount.yaml" --no-progress > /dev/full 2> "$work/err"
got=$?
if [ "$got" -eq 1 ]; then pass; else fail "stdout on a full disk: exit $got, want 1"; sed 's/^/  | /' "$work/err" >&2; fi
expect_in "$work/err" "sluice: a write to stdout failed, so part of the filters' output is lost" \
  "stdout on a full disk named"
expect_in "$work/err" "units of work: 1/1 finished" "the run itself finished"
"$sluice" run "$src/examples/wordcount.yaml" --no-progress --work a --work b 2> "$work/err" | head -c 10 > /dev/null
got=${PIPESTATUS[0]}
if [ "$got" -eq 0 ]; then pass; else fail "stdout to a pipe read no further: exit $got, want 0"; sed 's/^/  | /' "$work/err" >&2; fi

# --- a long payload: the summary shows its start and its size, as submit does -------------
long_work="$(head -c 120000 /dev/zero | tr '\0' 'w')"
expect_status 0 "a 120 KB payload runs" -- "$sluice" run "$src/examples/wordcount.yaml" --work "$long_work"
expect_in "$work/err" "... (120000 bytes)]" "the summary cuts a long payload"
if [ "$(wc -c < "$work/err")" -lt 5000 ]; then pass; else fail "the summary printed the whole 120 KB payload"; fi
# A payload that is not UTF-8 (bytes a client chose): the --metrics file is still JSON, the
# stray byte written as U+FFFD (the JSON library threw, and the file stayed empty).
expect_status 0 "a payload that is not UTF-8 runs" -- "$sluice" run "$src/examples/wordcount.yaml" \
  --work "$(printf 'a\377b')" --metrics "$work/bytes.json"
python3 - "$work/bytes.json" <<'PY' && pass || fail "--metrics JSON of a payload that is not UTF-8"
import json, sys
m = json.load(open(sys.argv[1], encoding="utf-8"))
assert [u["work"] for u in m["units"]] == ["a\ufffdb"], m["units"]
PY
python3 - "$work/m.json" <<'PY' && pass || fail "metrics JSON"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["status"] == "ok" and m["exit_code"] == 0, m
assert [u["work"] for u in m["units"]] == ["one", "two"] and all(u["finished"] for u in m["units"])
s = {x["stream"]: x for x in m["streams"]}
assert s["read.out -> tokenize.in"]["producer_copies"] == 1 and s["read.out -> tokenize.in"]["consumer_copies"] == 2
assert s["tokenize.out -> count.in"]["buffers"] > 0 and s["tokenize.out -> count.in"]["buffers"] % 2 == 0
PY

# --- combining copies: three partial top-10s (by_key) merged by one copy equal the top 10 ---
# of the whole text (examples/topn.yaml reads words.txt 20 times), ties in byte order.
expect_status 0 "topn runs" -- "$sluice" run "$src/examples/topn.yaml" --work one --work two
words() { for _ in $(seq 20); do cat "$src/examples/data/words.txt"; done | tr 'A-Z' 'a-z' | tr -cs "a-z'" '\n' \
  | sed "s/^'*//" | grep -v '^$'; }
words | LC_ALL=C sort | uniq -c | LC_ALL=C sort -k1,1nr -k2,2 | head -10 | awk '{print "  " $1 "\t" $2}' > "$work/expected_topn"
topn_total=$(words | wc -l)
topn_distinct=$(words | LC_ALL=C sort -u | wc -l)
for unit in "0 \[one\]" "1 \[two\]"; do
  grep -A10 "^unit $unit" "$work/out" | tail -10 > "$work/got_topn"
  if diff -u "$work/expected_topn" "$work/got_topn" > "$work/diff"; then pass; else fail "topn (unit $unit): the merged top 10 differs from tr|sort|uniq"; cat "$work/diff" >&2; fi
done
expect_in "$work/out" "unit 0 [one]: 3 partial results, $topn_total words, $topn_distinct distinct; top 10:" "topn totals from the three partial results"
expect_in "$work/out" "unit 1 [two]: 3 partial results, $topn_total words, $topn_distinct distinct; top 10:" "topn totals, second unit"

# --- producer -> consumer: every buffer verified in order ------------------------------
expect_status 0 "producer-consumer runs" -- "$sluice" run "$src/examples/producer-consumer.yaml"
expect_in "$work/err" "received 100000 buffers, 102400000 bytes; 100000 verified in order from 1 producer(s)" "consumer verified"

# --- a throwing filter: status 1, named precisely, metrics say so ----------------------
cat > "$work/throw.yaml" <<YAML
filters:
  produce: {class: Produce, library: $lib, args: {size: 100KiB}}
  consume: {class: Consume, library: $lib}
streams:
  - {from: produce.out, to: consume.in}
YAML
expect_status 1 "filter error" -- "$sluice" run "$work/throw.yaml" --metrics "$work/fail.json"
expect_in "$work/err" "sluice: run failed: filter 'produce' copy 0 on host local failed in process (unit of work 0): args.size 102400 exceeds the stream's buffer_size 65536" "failure line"
python3 -c "import json,sys; m=json.load(open('$work/fail.json')); assert m['status']=='failed' and m['failure']['filter']=='produce' and m['failure']['stage']=='process'" && pass || fail "failure metrics"

# --- no token file: say to copy the running daemons' token, not to make a new one -------
cat > "$work/hosts.yaml" <<YAML
hosts: {a: 127.0.0.1:9}
filters:
  produce: {class: Produce, library: $lib}
  consume: {class: Consume, library: $lib}
streams:
  - {from: produce.out, to: consume.in}
YAML
expect_status 4 "missing token file" -- "$sluice" run "$work/hosts.yaml" --token-file "$work/no-such-token"
expect_in "$work/err" "token file '$work/no-such-token' does not exist; copy the token file of the running host daemons" "missing token: copy theirs"
if grep -q "create one" "$work/err"; then fail "missing token: the console suggests creating a new token"; sed 's/^/  | /' "$work/err" >&2; else pass; fi

# --- a declared argument left out: refused before anything runs, pointing at the filter --
refused_by_validate_and_run() {  # FILE DESCRIPTION MESSAGE: status 3 and MESSAGE from both commands
  for cmd in validate run; do
    expect_status 3 "$2 ($cmd)" -- "$sluice" $cmd "$1"
    expect_in "$work/err" "$3" "$2 ($cmd)"
  done
}
cat > "$work/noargs.yaml" <<YAML
filters:
  read:  {class: LineReader, library: $lib}
  top:   {class: TopWords, library: $lib}
streams:
  - {from: read.out, to: top.in}
YAML
refused_by_validate_and_run "$work/noargs.yaml" "missing declared argument" \
  "noargs.yaml:2:18: filter 'read': class 'LineReader' needs args.path (it declares them with SLUICE_FILTER_ARGS); add it to the filter, e.g. args: {path: ...}"

sed -i 's|read:  {class: LineReader, library: \([^}]*\)}|read:  {class: LineReader, library: \1, args: {paht: /tmp}}|' "$work/noargs.yaml"
refused_by_validate_and_run "$work/noargs.yaml" "misspelt declared argument" \
  "class 'LineReader' needs args.path (it declares them with SLUICE_FILTER_ARGS); add it to the filter, e.g. args: {path: ...}; args.paht is there: did you mean 'path'?"

# --- ... and a Java filter's, declared with @RequiredArgs --------------------------------
cat > "$work/noargs-java.yaml" <<YAML
filters:
  src:  {class: Produce, library: $lib, args: {count: 10}}
  read: {lang: java, class: org.sluice.nativetest.NeedsPath, classpath: [$build/jfilter/native/tests/java_test_filters.jar]}
streams:
  - {from: src.out, to: read.in}
YAML
refused_by_validate_and_run "$work/noargs-java.yaml" "missing declared Java argument" \
  "noargs-java.yaml:3:29: filter 'read': class 'org.sluice.nativetest.NeedsPath' needs args.path (it declares them with @RequiredArgs); add it to the filter, e.g. args: {path: ...}"
sed -i 's|classpath: \[|args: {path: /tmp}, classpath: [|' "$work/noargs-java.yaml"
expect_status 0 "declared Java argument given" -- "$sluice" validate "$work/noargs-java.yaml"

# --- a JVM named on purpose that cannot be used is said, not passed over for another -------
SLUICE_JVM_LIBRARY=/nonexistent/libjvm.so expect_status 3 "SLUICE_JVM_LIBRARY that does not exist" -- \
  "$sluice" validate "$work/noargs-java.yaml"
expect_in "$work/err" "SLUICE_JVM_LIBRARY names '/nonexistent/libjvm.so', which cannot be used as the JVM" \
  "a wrong SLUICE_JVM_LIBRARY named"
JAVA_HOME=/nonexistent expect_status 3 "JAVA_HOME without a JVM" -- "$sluice" validate "$work/noargs-java.yaml"
expect_in "$work/err" "JAVA_HOME is '/nonexistent', which has no lib/server/libjvm.so" "a wrong JAVA_HOME named"

# --- validate shows the units of work as the summary does: escaped, cut to 200 bytes ------
cat > "$work/work.yaml" <<YAML
filters:
  produce: {class: Produce, library: $lib}
  consume: {class: Consume, library: $lib}
streams:
  - {from: produce.out, to: consume.in}
work: ["red\\e[31mALERT", "$(printf 'x%.0s' $(seq 1 300))"]
YAML
expect_status 0 "validate with odd units of work" -- "$sluice" validate "$work/work.yaml"
expect_in "$work/out" "units of work: 2 [red\\x1b[31mALERT] [$(printf 'x%.0s' $(seq 1 200))... (300 bytes)]" \
  "validate escapes a unit's control characters and cuts a long one"

# --- an invalid topology: status 3, file:line:column, nothing runs ----------------------
cat > "$work/bad.yaml" <<YAML
filters:
  produce: {class: Produce, library: $lib}
  consume: {class: Consum, library: $lib}
streams:
  - {from: produce.out, to: consume.in, policy: round-robin}
YAML
expect_status 3 "invalid topology (run)" -- "$sluice" run "$work/bad.yaml"
expect_in "$work/err" "bad.yaml:5:" "policy error position"
expect_in "$work/err" "unknown policy 'round-robin'" "policy error text"
expect_status 3 "invalid topology (validate)" -- "$sluice" validate "$work/bad.yaml"
expect_in "$work/err" "bad.yaml:5:" "validate reports too"
# More memory than the machine has (pools, and the queues of 1000 x 1000 copies): refused by
# validate and run alike, before anything starts, naming the largest stream.
cat > "$work/wide.yaml" <<YAML
filters:
  produce: {class: Produce, library: $lib, copies: 1000}
  consume: {class: Consume, library: $lib, copies: 1000}
streams:
  - {from: produce.out, to: consume.in, buffer_size: 1GiB, depth: 65536}
YAML
for cmd in validate run; do
  expect_status 3 "more memory than the machine has ($cmd)" -- "$sluice" $cmd "$work/wide.yaml"
  expect_in "$work/err" "wide.yaml:5:5: the streams' buffer pools and queues need" "memory refusal at the stream ($cmd)"
done
sed -i 's/round-robin/round_robin/' "$work/bad.yaml"
expect_status 3 "unknown class" -- "$sluice" validate "$work/bad.yaml"
expect_in "$work/err" "bad.yaml:3:" "class error position"
expect_in "$work/err" "has no filter class 'Consum'; did you mean 'Consume'?" "class suggestion"
sed -i "s#library: $lib}#library: $work/nope.so}#" "$work/bad.yaml"
expect_status 3 "missing library" -- "$sluice" validate "$work/bad.yaml"
expect_in "$work/err" "cannot load filter library '$work/nope.so'" "library error"
expect_status 3 "missing file" -- "$sluice" run "$work/does-not-exist.yaml"

# --- a Java filter whose dependency jar is left off its classpath: validate says so ----------
dependent="$build/jfilter/native/tests/java_test_dependent.jar"
dependency="$build/jfilter/native/tests/java_test_dependency.jar"
if [ -f "$dependent" ]; then
  cat > "$work/dep.yaml" <<YAML
filters:
  greet: {lang: java, class: org.sluice.nativedependent.UsesHelper,
          classpath: [$dependent]}
YAML
  expect_status 3 "missing dependency jar (validate)" -- "$sluice" validate "$work/dep.yaml"
  expect_in "$work/err" "dep.yaml:3:22: filter 'greet': classpath [$dependent] lacks class 'org.sluice.nativedep.Helper', which class 'org.sluice.nativedependent.UsesHelper' needs (its code uses it); add the jar that holds it to classpath:" "missing dependency named at classpath:"
  sed -i "s#classpath: \[$dependent\]#classpath: [$dependent, $dependency]#" "$work/dep.yaml"
  expect_status 0 "with the dependency jar it runs" -- "$sluice" run "$work/dep.yaml"
  expect_in "$work/err" "[greet#0@local] info: hello, greet" "the dependency did its part"
fi

# --- validate prints the plan ----------------------------------------------------------
expect_status 0 "validate" -- "$sluice" validate "$src/examples/wordcount.yaml"
expect_in "$work/out" "tokenize.out -> count.in: by_key, 64B buffers, depth 256" "plan"

# --- validate across hosts: each host's buffer memory, with room to land what it receives
# produce on a, consume on b, 64 KiB depth 16: a has its producer's 1 block and a credit
# window (16) of blocks waiting to be sent; b its consumer's queue and buffer in hand (17),
# the window a may have in flight to it (16), and its consumer's run and buffer (16 + 1).
cat > "$work/two-hosts.yaml" <<YAML
hosts: {a: 127.0.0.1:9, b: 127.0.0.1:10}
filters:
  produce: {class: Produce, library: $lib, place: {a: 1}}
  consume: {class: Consume, library: $lib, place: {b: 1}}
streams:
  - {from: produce.out, to: consume.in, buffer_size: 64KiB, depth: 16}
YAML
expect_status 4 "validate across hosts (no token: the plan first)" -- "$sluice" validate "$work/two-hosts.yaml" --token-file "$work/no-such-token"
python3 - "$work/out" <<'PY' && pass || fail "validate prints each host's buffer memory"
import re, sys
text = open(sys.argv[1]).read()
units = {"B": 1, "KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30}
def size(host):
    # "  b: 3.2 MiB (3342336 B)": readable, then exact
    m = re.search(r"^  " + host + r": ([0-9.]+) (B|KiB|MiB|GiB) \(([0-9]+) B\)$", text, re.M)
    assert m, "no buffer memory line for host " + host + " in:\n" + text
    exact = int(m.group(3))
    assert abs(float(m.group(1)) * units[m.group(2)] - exact) <= 0.05 * units[m.group(2)], m.group(0)
    return exact
assert "buffer memory per host" in text, text
a, b = size("a"), size("b")
block = 64 << 10
assert 17 * block <= a < 18 * block, ("a", a)
assert 50 * block <= b < 51 * block, ("b", b)
PY

# --- usage errors: status 2 -------------------------------------------------------------
expect_status 2 "no command" -- "$sluice"
expect_status 2 "unknown option" -- "$sluice" run "$src/examples/wordcount.yaml" --frobnicate
expect_status 2 "malformed --hosts" -- "$sluice" run "$src/examples/wordcount.yaml" --hosts a=127.0.0.1:99999
expect_in "$work/err" "'a=127.0.0.1:99999' is not NAME=ADDR:PORT (port 1-65535)" "--hosts message"
expect_status 2 "--hosts client=..." -- "$sluice" run "$src/examples/wordcount.yaml" --hosts client=127.0.0.1:7700
expect_in "$work/err" "'client' cannot name a host: it is reserved" "--hosts client: refused as in hosts:"
expect_status 2 "--hosts naming a host twice" -- "$sluice" run "$src/examples/wordcount.yaml" \
  --hosts a=127.0.0.1:7700,a=127.0.0.1:7701
expect_in "$work/err" "host 'a' is given twice" "--hosts twice: said"
expect_status 2 "--token-file beside --launcher" -- "$sluice" run "$src/examples/wordcount.yaml" --launcher slurm --token-file "$work/t"
expect_in "$work/err" "excludes" "--token-file beside --launcher names the conflict"

# --- SIGINT cancels: status 130 ----------------------------------------------------------
cat > "$work/forever.yaml" <<YAML
filters:
  produce: {class: Produce, library: $lib, args: {count: 1000000000000, verify: false}}
  consume: {class: Consume, library: $lib, args: {verify: false}}
streams:
  - {from: produce.out, to: consume.in}
YAML
"$sluice" run "$work/forever.yaml" > /dev/null 2> "$work/err" &
pid=$!
sleep 0.5
kill -INT $pid
wait $pid
status=$?
[ $status -eq 130 ] && pass || fail "SIGINT: exit $status, want 130"
expect_in "$work/err" "interrupted by SIGINT" "SIGINT message"

# --- a run that stops moving: what each copy waits on -----------------------------------
# split writes each buffer to o0 or o1 (by its hash); join reads i1 to the end before i0,
# so with depth 1 split soon waits to write o0 while join waits to read i1: a deadlock by
# design, in any runtime.
graphs="$build/core-cpp/tests/libsluice_graph_filters.so"
cat > "$work/stall.yaml" <<YAML
defaults: {buffer_size: 256B, depth: 1}
filters:
  src:   {class: GSource, library: $graphs, args: {count: 200}}
  split: {class: GMix, library: $graphs, args: {order: in, outputs: "o0,o1"}}
  join:  {class: GMix, library: $graphs, args: {order: "i1,i0"}}
streams:
  - {from: src.out, to: split.in}
  - {from: split.o0, to: join.i0}
  - {from: split.o1, to: join.i1}
YAML
start=$(date +%s)
expect_status 1 "--stall-timeout fails a stalled run" -- timeout 60 "$sluice" run "$work/stall.yaml" --stall-timeout 1 --no-progress
[ $(( $(date +%s) - start )) -lt 30 ] && pass || fail "--stall-timeout 1 took $(( $(date +%s) - start )) s"
expect_in "$work/err" "run failed: no buffer has moved for 1." "stall failure"
expect_in "$work/err" "join#0 on host local: waiting" "stall: join named"
expect_in "$work/err" "to read from split.o1 -> join.i1" "stall: join waits to read i1"
expect_in "$work/err" "to write to split.o0 -> join.i0" "stall: split waits to write o0"
expect_in "$work/err" "(stopped by --stall-timeout)" "stall: says why it stopped"
# Without --stall-timeout the report comes after 10 s and the run goes on waiting; the live
# view shows it too (/api/status's stall, /metrics' sluice_run_stalled), not the terminal alone.
"$sluice" run "$work/stall.yaml" --no-progress --ui 127.0.0.1:0 > /dev/null 2> "$work/err" &
pid=$!
for _ in $(seq 1 60); do grep -q "no buffer has moved" "$work/err" && break; sleep 0.5; done
if kill -0 $pid 2>/dev/null; then pass; else fail "a stall without --stall-timeout ended the run"; fi
ui=$(grep -o 'http://127.0.0.1:[0-9]*/' "$work/err" | head -1)
fetch() { python3 -c 'import sys,urllib.request; sys.stdout.write(urllib.request.urlopen(sys.argv[1], timeout=10).read().decode())' "$1"; }
fetch "${ui}api/status" > "$work/status.json" || fail "the live view of a stalled run answers"
if python3 -c 'import json,sys; s=json.load(open(sys.argv[1])); sys.exit(0 if "no buffer has moved for 1" in s.get("stall","") and "join#0 on host local: waiting" in s["stall"] else 1)' "$work/status.json"; then
  pass; else fail "/api/status carries the stall report"; sed 's/^/  | /' "$work/status.json" >&2; fi
fetch "${ui}metrics" > "$work/metrics.txt"
expect_in "$work/metrics.txt" 'sluice_run_stalled{topology="stall"} 1' "/metrics says the run is stalled"
kill -INT $pid; wait $pid
expect_in "$work/err" "sluice: warning: no buffer has moved for 10." "stall warning after 10 s"
expect_in "$work/err" "sluice keeps waiting" "stall warning says the run goes on"
expect_status 2 "--stall-timeout must be positive" -- "$sluice" run "$work/stall.yaml" --stall-timeout 0
expect_status 2 "--stall-timeout -1" -- "$sluice" run "$work/stall.yaml" --stall-timeout -1
expect_in "$work/err" "--stall-timeout: '-1' is not a number of seconds above 0 and at most 31536000 (a year), e.g. 30 or 2.5" \
  "--stall-timeout -1: says what it takes (not the largest double's 309 digits)"
expect_status 2 "--stall-timeout beyond a year" -- "$sluice" run "$work/stall.yaml" --stall-timeout 1e300
expect_status 2 "--stall-timeout in hexadecimal" -- "$sluice" run "$work/stall.yaml" --stall-timeout 0x10
expect_status 2 "--ui-linger nan" -- "$sluice" run "$work/stall.yaml" --ui-linger nan
expect_in "$work/err" "--ui-linger: 'nan' is not a number of seconds from 0 to 31536000" "--ui-linger nan: says what it takes"

# --- a misspelt command or option: named, with the nearest one ---------------------------
expect_status 2 "a misspelt command" -- "$sluice" runn "$work/stall.yaml"
expect_in "$work/err" "sluice: unknown command 'runn'; did you mean 'run'?" "a misspelt command: did you mean"
expect_in "$work/err" "the commands: validate, run, serve, submit, stop, new" "a misspelt command: the commands listed"
expect_status 2 "a topology in the place of the command" -- "$sluice" "$work/stall.yaml"
expect_in "$work/err" "to run that topology: sluice run $work/stall.yaml" "a topology without run: says how to run it"
expect_status 2 "an option before the command" -- "$sluice" --stall-timeout 3 run "$work/stall.yaml"
expect_in "$work/err" "sluice: '--stall-timeout' is not an option of sluice itself; options go after the command" \
  "an option before the command: says where options go"
expect_status 2 "a misspelt option" -- "$sluice" run "$work/stall.yaml" --stal-timeout 3
expect_in "$work/err" "sluice run: unknown option '--stal-timeout'; did you mean '--stall-timeout'?" \
  "a misspelt option: did you mean"
expect_status 2 "--ui-linger without --ui" -- "$sluice" run "$work/stall.yaml" --ui-linger 3
expect_in "$work/err" "--ui-linger requires --ui" "--ui-linger without --ui: says it needs --ui"

# --- a filter that crashes the process: named first on stderr, then it dies by the signal --
crashlib="$build/core-cpp/tests/libsluice_test_crash.so"
javajar="$build/jfilter/native/tests/java_test_filters.jar"
crash_topology() {  # crash_topology FILE CRASH_ARGS [MORE FILTERS] [MORE STREAMS]
  cat > "$1" <<YAML
filters:
  src: {class: Produce, library: $lib, args: {size: 1KiB, count: 2000}}
  boom: {class: Crash, library: $crashlib, copies: 2, args: {$2}}
${3:-}
streams:
  - {from: src.out, to: boom.in, buffer_size: 1KiB}
${4:-}
work: [one, two]
YAML
}
# expect_crash SIGNAL_NUMBER FIRST_LINE DESCRIPTION -- command...
expect_crash() {
  local sig=$1 line=$2 what=$3
  shift 4
  "$@" > "$work/out" 2> "$work/err"
  local got=$?
  if [ "$got" -ne $((128 + sig)) ]; then
    fail "$what: exit $got, want $((128 + sig)) (killed by signal $sig)"; sed 's/^/  | /' "$work/err" >&2
  elif [ "$(head -n 1 "$work/err")" != "$line" ]; then
    fail "$what: stderr does not start with '$line'"; sed 's/^/  | /' "$work/err" >&2
  else
    pass
  fi
}
crash_topology "$work/segv.yaml" "signal: segv, copy: 1, after: 100"
expect_crash 11 "sluice: filter 'boom' copy 1 on host local crashed with SIGSEGV in process (unit of work 0)" \
  "SIGSEGV in process" -- "$sluice" run "$work/segv.yaml"
crash_topology "$work/bus.yaml" "signal: bus, stage: init, copy: 0, unit: 1"
expect_crash 7 "sluice: filter 'boom' copy 0 on host local crashed with SIGBUS in init (unit of work 1)" \
  "SIGBUS in init" -- "$sluice" run "$work/bus.yaml"
crash_topology "$work/abort.yaml" "signal: abort, stage: finalize, copy: 1"
expect_crash 6 "sluice: filter 'boom' copy 1 on host local crashed with SIGABRT in finalize (unit of work 0)" \
  "abort in finalize" -- "$sluice" run "$work/abort.yaml"
crash_topology "$work/fpe.yaml" "signal: fpe, copy: 0, after: 10"
expect_crash 8 "sluice: filter 'boom' copy 0 on host local crashed with SIGFPE in process (unit of work 0)" \
  "SIGFPE in process" -- "$sluice" run "$work/fpe.yaml"
# exit() in a C++ filter: named like a crash; status 1, not the 7 it chose.
crash_topology "$work/exit7.yaml" "signal: exit, copy: 1, after: 100"
expect_status 1 "exit(7) in a C++ filter: status 1" -- "$sluice" run "$work/exit7.yaml"
expect_in "$work/err" "sluice: filter 'boom' copy 1 on host local called exit(7) in process (unit of work 0)" "exit() named like a crash"
# Ctrl-C (here SIGTERM: a script's background job ignores SIGINT) waits up to 5 s for a copy
# stuck in its own code; a second one exits at once.
crash_topology "$work/spin.yaml" "signal: spin, copy: 0, after: 10"
"$sluice" run "$work/spin.yaml" --no-progress > "$work/out" 2> "$work/err" &
spin_pid=$!
sleep 1.5
kill -TERM $spin_pid
sleep 0.3
kill -TERM $spin_pid
started=$(date +%s%N)
wait $spin_pid
status=$?
took_ms=$(( ($(date +%s%N) - started) / 1000000 ))
if [ $status -eq 130 ] && [ $took_ms -lt 3000 ] && grep -q "interrupted again by SIGTERM; exiting now" "$work/err"; then
  pass
else
  fail "a second Ctrl-C: exit $status after $took_ms ms"; sed 's/^/  | /' "$work/err" >&2
fi
crash_topology "$work/thread.yaml" "signal: segv, copy: 0, thread: true"
"$sluice" run "$work/thread.yaml" > "$work/out" 2> "$work/err"
status=$?
[ $status -eq 139 ] && head -n 1 "$work/err" | grep -qE "^sluice: crashed with SIGSEGV outside any filter \(thread '[^']*', tid [0-9]+\)$" \
  && pass || { fail "crash outside any filter: exit $status"; sed 's/^/  | /' "$work/err" >&2; }

# --- ... with a JVM in the process, under -Xcheck:jni --------------------------------------
if [ -f "$javajar" ]; then
  export SLUICE_JVM_OPTIONS=-Xcheck:jni
  crash_topology "$work/jvm.yaml" "signal: segv, copy: 0, after: 50" \
    "  jsrc: {class: Produce, library: $lib, args: {size: 1KiB, count: 100000000, verify: false}}
  java: {lang: java, class: org.sluice.nativetest.Thrower, classpath: [$javajar]}" \
    "  - {from: jsrc.out, to: java.in, buffer_size: 1KiB}"
  expect_crash 11 "sluice: filter 'boom' copy 0 on host local crashed with SIGSEGV in process (unit of work 0)" \
    "SIGSEGV beside a JVM" -- "$sluice" run "$work/jvm.yaml"
  # Java's own SIGSEGV (an implicit null check in compiled code) stays a Java exception.
  cat > "$work/npe.yaml" <<YAML
filters:
  hot: {lang: java, class: org.sluice.nativetest.HotFault, classpath: [$javajar], args: {fault: npe}}
YAML
  expect_status 1 "Java NullPointerException with the crash handlers" -- "$sluice" run "$work/npe.yaml"
  expect_in "$work/err" "sluice: run failed: filter 'hot' copy 0 on host local failed in process (unit of work 0): java.lang.NullPointerException" "NPE reported as a Java exception"
  expect_in "$work/err" "at org.sluice.nativetest.HotFault.length(HotFault.java:" "NPE stack trace"
  if grep -qE "handler modified|crashed with" "$work/out" "$work/err"; then
    fail "-Xcheck:jni or the crash handler spoke up"; cat "$work/out" "$work/err" | sed 's/^/  | /' >&2
  else
    pass
  fi
  # System.exit in a Java filter cannot be undone: named like a crash, status 1 (not the 3
  # the filter chose, which would read as "the topology is invalid").
  cat > "$work/exit.yaml" <<YAML
filters:
  quitter: {lang: java, class: org.sluice.nativetest.Thrower, classpath: [$javajar], args: {exit: process}}
YAML
  expect_status 1 "System.exit(3) in a Java filter: status 1" -- "$sluice" run "$work/exit.yaml"
  expect_in "$work/err" "sluice: filter 'quitter' copy 0 on host local called System.exit(3) in process (unit of work 0)" "System.exit named like a crash"
  unset SLUICE_JVM_OPTIONS
  # A JVM option the JVM refuses: said once, at the jvm: line (line 1), not once per Java
  # filter at each filter's class: line (an outside review).
  cat > "$work/badjvm.yaml" <<YAML
jvm: {options: [-Xbogus-option]}
filters:
  j1: {lang: java, class: org.sluice.nativetest.Thrower, classpath: [$javajar]}
  j2: {lang: java, class: org.sluice.nativetest.Thrower, classpath: [$javajar]}
streams:
  - {from: j1.out, to: j2.in}
YAML
  expect_status 3 "a JVM option the JVM refuses: status 3" -- "$sluice" validate "$work/badjvm.yaml"
  expect_in "$work/err" "badjvm.yaml:1:1: jvm: the JVM did not start" "the JVM's failure is told at the jvm: line"
  if [ "$(grep -c "the JVM did not start" "$work/err")" -eq 1 ]; then pass; else
    fail "the JVM's failure is told once"; sed 's/^/  | /' "$work/err" >&2
  fi
fi

echo "$passed passed, $failures failed"
[ "$failures" -eq 0 ]
