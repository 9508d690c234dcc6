#!/usr/bin/env python3
"""What watching a run costs: the local pipeline with and without `--ui`, interleaved.

    bench/ui_cost.py --build build [--pairs 25] [--buffers 120000000]

The pipeline: `sluice run` embedded, Produce -> Forward -> Consume (libexamples.so), 100 B
buffers, depth 256, hand-off only (verify: false), one unit of work. Each pair runs it
once plainly (A) and once with `--ui 127.0.0.1:0` (B), A then B, and a browser-like
poller watches every B run: it loads the page once, then asks /api/status on one
keep-alive connection, parses the JSON and waits 500 ms before asking again, as the
page's script does (twice a second). Each run's figure is buffers/s over its unit of
work (from the --metrics file, so start-up is not counted); the result is the median of
the per-pair ratios B / A (many short pairs: single runs swing by a third on a shared
2-core machine, A and B alike) (the bar: >= 0.98, i.e. --ui costs less than 2 %). Also shown:
the console process's CPU time per buffer (user + system, from wait4), which moves less
with the machine's other load than throughput does; the CPU time of the two --ui threads
(sluice-ui, sluice-ui-feed: /proc/PID/task/*/schedstat, read at each poll) as a share of
the console's; and the polls answered.

The default 120 M buffers make a run last about 2 s at today's ~60 M buffers/s, so a B run
is polled four or five times (30 M, the first default, came to run 0.5 s: one poll).

Every run must move every buffer, and every B run must have been polled; otherwise the
script fails rather than print a figure that measured something else.
"""
import argparse
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def ui_thread_ns(pid):
    """CPU ns so far of pid's threads named sluice-ui* (the --ui server and its feed), from
    /proc/PID/task/*/schedstat; 0 when they cannot be read (the process has gone)."""
    total = 0
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return 0
    for tid in tasks:
        try:
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                if not f.read().startswith("sluice-ui"):
                    continue
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                total += int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            pass
    return total


class Poller:
    """A browser on the --ui page: the page once, then /api/status every 500 ms after the
    previous answer, on one keep-alive connection (what the page's fetch loop does)."""

    def __init__(self, host, port, pid):
        self.host, self.port, self.pid = host, port, pid
        self.stop, self.polls, self.errors = threading.Event(), 0, []
        # Set by run() when the console prints its summary: it closes its --ui server after.
        self.summary = threading.Event()
        self.ui_ns = 0  # CPU time of the console's --ui threads, as of the last poll
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def loop(self):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=10)
        try:
            conn.request("GET", "/")
            page = conn.getresponse().read()
            if b"/api/status" not in page:
                self.errors.append("the page does not poll /api/status")
            while not self.stop.is_set():
                conn.request("GET", "/api/status", headers={"Accept": "application/json"})
                r = conn.getresponse()
                body = r.read()
                if r.status != 200:
                    self.errors.append(f"/api/status answered {r.status}")
                    return
                json.loads(body)
                self.polls += 1
                self.ui_ns = ui_thread_ns(self.pid) or self.ui_ns
                self.stop.wait(0.5)
        except (OSError, http.client.HTTPException) as e:
            # The console closing at the end is expected: it closes its --ui server right
            # after printing its summary, maybe under a request, before run() has reaped it
            # and said stop. A close before the summary (which run() reads from the
            # console's stderr, within 0.5 s) is an error: the --ui server went while the
            # run went on.
            if not self.stop.is_set() and not self.summary.wait(0.5):
                self.errors.append(f"{type(e).__name__}: {e}")
        finally:
            conn.close()

    def close(self):
        self.stop.set()
        self.thread.join()


def topology(lib, buffers):
    return ("name: ui-cost\n"
            "defaults: {buffer_size: 100B, depth: 256}\n"
            "filters:\n"
            f"  produce: {{class: Produce, library: {lib}, args: {{size: 100, count: {buffers}, verify: false}}}}\n"
            f"  forward: {{class: Forward, library: {lib}}}\n"
            f"  consume: {{class: Consume, library: {lib}, args: {{verify: false}}}}\n"
            "streams:\n"
            "  - {from: produce.out, to: forward.in}\n"
            "  - {from: forward.out, to: consume.in}\n")


