#!/usr/bin/env python3
"""graph_bench's pipeline shapes beside the same pipelines in Apache Flink 1.20, one machine.

sluice: build/bench/graph_bench (pair, 3- and 5-stage chains, 2+2 and 4+4 copies, keyed
shuffle 2 -> 2; 100 B, hand-off only), buffers/s over each shape's unit of work (the
engine's start is not counted). Flink: bench/flink/ (FlinkShapes, a standalone Maven
project built here on first use; it is not part of the root pom.xml, so CI never downloads
Flink): the same shapes as jobs on one warm local MiniCluster with operator chaining and
object reuse; a warm-up round of every shape is discarded, then --reps interleaved rounds.
Its steady-state figure is records / (last sink finished - first record emitted), both
inside the job, so job submission, scheduling and deployment are not counted (as sluice's
engine start is not); the job's whole wall time on the warm cluster is shown as well.

A round is `graph_bench --reps 1`, --reps times (one value per shape each), then one Flink
JVM with `--reps N`; --rounds rounds alternate the two programs, and every figure is the
median of all rounds x reps runs. --hogs N runs N CPU hogs beside both: graph_bench's own
(--hogs N: busy-looping threads in a child process) and, for Flink, N busy-looping Python
processes for the JVM's whole life.

    bench/flink_peer.py --build build [--reps 3] [--rounds 3] [--quick] [--hogs N] [--only TEXT]

Needs mvn and a JDK 17 (`java` on PATH, or $JAVA); Maven fetches Flink from Maven Central
into ~/.m2 the first time.
"""
import argparse
import glob
import multiprocessing
import os
import re
import shlex
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FLINK = os.path.join(HERE, "flink")
JAR = os.path.join(FLINK, "target", "flink-shapes.jar")
CLASSPATH = os.path.join(FLINK, "target", "classpath.txt")
HEADING = "## Beside Apache Flink 1.20: the same shapes, 100 B, one machine"
SHAPES = ["pair (1+1)", "3-stage chain", "5-stage chain", "2+2 copies", "4+4 copies", "keyed shuffle 2 -> 2"]

# What Flink's own distribution passes every JVM on Java 17 (config.yaml, env.java.opts.all,
# Flink 1.18-1.20). FlinkShapes runs without them too (byte[] records need no Kryo and its
# functions no reflection into java.base); they are here so that the JVM is set up as a
# Flink deployment's is.
JDK17_FLAGS = """
--add-exports=java.base/sun.net.util=ALL-UNNAMED --add-exports=java.rmi/sun.rmi.registry=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.api=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.parser=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.tree=ALL-UNNAMED
--add-exports=jdk.compiler/com.sun.tools.javac.util=ALL-UNNAMED
--add-exports=java.security.jgss/sun.security.krb5=ALL-UNNAMED
--add-opens=java.base/java.lang=ALL-UNNAMED --add-opens=java.base/java.net=ALL-UNNAMED
--add-opens=java.base/java.io=ALL-UNNAMED --add-opens=java.base/java.nio=ALL-UNNAMED
--add-opens=java.base/sun.nio.ch=ALL-UNNAMED --add-opens=java.base/java.lang.reflect=ALL-UNNAMED
--add-opens=java.base/java.text=ALL-UNNAMED --add-opens=java.base/java.time=ALL-UNNAMED
--add-opens=java.base/java.util=ALL-UNNAMED --add-opens=java.base/java.util.concurrent=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent.atomic=ALL-UNNAMED
--add-opens=java.base/java.util.concurrent.locks=ALL-UNNAMED
""".split()

SI = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}


class Failed(Exception):
    pass


class Skipped(Failed):
    """A tool this needs is not installed: says so, exits 0."""


def si(v):
    """As bench_common.h's si(): 1234567 -> '1.23M', 12345 -> '12.3k'."""
    return f"{v / 1e6:.2f}M" if v >= 1e6 else f"{v / 1e3:.1f}k" if v >= 1e3 else f"{v:.0f}"


