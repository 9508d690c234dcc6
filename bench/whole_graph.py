#!/usr/bin/env python3
"""A whole mixed graph at 100 B, embedded and across two host daemons on this machine.

    4 C++ sources (by_key) -> 2 C++ forwards -> 2 Java forwards -> 2 C++ checkers

Embedded, everything runs in the console's process. Across hosts, two real sluiced on
loopback each get half of every filter's copies (sources 2+2, forwards 1+1, Java forwards
1+1, checkers 1+1), so every stream crosses between the app daemons in both directions.
The checkers verify every buffer's checksum and count per source (a source's buffers reach
a checker along several paths, so order is not checked). Runs alternate embedded and across
hosts; each figure is buffers/s over the unit of work (from the console's summary, so
start-up and JVM creation are not counted); medians. (What `--ui` costs is measured by
bench/ui_cost.py, in pairs.)

    bench/whole_graph.py --build build [--reps 3] [--buffers 10000000] [--only embedded|across]
"""
import argparse
import os
import re
import statistics
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemons"))
import harness  # noqa: E402  (the daemon tests' helpers: sluiced processes, tokens, cleanup)


def topology(h, buffers, hosts=None):
    lib = h.lib
    jar = os.path.join(h.build, "bench", "java_bench_filters.jar")
    per_source = buffers // 4

    def place(copies):
        return f", place: {{a: {copies // 2}, b: {copies - copies // 2}}}" if hosts else ""

    return (f"name: whole-graph\n" + (h.hosts_yaml(*hosts) if hosts else "") +
            "defaults: {buffer_size: 100B, depth: 1024}\n"
            "filters:\n"
            f"  src:   {{class: Produce, library: {lib}, copies: 4, args: {{size: 100, count: {per_source}}}{place(4)}}}\n"
            f"  fwd:   {{class: Forward, library: {lib}, copies: 2{place(2)}}}\n"
            f"  jfwd:  {{lang: java, class: org.sluice.bench.Forward, classpath: [{jar}], copies: 2{place(2)}}}\n"
            f"  check: {{class: Consume, library: {lib}, copies: 2, args: {{order: false}}{place(2)}}}\n"
            "streams:\n"
            "  - {from: src.out, to: fwd.in, policy: by_key}\n"
            "  - {from: fwd.out, to: jfwd.in}\n"
            "  - {from: jfwd.out, to: check.in}\n")


def unit_seconds(err):
    m = re.search(r"units of work: 1/1 finished in ([0-9.]+) s", err)
    if not m:
        raise harness.Failed("the run did not finish:\n" + err[-3000:])
    # The unit's own duration: "...finished in 2.104 s; [] 1.732 s".
    u = re.search(r"finished in [0-9.]+ s; \[[^\]]*\] ([0-9.]+) s", err)
    return float(u.group(1)) if u else float(m.group(1))


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--reps", type=int, default=3)
    p.add_argument("--buffers", type=int, default=10_000_000)
    p.add_argument("--only", choices=("embedded", "across"),
                   help="run one side only (to profile it); no ratio is printed")
    args = p.parse_args()
    with harness.Harness(args.build, os.path.join(HERE, ".."), prefix="sluice-whole-graph-") as h:
        a = h.start("a")
        b = h.start("b")
        embedded_file = h.topology("embedded.yaml", topology(h, args.buffers))
        remote_file = h.topology("remote.yaml", topology(h, args.buffers, (a, b)))
        embedded, remote = [], []
        for _ in range(args.reps):
            for path, out in ((embedded_file, embedded), (remote_file, remote)):
                if args.only and (path == embedded_file) != (args.only == "embedded"):
                    continue
                status, _, err, _ = h.run("run", path, "--no-progress", timeout=1200)
                if status != 0:
                    raise harness.Failed(f"{path} exited {status}:\n{err[-3000:]}")
                # Checkers throw on a bad checksum (the run then fails); the last stream must
                # have carried every buffer.
                m = re.search(r"jfwd\.out -> check\.in\s+(\d+)\s", err)
                if not m or int(m.group(1)) != args.buffers:
                    raise harness.Failed(f"{path}: not every buffer reached the checkers:\n{err[-3000:]}")
                out.append(args.buffers / unit_seconds(err))
        if args.only:
            runs = embedded or remote
            print(f"{args.only}: {statistics.median(runs)/1e3:.0f}k buffers/s "
                  f"({', '.join(f'{x/1e3:.0f}k' for x in runs)})")
            return
        e, r = statistics.median(embedded), statistics.median(remote)
        print("## A whole mixed graph at 100 B: embedded vs across two host daemons\n")
        print(f"`bench/whole_graph.py --build {args.build} --reps {args.reps} --buffers {args.buffers}`: "
              "4 C++ sources (by_key) -> 2 C++ forwards -> 2 Java forwards -> 2 C++ checkers, "
              f"{args.buffers:,} buffers of 100 B, depth 1024; across hosts every filter's copies are "
              "split over two sluiced on loopback. Medians of interleaved runs, buffers/s over the unit "
              "of work.\n")
        print("| where | buffers/s (runs) | ratio to embedded | bar |\n|---|---:|---:|---|")
        print(f"| embedded | {e/1e3:.0f}k ({', '.join(f'{x/1e3:.0f}k' for x in embedded)}) | 1 | |")
        print(f"| two daemons | {r/1e3:.0f}k ({', '.join(f'{x/1e3:.0f}k' for x in remote)}) | "
              f"**{r/e:.2f}** | >= 0.5 |\n")


if __name__ == "__main__":
    main()