def run(console, topo, metrics, buffers, ui):
    """One run: (buffers/s over the unit, console CPU ns per buffer, polls, the --ui threads'
    share of the console's CPU)."""
    cmd = [console, "run", topo, "--no-progress", "--metrics", metrics]
    if ui:
        cmd += ["--ui", "127.0.0.1:0"]
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    poller, err = None, []
    try:
        for line in p.stderr:
            err.append(line)
            m = re.search(r"watching the run at http://([0-9.]+):(\d+)/", line)
            if m and ui and poller is None:
                poller = Poller(m.group(1), int(m.group(2)), p.pid)
            if poller and line.startswith("units of work:"):
                poller.summary.set()
        _, status, usage = os.wait4(p.pid, 0)
        p.returncode = os.waitstatus_to_exitcode(status)
    finally:
        if p.returncode is None:
            p.kill()
            p.wait()
        if poller:
            poller.close()
    text = "".join(err)
    if p.returncode != 0:
        sys.exit(f"ui_cost.py: the run exited {p.returncode}:\n{text[-3000:]}")
    if ui and (poller is None or poller.polls == 0 or poller.errors):
        sys.exit(f"ui_cost.py: the --ui run was not watched (polls: {poller and poller.polls}, "
                 f"errors: {poller and poller.errors}):\n{text[-3000:]}")
    with open(metrics) as f:
        doc = json.load(f)
    moved = [s["buffers"] for s in doc["streams"]]
    if moved != [buffers, buffers]:
        sys.exit(f"ui_cost.py: not every buffer moved: {moved}, want {buffers} on each stream")
    seconds = doc["units"][0]["seconds"]
    cpu = usage.ru_utime + usage.ru_stime
    return (buffers / seconds, cpu / buffers * 1e9, poller.polls if poller else 0,
            poller.ui_ns / 1e9 / cpu if poller else 0)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--pairs", type=int, default=25)
    p.add_argument("--buffers", type=int, default=120_000_000)
    args = p.parse_args()
    if args.pairs < 1:
        sys.exit("ui_cost.py: --pairs must be 1 or more")
    build = os.path.abspath(args.build)
    console = os.path.join(build, "console", "sluice")
    lib = os.path.join(build, "examples", "libexamples.so")
    with tempfile.TemporaryDirectory(prefix="sluice-ui-cost-") as tmp:
        topo = os.path.join(tmp, "ui-cost.yaml")
        with open(topo, "w") as f:
            f.write(topology(lib, args.buffers))
        metrics = os.path.join(tmp, "metrics.json")
        load_start, start = loadavg(), time.time()
        plain, watched, ratios, polls = [], [], [], 0
        for _ in range(args.pairs):
            a = run(console, topo, metrics, args.buffers, ui=False)
            b = run(console, topo, metrics, args.buffers, ui=True)
            plain.append(a)
            watched.append(b)
            ratios.append(b[0] / a[0])
            polls += b[2]
        load_end, took = loadavg(), time.time() - start

    def m(xs):
        return f"{xs / 1e6:.2f}M"

    ratio = statistics.median(ratios)
    cpu_a = statistics.median(r[1] for r in plain)
    cpu_b = statistics.median(r[1] for r in watched)
    print("## What watching a run costs: the local pipeline with and without --ui\n")
    print(f"Command: `bench/ui_cost.py --build {args.build} --pairs {args.pairs} --buffers {args.buffers}` "
          f"({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime(start))}, {took:.0f} s; load average "
          f"{load_start} at the start, {load_end} at the end).\n")
    print("`sluice run` embedded: Produce -> Forward -> Consume, "
          f"{args.buffers:,} buffers of 100 B, depth 256, hand-off only. Each pair runs it plainly (A), "
          "then with `--ui 127.0.0.1:0` (B) while a browser-like poller loads the page and asks "
          "/api/status every 500 ms on a keep-alive connection, as the page does. Buffers/s over the "
          "unit of work; CPU = the console process's user + system time per buffer; the --ui threads "
          "(sluice-ui serving, sluice-ui-feed sampling) are timed from /proc/PID/task/*/schedstat as of "
          "the last poll.\n")
    print("| pair | A: plain, buffers/s | B: --ui, polled, buffers/s | B / A | polls | CPU ns/buffer A | B "
          "| --ui threads' share of B's CPU |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for i, (a, b) in enumerate(zip(plain, watched)):
        print(f"| {i + 1} | {m(a[0])} | {m(b[0])} | {b[0] / a[0]:.3f} | {b[2]} | {a[1]:.1f} | {b[1]:.1f} "
              f"| {b[3] * 100:.3f} % |")
    print(f"| **median** | {m(statistics.median(r[0] for r in plain))} | "
          f"{m(statistics.median(r[0] for r in watched))} | **{ratio:.3f}** | {polls} in all | {cpu_a:.1f} | {cpu_b:.1f} "
          f"| {statistics.median(r[3] for r in watched) * 100:.3f} % |\n")
    q1, _, q3 = statistics.quantiles(ratios, n=4) if len(ratios) > 1 else (ratio, ratio, ratio)
    slower = sum(r < 1 for r in ratios)
    print(f"The ratios' middle half: {q1:.3f}–{q3:.3f}; B was slower in {slower} of {len(ratios)} pairs. "
          "Single runs of this pipeline swing by a third on this machine (its copies share 2 cores "
          "with everything else), in A and B alike, hence many short pairs and their median.\n")
    verdict = "**met**" if ratio >= 0.98 else "**not met**"
    print(f"Bar: with --ui on, throughput drops by less than 2 % (median B / A >= 0.98): {verdict} "
          f"(throughput {(ratio - 1) * 100:+.1f} % with --ui; CPU per buffer B / A {cpu_b / cpu_a:.3f}).\n")


if __name__ == "__main__":
    main()
