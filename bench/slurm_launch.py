#!/usr/bin/env python3
"""Launch overhead of `sluice run --launcher slurm`, on a throw-away local Slurm
(tests/slurm/slurm-local.sh: two virtual nodes on this machine), against the same run
through two hand-started sluiced.

The run is as small as a run can be: one C++ producer on host a sends one 1 KiB buffer to a
consumer on host b. Each figure is a median over the repetitions, in seconds from starting
the console:
  - to the mapping / connected: the console has its host daemons (Slurm: allocation, steps,
    ready files);
  - to the summary: the unit of work is done (its first and only buffer has arrived) and the
    app daemons have stopped;
  - to exit: the console has returned (Slurm: steps ended, allocation released).
Three ways: hand-started daemons (already running), --launcher slurm inside an allocation
(salloc --no-shell made beforehand, SLURM_JOB_ID set), and --launcher slurm outside one (the
console asks for the allocation and releases it).

    bench/slurm_launch.py --build build [--reps 5]
Root only (slurmd); prints a Markdown section, or says why it was skipped.
"""
import argparse
import contextlib
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemons"))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "slurm"))
import harness  # noqa: E402
from slurm_test import Cluster  # noqa: E402


def timed_run(cmd, env, marker):
    """Runs the console; returns (seconds to the line matching `marker`, to the summary, to exit)."""
    start = time.monotonic()
    p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    t_marker = t_summary = None
    text = ""
    for line in p.stderr:
        now = time.monotonic() - start
        text += line
        if t_marker is None and re.search(marker, line):
            t_marker = now
        if t_summary is None and line.startswith("units of work:"):
            t_summary = now
    p.wait()
    t_exit = time.monotonic() - start
    if p.returncode != 0 or t_summary is None:
        raise harness.Failed(f"{' '.join(cmd)}: status {p.returncode}\n{text}")
    return (t_marker if t_marker is not None else 0.0), t_summary, t_exit


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=5)
    args = ap.parse_args()
    print("## Launch overhead under Slurm\n")
    if os.geteuid() != 0:
        print("Skipped: needs root (a local Slurm's slurmd).\n")
        return
    source = os.path.join(HERE, "..")
    with harness.Harness(args.build, source, prefix="sluice-bench-slurm-") as h:
        c = Cluster(h)
        with contextlib.redirect_stdout(sys.stderr):  # its "ok:" line is not part of the table
            c.up()
        a = h.start("a")
        b = h.start("b")
        body = """filters:
  p: {class: Produce, library: LIB, args: {size: 1KiB, count: 1}, place: {a: 1}}
  c: {class: Consume, library: LIB, place: {b: 1}}
streams:
  - {from: p.out, to: c.in, buffer_size: 1KiB}
"""
        hand = h.topology("hand.yaml", "name: launch\n" + h.hosts_yaml(a, b) + body)
        slurm = h.topology("slurm.yaml", "name: launch\nhosts: {a: first:7700, b: second:7700}\n" + body)
        console = h.console
        env_hand = dict(c.env)
        r = c.cmd("salloc", "--no-shell", "--nodes", "2", "--job-name", "bench-alloc")
        m = re.search(r"Granted job allocation (\d+)", r.stderr)
        if not m:
            raise harness.Failed("salloc: " + r.stderr)
        job = m.group(1)
        h.cleanups.append(lambda: c.cmd("scancel", job))
        nodelist = c.cmd("squeue", "-h", "-j", job, "-o", "%N").stdout.strip()
        env_inside = dict(c.env, SLURM_JOB_ID=job, SLURM_JOB_NODELIST=nodelist)
        rows = {"hand-started sluiced": [], "--launcher slurm, inside an allocation": [],
                "--launcher slurm, outside (allocates, releases)": []}
        for i in range(args.reps):
            rows["hand-started sluiced"].append(timed_run(
                [console, "run", hand, "--no-progress", "--token-file", h.token], env_hand, r"^$"))
            rows["--launcher slurm, inside an allocation"].append(timed_run(
                [console, "run", slurm, "--no-progress", "--launcher", "slurm", "--run-dir",
                 os.path.join(h.dir, f"in{i}")], env_inside, r"sluice: slurm job \d+: "))
            rows["--launcher slurm, outside (allocates, releases)"].append(timed_run(
                [console, "run", slurm, "--no-progress", "--launcher", "slurm", "--run-dir",
                 os.path.join(h.dir, f"out{i}")], c.env, r"sluice: slurm job \d+: "))
        c.cmd("scancel", job)
        print(f"One 1 KiB buffer from host a to host b; median of {args.reps} runs, seconds from starting "
              "the console. Local Slurm (two slurmd on this machine), so no network or scheduler queue "
              "is in these figures.\n")
        print("| how the daemons start | daemons ready | summary (unit done) | console exits |")
        print("|---|---:|---:|---:|")
        for name, runs in rows.items():
            med = [statistics.median(r[k] for r in runs) for k in range(3)]
            ready = "—" if name.startswith("hand") else f"{med[0]:.3f}"
            print(f"| {name} | {ready} | {med[1]:.3f} | {med[2]:.3f} |")
        base = statistics.median(r[1] for r in rows["hand-started sluiced"])
        for name in list(rows)[1:]:
            over = statistics.median(r[1] for r in rows[name]) - base
            print(f"\nLaunch overhead to the first (only) buffer, {name}: {over:+.3f} s over hand-started daemons.")
        print()


if __name__ == "__main__":
    main()
