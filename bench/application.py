#!/usr/bin/env python3
"""A deployed application: what a submitted unit of work costs, against `sluice run` per unit.

Two figures, embedded and across two host daemons on this machine (real sluiced on loopback):
- the round trip of an empty unit (a source that writes nothing -> to: client): submitted to
  a deployed application (bench/application_bench: submit, read the results, wait) against
  a whole `sluice run` of the same one-unit topology (process start, deploy, the unit, exit),
  which is what a user without a deployed application pays per query;
- results throughput at 64 KiB: one unit whose source writes BUFFERS buffers of 64 KiB
  `to: client`, read by the submitting program, against the same unit under `sluice run`
  (the console drains the client stream; the unit's own seconds from its summary).
Runs alternate; medians of --reps.

    bench/application.py --build build [--reps 5] [--units 200] [--buffers 20000]
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemons"))
import harness  # noqa: E402  (sluiced processes, tokens, cleanup)


def topology(h, name, count, size, hosts=None):
    place = ", place: {a: 1}" if hosts else ""
    return h.topology(f"{name}.yaml", f"name: {name}\n" + (h.hosts_yaml(*hosts) if hosts else "") +
                      "filters:\n"
                      f"  src: {{class: Produce, library: LIB, args: {{size: {size}, count: {count}, verify: false}}{place}}}\n"
                      "streams:\n"
                      f"  - {{from: src.out, to: client, buffer_size: 64KiB, depth: 16}}\n")


def bench_line(h, path, units, hosts=None):
    cmd = [os.path.join(h.build, "bench", "application_bench"), "--topology", path, "--units", str(units)]
    if hosts:
        cmd += ["--hosts", ",".join(f"{d.name}={d.address}" for d in hosts), "--token-file", h.token]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=1200)
    m = re.search(r"per_unit_us ([0-9.]+) buffers (\d+) bytes (\d+) MBps ([0-9.]+)", p.stdout)
    if p.returncode != 0 or not m:
        raise harness.Failed(f"application_bench {path} exited {p.returncode}:\n{p.stderr[-3000:]}")
    return float(m.group(1)), float(m.group(4))


def run_once(h, path):
    """Wall seconds of a whole `sluice run`, and the client stream's MB/s from its summary."""
    start = time.time()
    status, _, err, _ = h.run("run", path, "--no-progress", timeout=1200)
    wall = time.time() - start
    if status != 0:
        raise harness.Failed(f"sluice run {path} exited {status}:\n{err[-3000:]}")
    m = re.search(r"src\.out -> client\s+\d+\s+[0-9.]+\s+[0-9.]+[kM]?\s+([0-9.]+)", err)
    return wall, float(m.group(1)) if m else 0.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--units", type=int, default=200)
    p.add_argument("--buffers", type=int, default=20000)
    args = p.parse_args()
    size = 65536
    with harness.Harness(args.build, os.path.join(HERE, ".."), prefix="sluice-app-bench-") as h:
        a, b = h.start("a"), h.start("b")
        rows = []
        for where, hosts in (("embedded", None), ("two daemons", (a, b))):
            empty = topology(h, "empty-" + where.replace(" ", "-"), 0, 16, hosts)
            bulk = topology(h, "bulk-" + where.replace(" ", "-"), args.buffers, size, hosts)
            submitted, per_run, client_mbps, run_mbps = [], [], [], []
            for _ in range(args.reps):
                submitted.append(bench_line(h, empty, args.units, hosts)[0])
                per_run.append(run_once(h, empty)[0] * 1e6)
                client_mbps.append(bench_line(h, bulk, 1, hosts)[1])
                run_mbps.append(run_once(h, bulk)[1])
            rows.append((where, statistics.median(submitted), statistics.median(per_run),
                         statistics.median(client_mbps), statistics.median(run_mbps)))
        print("## A deployed application: per-unit overhead and results throughput\n")
        print(f"`bench/application.py --build {args.build} --reps {args.reps} --units {args.units} "
              f"--buffers {args.buffers}`: an empty unit's round trip (submit, read its results, wait) "
              "on a deployed application, against a whole `sluice run` of the same one-unit topology; "
              f"and one unit of {args.buffers:,} buffers of 64 KiB `to: client`, read by the submitting "
              "program, against the same unit under `sluice run` (whose console drains the client "
              "stream); neither touches the bytes, so embedded (where the client reads the producer's own "
              "pool blocks, nothing copied) it is the hand-off rate, and across hosts the data plane's. "
              "Medians of interleaved runs.\n")
        print("| where | submitted unit | `sluice run` per unit | ratio | results to the client | same unit, `sluice run` | ratio |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        for where, sub, run, cm, rm in rows:
            print(f"| {where} | {sub:.0f} µs | {run/1e3:.0f} ms | **{run/sub:.0f}x** faster | "
                  f"{cm:.0f} MB/s | {rm:.0f} MB/s | {cm/rm:.2f} |")
        print()


if __name__ == "__main__":
    main()