def spread(values):
    """'median (min-max)'."""
    return f"{si(statistics.median(values))} ({si(min(values))}–{si(max(values))})"


def build_jar():
    """Builds bench/flink with Maven when the jar is missing or older than its sources."""
    sources = [os.path.join(FLINK, "pom.xml")] + glob.glob(os.path.join(FLINK, "src", "**", "*"), recursive=True)
    if os.path.exists(JAR) and os.path.exists(CLASSPATH) and \
            os.path.getmtime(JAR) >= max(os.path.getmtime(s) for s in sources):
        return
    mvn = shutil.which("mvn")
    if not mvn:
        raise Skipped("needs mvn to build bench/flink (and Maven Central the first time)")
    p = subprocess.run([mvn, "-q", "-B", "-f", os.path.join(FLINK, "pom.xml"), "package"],
                       capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise Failed(f"mvn package in bench/flink exited {p.returncode}:\n{(p.stdout + p.stderr)[-3000:]}")


def graph_bench(build, args):
    """One `graph_bench --reps 1`: {shape: buffers/s}."""
    cmd = [os.path.join(build, "bench", "graph_bench"), "--reps", "1"] + common_flags(args) + \
          (["--hogs", str(args.hogs)] if args.hogs else [])
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1800)
    if p.returncode != 0:
        raise Failed(f"{' '.join(cmd)} exited {p.returncode}:\n{p.stderr[-3000:]}")
    rates = {}
    for line in p.stdout.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = re.match(r"^([0-9.]+)([kMG]?)$", cells[1]) if line.startswith("|") and len(cells) > 1 else None
        if m and cells[0] in SHAPES:
            rates[cells[0]] = float(m.group(1)) * SI[m.group(2)]
    if not rates:
        raise Failed(f"no shape in graph_bench's table:\n{p.stdout[-3000:]}")
    return rates


def spin():
    while True:
        pass


def flink(args):
    """One FlinkShapes JVM: ({shape: [(steady/s, job/s, start-up s)]}, its '#' header, cluster start s)."""
    java = os.environ.get("JAVA") or shutil.which("java")
    if not java:
        raise Skipped("needs java (a JDK 17) on PATH or in $JAVA")
    with open(CLASSPATH) as f:
        classpath = JAR + os.pathsep + f.read().strip()
    cmd = [java] + JDK17_FLAGS + ["-cp", classpath, "org.sluice.bench.flink.FlinkShapes",
                                  "--reps", str(args.reps)] + common_flags(args)
    hogs = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.hogs)]
    for h in hogs:
        h.start()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=3600)
    finally:
        for h in hogs:
            h.kill()
            h.join()
    if p.returncode != 0:
        raise Failed(f"FlinkShapes exited {p.returncode}:\n{p.stderr[-3000:]}")
    runs, header, cluster = {}, "", None
    for line in p.stdout.splitlines():
        m = re.match(r"^# (Flink .*) started in ([0-9.]+) s", line)
        if m:
            header, cluster = m.group(1), float(m.group(2))
        if line.startswith("#") or not line.strip():
            continue
        rep, shape, _records, steady, job, wall, steady_s, _net = line.split("\t")
        if int(rep) > 0:  # rep 0 is the warm-up round
            runs.setdefault(shape, []).append((float(steady), float(job), float(wall) - float(steady_s)))
    if not runs:
        raise Failed(f"no results from FlinkShapes:\n{p.stdout[-2000:]}\n{p.stderr[-2000:]}")
    return runs, header, cluster


def sluice_binaries(build):
    """{path: mtime} of graph_bench and the libsluice it loads: a rebuild during the run shows."""
    paths = [os.path.join(build, "bench", "graph_bench")] + \
        sorted(set(os.path.realpath(p) for p in glob.glob(os.path.join(build, "core-cpp", "libsluice.so*"))))
    return {p: os.path.getmtime(p) for p in paths if os.path.exists(p)}


