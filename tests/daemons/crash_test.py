#!/usr/bin/env python3
"""Filters that crash their app daemon (SIGSEGV, SIGBUS, SIGFPE, abort, a crash outside any
filter, a crash beside a Java filter), with streams crossing hosts. The console names filter,
copy, host, stage and unit of work and keeps the signal the app daemon died by; it exits 1
within seconds; the crashing host's sluiced log has the crash line; both host daemons keep
serving, and no process or port is left behind. A crash in a destructor after every unit
finished is a warning, and the run's status stays 0.

The filters come from core-cpp/tests/fixtures/crash_filters.cc (class Crash).

  crash_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import resource

from harness import check, main

# A crash dumps core where the system says so: not into the build tree from a test.
resource.setrlimit(resource.RLIMIT_CORE, (0, resource.getrlimit(resource.RLIMIT_CORE)[1]))

TIMESTAMPED = r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z "


def crash_run(h, a, b, name, crash_args, place="{a: 1, b: 1}", work="[one, two]", filters="", streams="", args=()):
    """Runs a producer on a feeding the Crash filter's copies (placed by `place`), and the
    extra `filters` and `streams` (YAML lines); returns (status, stderr, seconds, {host: app
    daemon pid of this run})."""
    crash_lib = os.path.join(h.build, "core-cpp", "tests", "libsluice_test_crash.so")
    topo = h.topology(f"{name}.yaml", f"""name: {name}
{h.hosts_yaml(a, b)}filters:
  src:  {{class: Produce, library: LIB, args: {{size: 1KiB, count: 5000}}, place: {{a: 1}}}}
  boom: {{class: Crash, library: {crash_lib}, place: {place}, args: {{{crash_args}}}}}
{filters}streams:
  - {{from: src.out, to: boom.in, buffer_size: 1KiB, depth: 4}}
{streams}work: {work}
""")
    before = {d.name: len(d.app_pids()) for d in (a, b)}
    if "--metrics" not in args:
        args = tuple(args) + ("--metrics", os.path.join(h.dir, f"{name}.json"))
    status, out, err, secs = h.run("run", topo, "--no-progress", *args, timeout=120)
    pids = {d.name: d.app_pids()[-1] for d in (a, b) if len(d.app_pids()) > before[d.name]}
    return status, err, secs, pids


def crash_field(h, name):
    """The `crash` of crash_run `name`'s --metrics failure record."""
    with open(os.path.join(h.dir, f"{name}.json")) as f:
        return json.load(f)["failure"]["crash"]


def expect_crash(h, a, b, what, status, err, secs, pids, failure):
    check(status == 1, f"{what}: the console exits 1", err)
    check(secs < 10, f"{what}: ... within seconds ({secs:.2f} s)")
    check(f"sluice: run failed: {failure}\n" in err, f"{what}: reported as '{failure}'", err)
    h.no_orphans(list(pids.values()), what)
    check(a.serving() and b.serving(), f"{what}: both host daemons still serving")


def test(h):
    a = h.start("a")
    b = h.start("b")

    # --- SIGSEGV in process, on the host the stream crosses to -------------------------------
    metrics = os.path.join(h.dir, "segv.json")
    status, err, secs, pids = crash_run(h, a, b, "segv", "signal: segv, copy: 1, after: 100", args=("--metrics", metrics))
    line = "filter 'boom' copy 1 on host b crashed with SIGSEGV in process (unit of work 0)"
    expect_crash(h, a, b, "SIGSEGV", status, err, secs, pids,
                 f"{line}; the app daemon (sluice-appd pid {pids['b']}) was killed by SIGSEGV")
    check(crash_field(h, "segv") == "SIGSEGV", "SIGSEGV: --metrics failure.crash is SIGSEGV", crash_field(h, "segv"))
    check(re.search(rf"^{TIMESTAMPED}sluice-appd\(b\)\[{pids['b']}\] \[error\] {re.escape(line)}$", b.text(), re.M),
          "SIGSEGV: the app daemon's log line names the copy too", b.text()[-3000:])
    check(re.search(rf"sluice-appd pid {pids['b']} \(application 'segv-\w+'\) was killed by SIGSEGV after reporting: "
                    rf"{re.escape(line)}$", b.text(), re.M),
          "SIGSEGV: sluiced logs the death with the report", b.text()[-3000:])
    failure = json.load(open(metrics))["failure"]
    check({k: failure[k] for k in ("filter", "copy", "host", "unit", "stage")} ==
          {"filter": "boom", "copy": 1, "host": "b", "unit": 0, "stage": "process"},
          "SIGSEGV: the --metrics failure record names filter, copy, host, unit and stage", failure)
    # b's app daemon died before its final counts: the figures are lower bounds, and say so
    # (they read as exact, and were 0 when every host crashed before its first report).
    partial = json.load(open(metrics)).get("partial_counts_from_hosts", [])
    check(len(partial) == 1 and partial[0].startswith("b, "), "SIGSEGV: --metrics names b's counts as partial", partial)
    check(re.search(r"^\(at least: no final counts came from host b, (which never reported|last reported [\d.]+ s before "
                    r"the end): their copies' share above is what they had carried by their last report\)$", err, re.M),
          "SIGSEGV: the summary says its counts lack what b carried after its last report", err)

    # --- SIGBUS in init of the second unit of work, on the producer's host --------------------
    status, err, secs, pids = crash_run(h, a, b, "bus", "signal: bus, stage: init, copy: 0, unit: 1")
    expect_crash(h, a, b, "SIGBUS", status, err, secs, pids,
                 "filter 'boom' copy 0 on host a crashed with SIGBUS in init (unit of work 1); "
                 f"the app daemon (sluice-appd pid {pids['a']}) was killed by SIGBUS")
    check(crash_field(h, "bus") == "SIGBUS", "SIGBUS: --metrics failure.crash is SIGBUS", crash_field(h, "bus"))

    # --- abort() in finalize ------------------------------------------------------------------
    status, err, secs, pids = crash_run(h, a, b, "abort", "signal: abort, stage: finalize, copy: 1")
    expect_crash(h, a, b, "abort", status, err, secs, pids,
                 "filter 'boom' copy 1 on host b crashed with SIGABRT in finalize (unit of work 0); "
                 f"the app daemon (sluice-appd pid {pids['b']}) was killed by SIGABRT")
    check(crash_field(h, "abort") == "SIGABRT", "abort: --metrics failure.crash is SIGABRT", crash_field(h, "abort"))

    # --- SIGFPE (integer division by zero) in process, both copies on b -----------------------
    status, err, secs, pids = crash_run(h, a, b, "fpe", "signal: fpe, copy: 0, after: 10", place="{b: 2}")
    expect_crash(h, a, b, "SIGFPE", status, err, secs, pids,
                 "filter 'boom' copy 0 on host b crashed with SIGFPE in process (unit of work 0); "
                 f"the app daemon (sluice-appd pid {pids['b']}) was killed by SIGFPE")
    check(crash_field(h, "fpe") == "SIGFPE", "SIGFPE: --metrics failure.crash is SIGFPE", crash_field(h, "fpe"))

    # --- a stack overflow on b: said so, and still parsed into filter, copy, host and stage -----
    metrics = os.path.join(h.dir, "stack.json")
    status, err, secs, pids = crash_run(h, a, b, "stack", "signal: stack, copy: 1", args=("--metrics", metrics))
    expect_crash(h, a, b, "SIGSEGV", status, err, secs, pids,
                 "filter 'boom' copy 1 on host b crashed with SIGSEGV (stack overflow: recursion too deep, or a local "
                 f"array larger than the stack) in process (unit of work 0); the app daemon (sluice-appd pid {pids['b']}) "
                 "was killed by SIGSEGV")
    failure = json.load(open(metrics))["failure"]
    check({k: failure[k] for k in ("filter", "copy", "host", "stage")} == {"filter": "boom", "copy": 1, "host": "b", "stage": "process"},
          "stack overflow: the failure record names filter, copy, host and stage", failure)

    # --- exit() in a filter on b: named like a crash -------------------------------------------
    status, err, secs, pids = crash_run(h, a, b, "exit", "signal: exit, copy: 1, after: 100")
    expect_crash(h, a, b, "exit(7)", status, err, secs, pids,
                 "filter 'boom' copy 1 on host b called exit(7) in process (unit of work 0); "
                 f"the app daemon (sluice-appd pid {pids['b']}) exited with status 1")
    check(crash_field(h, "exit") == "exit(7)", "exit(): --metrics failure.crash is exit(7)", crash_field(h, "exit"))

    # --- a crash in a destructor, after every unit finished: the results stand (status 0) ----
    status, err, secs, pids = crash_run(h, a, b, "destroy", "signal: segv, stage: destroy, copy: 1")
    check(status == 0 and "units of work: 2/2 finished" in err, "destructor: every unit finished, exit 0", err)
    check("sluice: warning: while shutting down: filter 'boom' copy 1 on host b crashed with SIGSEGV in destroy "
          f"(unit of work 1); the app daemon (sluice-appd pid {pids['b']}) was killed by SIGSEGV\n" in err,
          "destructor: the crash is a warning that names the copy", err)
    h.no_orphans(list(pids.values()), "destructor")

    # --- a crash on a thread that runs no copy -----------------------------------------------
    status, err, secs, pids = crash_run(h, a, b, "outside", "signal: segv, copy: 1, thread: true")
    m = re.search(r"sluice: run failed: host b: the app daemon \(sluice-appd pid (\d+)\) crashed with SIGSEGV "
                  r"outside any filter \(thread '[^']*', tid \d+\)\n", err)
    check(m and int(m.group(1)) == pids["b"], "outside any filter: reported with host, pid and thread", err)
    expect_crash(h, a, b, "outside any filter", status, err, secs, pids, m.group(0)[len("sluice: run failed: "):-1])
    check(crash_field(h, "outside") == "SIGSEGV", "outside any filter: --metrics failure.crash is SIGSEGV", crash_field(h, "outside"))

    # --- a C++ crash in an app daemon that runs a JVM (HotSpot chains the signal to sluice) ---
    # The Java filter placed on b makes b's app daemon start its JVM while it loads the
    # topology, before any unit of work runs.
    jar = os.path.join(h.build, "jfilter", "native", "tests", "java_test_filters.jar")
    if os.path.exists(jar):
        status, err, secs, pids = crash_run(
            h, a, b, "java", "signal: segv, copy: 1, after: 50",
            filters="  jsrc: {class: Produce, library: LIB, args: {size: 1KiB, count: 100000000, verify: false}, "
                    "place: {b: 1}}\n"
                    f"  java: {{lang: java, class: org.sluice.nativetest.Thrower, classpath: [{jar}], place: {{b: 1}}}}\n",
            streams="  - {from: jsrc.out, to: java.in, buffer_size: 1KiB}\n")
        expect_crash(h, a, b, "SIGSEGV beside a JVM", status, err, secs, pids,
                     "filter 'boom' copy 1 on host b crashed with SIGSEGV in process (unit of work 0); "
                     f"the app daemon (sluice-appd pid {pids['b']}) was killed by SIGSEGV")
        check(crash_field(h, "java") == "SIGSEGV", "SIGSEGV beside a JVM: --metrics failure.crash is SIGSEGV", crash_field(h, "java"))
        # System.exit in a Java filter on b: named like a crash, with the app daemon's exit.
        status, err, secs, pids = crash_run(
            h, a, b, "jexit", "signal: segv, copy: 9",
            filters=f"  quit: {{lang: java, class: org.sluice.nativetest.Thrower, classpath: [{jar}], "
                    "args: {exit: process}, place: {b: 1}}\n")
        expect_crash(h, a, b, "System.exit in a Java filter", status, err, secs, pids,
                     "filter 'quit' copy 0 on host b called System.exit(3) in process "
                     f"(unit of work 0); the app daemon (sluice-appd pid {pids['b']}) exited with status 1")
        check(crash_field(h, "jexit") == "System.exit(3)", "System.exit: --metrics failure.crash is System.exit(3)", crash_field(h, "jexit"))
    else:
        print("note: no Java test filters built; the JVM case is skipped")


if __name__ == "__main__":
    main(test)