def common_flags(args):
    return (["--quick"] if args.quick else []) + (["--only", args.only] if args.only else [])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--build", default="build")
    p.add_argument("--reps", type=int, default=3, help="runs of each program per round (default 3)")
    p.add_argument("--rounds", type=int, default=3, help="sluice, Flink, sluice, Flink ... (default 3)")
    p.add_argument("--quick", action="store_true", help="a tenth of the records (400k) per run")
    p.add_argument("--hogs", type=int, default=0, help="CPU hogs beside both programs")
    p.add_argument("--only", default="", help="only the shapes whose name contains this text")
    args = p.parse_args()
    if args.reps < 1 or args.rounds < 1 or args.hogs < 0:
        p.error("--reps and --rounds must be >= 1, --hogs >= 0")
    command = "bench/flink_peer.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    hogs_text = f", {args.hogs} CPU hogs running" if args.hogs else ""
    print(f"{HEADING} ({os.cpu_count()} cores{hogs_text})\n")
    load_start = open("/proc/loadavg").read().split()[:3]
    try:
        if not os.access(os.path.join(args.build, "bench", "graph_bench"), os.X_OK):
            raise Failed(f"no {args.build}/bench/graph_bench (make build)")
        build_jar()
        binaries = sluice_binaries(args.build)
        sluice, peer, header, clusters = {}, {}, "", []
        for _ in range(args.rounds):
            for _ in range(args.reps):
                for shape, rate in graph_bench(args.build, args).items():
                    sluice.setdefault(shape, []).append(rate)
            runs, header, cluster = flink(args)
            clusters.append(cluster)
            for shape, values in runs.items():
                peer.setdefault(shape, []).extend(values)
    except Skipped as e:
        print(f"Skipped: {e}.\n")
        return
    except Failed as e:
        print(f"Failed: {e}\n")
        sys.exit(1)
    load_end = open("/proc/loadavg").read().split()[:3]
    rebuilt = [os.path.relpath(p) for p, t in sluice_binaries(args.build).items() if binaries.get(p) != t]
    if rebuilt:
        print(f"**Warning**: {', '.join(rebuilt)} changed during the run (rebuilt): the sluice figures "
              "mix two builds.\n")
    records = "400k" if args.quick else "4M"
    n = args.rounds * args.reps
    print(f"Command: `{command}`; load average at start {' '.join(load_start)}, at the end "
          f"{' '.join(load_end)}. {args.rounds} rounds, each `{args.build}/bench/graph_bench --reps 1` "
          f"{args.reps} times, then one JVM running FlinkShapes --reps {args.reps} ({header}: a warm-up "
          f"round of every shape discarded, then {args.reps} interleaved rounds; operator chaining, object "
          f"reuse); medians (and ranges) of all {n} runs, {records} records of 100 B through the sinks per "
          "run, hand-off only. sluice: buffers/s over the unit of work (start-up not counted). Flink steady "
          "state: records / (last sink finished - first record emitted), inside the job; Flink per job: "
          "records / the job's wall time on the warm MiniCluster (graph, submission, scheduling, "
          "deployment, tear-down).\n")
    print("| shape | sluice buffers/s | Flink records/s (steady state) | sluice / Flink | Flink records/s per job |")
    print("|---|---:|---:|---:|---:|")
    for shape in SHAPES:
        if shape not in peer:
            continue
        s = sluice.get(shape, [])
        steady = [v[0] for v in peer[shape]]
        job = [v[1] for v in peer[shape]]
        ratio = f"**{statistics.median(s) / statistics.median(steady):.2f}**" if s else "—"
        print(f"| {shape} | {spread(s) if s else '—'} | {spread(steady)} | {ratio} | {spread(job)} |")
    startup = [v[2] for values in peer.values() for v in values]
    print(f"\nFlink's start-up per job on the warm MiniCluster (the job's wall time less its steady run): "
          f"median {statistics.median(startup):.3f} s ({min(startup):.3f}–{max(startup):.3f} s over "
          f"{len(startup)} jobs); the MiniCluster itself (once per JVM, not counted above) started in "
          f"{statistics.median(clusters):.2f} s (median of {len(clusters)} JVMs).\n")


if __name__ == "__main__":
    main()
