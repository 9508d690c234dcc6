#!/usr/bin/env python3
"""Four hosts: a by_key all-to-all stream across N = 2, 3, 4 hosts (issue 14, point 5).

Hosts: N network namespaces attached to one Linux bridge (a veth pair per namespace,
10.78.0.1/24 ... 10.78.0.4/24, only inside namespaces this script creates), a real sluiced in
each, the console (`sluice run`) in the first: the path users run, daemons, control
protocol, data-plane handshake and all. The application: KeyedSource (N copies, one per
host) -> by_key -> KeyedSink (N copies, one per host), so every host sends to every other
host and to itself (bench/all_to_all_filters.cc). Every sink checks that it got exactly the
buffers by_key sends it, in order, from every source; a run that loses, duplicates or
reorders one fails. Two units of work per run: a short warm-up (connections, caches), then
the measured unit; its time is from the first source's start to the last sink's end of work.

The peer: iperf3 pairs run the same way, one client per namespace to the next namespace's
server (a -> b, b -> c, ..., last -> a), all at once, with the same write size; their
received bytes summed. 1/N of sluice's traffic stays on its host (a source's buffers for its
own host's sink never cross the bridge); the tables show that part separately.

Also measured, per N: every app daemon's peak VmRSS and threads, its established data
connections (from /proc, in its namespace), the CPU time of its busiest thread (the data
plane's I/O thread), the console's RSS and threads, and the console's barrier per unit of
work (units that move nothing: start_unit to every host, unit_done from every host).

Runs are interleaved (repetition -> N -> size -> sluice, iperf3 in alternating order);
medians over the repetitions. Prints Markdown; draws bench/four_hosts.png (matplotlib).
Needs root and `ip netns` (says so and exits 0 otherwise) and iperf3. Every namespace,
bridge, veth and process it made is removed on the way out, also on failure or Ctrl-C.

  bench/four_hosts.py [--build build] [--reps 3] [--hosts 2,3,4] [--sizes 100,65536]
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemons"))
import harness  # noqa: E402  (real sluiced processes, tokens, cleanup of every process)

NAMES = "abcd"
DEPTH = {100: 1024, 65536: 32}  # as net_bench: 100 B at ZeroMQ's high-water mark, 64 KiB at 32
TOTAL = {100: 4_000_000, 65536: 60_000}  # buffers per measured unit, all sources together
IPERF_PORT = 5201
CLK_TCK = os.sysconf("SC_CLK_TCK")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def ip(*args, check=True):
    p = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {p.stderr.strip()}")
    return p


def loadavg():
    return " ".join(open("/proc/loadavg").read().split()[:3])


def scan():
    """pid -> (ppid, own ticks, reaped children's ticks, kernel thread?) for every process."""
    out = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            f = open(f"/proc/{d}/stat").read().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        flags = int(f[6])
        out[int(d)] = (int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14]), bool(flags & 0x00200000))
    return out


def others_cpu(before, after, ours, seconds):
    """(other processes, kernel threads) CPU between two scans, in shares of all CPUs.
    Ours: the pids in `ours` and their descendants. Others: every other process present in
    both scans, with what it reaped meanwhile (a compiler's make or ninja reaps its
    compilers). Kernel threads (ksoftirqd, kworkers) are apart: they do the veth/bridge
    work of everyone, ours included."""
    def mine(pid, table):
        seen = 0
        while pid > 1 and seen < 64:
            if pid in ours:
                return True
            pid = table.get(pid, (0,))[0]
            seen += 1
        return False
    other = kernel = 0
    for pid, (ppid, own, kids, kthread) in after.items():
        if pid not in before or mine(pid, after):
            continue
        d = own - before[pid][1] + (kids - before[pid][2])
        if kthread:
            kernel += own - before[pid][1]
        else:
            other += d
    cap = seconds * CLK_TCK * os.cpu_count()
    return other / cap, kernel / cap


def proc_ticks(path):
    """utime + stime of /proc/PATH/stat (a process or a thread), in ticks; 0 when it is gone."""
    try:
        f = open(f"/proc/{path}/stat").read().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return 0
    return int(f[11]) + int(f[12])


class Sampler(threading.Thread):
    """Watches the app daemons of one run (found in the sluiced logs as they launch) and the
    console, every `period` s, reading /proc only (no subprocess): peak VmRSS and threads,
    established TCP connections of the app daemon, and each thread's CPU ticks (last look)."""

    def __init__(self, daemons, known, console_pid, period=0.25):
        super().__init__(daemon=True)
        self.daemons, self.console_pid, self.period = daemons, console_pid, period
        self.known = known  # host -> app daemon pids of earlier runs
        self.app = {}  # host -> pid
        self.peak = {}  # host -> {"rss_kib", "threads", "conns", "listen"}
        self.tasks = {}  # host -> [(CLOCK_MONOTONIC ns, {tid: ticks})]
        self.console = {"rss_kib": 0, "threads": 0}
        self.stop_event = threading.Event()

    @staticmethod
    def status(pid):
        out = {}
        for line in open(f"/proc/{pid}/status"):
            k, _, v = line.partition(":")
            if k in ("VmRSS", "Threads"):
                out[k] = int(v.split()[0])
        return out

    @staticmethod
    def connections(pid):
        """(established, listening) TCP sockets of pid, from its namespace's /proc/PID/net/tcp."""
        inodes = set()
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                link = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if link.startswith("socket:["):
                inodes.add(link[8:-1])
        est = lis = 0
        for table in ("tcp", "tcp6"):
            try:
                lines = open(f"/proc/{pid}/net/{table}").read().splitlines()[1:]
            except FileNotFoundError:
                continue
            for line in lines:
                f = line.split()
                if f[9] in inodes:
                    est += f[3] == "01"
                    lis += f[3] == "0A"
        return est, lis

    def look(self):
        for d in self.daemons:
            if d.name not in self.app:
                new = [p for p in d.app_pids() if p not in self.known[d.name]]
                if not new:
                    continue
                self.app[d.name] = new[-1]
            pid = self.app[d.name]
            try:
                st = self.status(pid)
                est, lis = self.connections(pid)
                ticks = {}
                for tid in os.listdir(f"/proc/{pid}/task"):
                    ticks[int(tid)] = proc_ticks(f"{pid}/task/{tid}")
            except (FileNotFoundError, ProcessLookupError, KeyError):
                continue
            p = self.peak.setdefault(d.name, {"rss_kib": 0, "threads": 0, "conns": 0, "listen": 0})
            p["rss_kib"] = max(p["rss_kib"], st.get("VmRSS", 0))
            p["threads"] = max(p["threads"], st.get("Threads", 0))
            p["conns"] = max(p["conns"], est)
            p["listen"] = max(p["listen"], lis)
            if ticks:
                self.tasks.setdefault(d.name, []).append((time.monotonic_ns(), ticks))
        try:
            st = self.status(self.console_pid)
            self.console["rss_kib"] = max(self.console["rss_kib"], st.get("VmRSS", 0))
            self.console["threads"] = max(self.console["threads"], st.get("Threads", 0))
        except (FileNotFoundError, ProcessLookupError):
            pass

    def run(self):
        while not self.stop_event.wait(self.period):
            self.look()

    def cpu(self, start_ns, end_ns):
        """host -> (busiest thread, whole process) in cores, between the first look after
        start_ns and the last before end_ns (None when fewer than two looks fell in between)."""
        out = {}
        for host, looks in self.tasks.items():
            inside = [x for x in looks if start_ns <= x[0] <= end_ns]
            if len(inside) < 2:
                continue
            (t0, a), (t1, b) = inside[0], inside[-1]
            secs = (t1 - t0) / 1e9
            delta = {tid: b[tid] - a.get(tid, 0) for tid in b}
            out[host] = (max(delta.values()) / CLK_TCK / secs, sum(delta.values()) / CLK_TCK / secs)
        return out

    def stop(self):
        self.stop_event.set()
        self.join()


class Bridge(harness.Harness):
    """N network namespaces on one bridge, a sluiced and an iperf3 server in each; a context
    manager that leaves nothing behind (harness.Harness stops the daemons and any app daemon
    left, then runs self.cleanups last-in first-out and removes its directory)."""

    def __init__(self, build, hosts):
        super().__init__(build, os.path.dirname(HERE), prefix="sluice-fourhosts-")
        self.n = hosts
        self.ns, self.addr, self.iperf = {}, {}, {}

    def __enter__(self):
        super().__enter__()
        try:
            self._setup()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def _setup(self):
        tag = f"fh{os.getpid() % 100000}"
        br = f"{tag}br"
        self.cleanups.append(lambda: ip("link", "del", br, check=False))
        ip("link", "add", br, "type", "bridge")
        ip("link", "set", br, "up")
        for i, name in enumerate(NAMES[:self.n]):
            ns, inner, outer = f"{tag}-{name}", f"{tag}{name}", f"{tag}{name}p"
            # Deleting the namespace deletes the veth end inside it, and with it the pair.
            self.cleanups.append(lambda ns=ns: ip("netns", "del", ns, check=False))
            self.cleanups.append(lambda outer=outer: ip("link", "del", outer, check=False))
            ip("netns", "add", ns)
            ip("link", "add", inner, "type", "veth", "peer", "name", outer)
            ip("link", "set", inner, "netns", ns)
            ip("link", "set", outer, "master", br)
            ip("link", "set", outer, "up")
            ip("-n", ns, "addr", "add", f"10.78.0.{i + 1}/24", "dev", inner)
            ip("-n", ns, "link", "set", inner, "up")
            ip("-n", ns, "link", "set", "lo", "up")
            self.ns[name], self.addr[name] = ns, f"10.78.0.{i + 1}"
        for name in NAMES[:self.n]:
            self.start(name, f"{self.addr[name]}:7700", netns=self.ns[name])
            p = subprocess.Popen(["ip", "netns", "exec", self.ns[name], "iperf3", "-s", "-B", self.addr[name],
                                  "-p", str(IPERF_PORT)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.cleanups.append(lambda p=p: (p.poll() is None and p.kill(), p.wait()))
            self.iperf[name] = p
        for name in NAMES[:self.n]:
            self.wait_for(lambda name=name: harness.listening(IPERF_PORT, self.ns[name]), 10,
                          f"iperf3 -s in {self.ns[name]}")
        # The bridge learns where each address lives before the first measurement.
        for name in NAMES[1:self.n]:
            subprocess.run(["ip", "netns", "exec", self.ns["a"], "ping", "-c", "1", "-W", "2", self.addr[name]],
                           capture_output=True)

    def ours(self):
        """This script, the sluiced daemons and the iperf3 servers: their descendants are ours too."""
        return {os.getpid()} | {d.pid for d in self.daemons} | {p.pid for p in self.iperf.values()}


def topology(hosts, n, size, count, depth, report, lib):
    names = NAMES[:n]
    place = "{" + ", ".join(f"{h}: 1" for h in names) + "}"
    return f"""name: all-to-all-{n}-{size}
hosts:
{"".join(f"  {h}: {hosts.daemons[i].address}{chr(10)}" for i, h in enumerate(names))}filters:
  src:  {{class: KeyedSource, library: {lib}, args: {{size: {size}, count: {count}, report: {report}}}, place: {place}}}
  sink: {{class: KeyedSink, library: {lib}, args: {{producers: {n}, count: {count}, report: {report}}}, place: {place}}}
streams:
  - {{from: src.out, to: sink.in, policy: by_key, buffer_size: {size}, depth: {depth}}}
"""


def console(hosts, topo, work, metrics, timeout=600):
    """Runs `sluice run` in host a's namespace with a Sampler beside it; returns the sampler."""
    cmd = ["ip", "netns", "exec", hosts.ns["a"], hosts.console, "run", topo, "--no-progress",
           "--token-file", hosts.token, "--metrics", metrics] + [x for w in work for x in ("--work", w)]
    out = open(os.path.join(hosts.dir, "console.out"), "w+")
    daemons = hosts.daemons[:len(hosts.addr)]
    known = {d.name: set(d.app_pids()) for d in daemons}
    p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT)
    sampler = Sampler(daemons, known, p.pid)
    sampler.start()
    try:
        status = p.wait(timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        p.wait()
        status = "timeout"
    finally:
        sampler.stop()
    if status != 0:
        out.seek(0)
        raise RuntimeError(f"sluice run {topo} failed ({status}):\n{out.read()[-4000:]}")
    return sampler


def sluice_run(hosts, n, size, lib):
    """One deployment: a warm-up unit, then the measured one. Returns its figures."""
    total = TOTAL[size]
    count = total // n  # per source copy
    report = os.path.join(hosts.dir, "report.txt")
    if os.path.exists(report):
        os.unlink(report)
    topo = os.path.join(hosts.dir, f"a2a-{n}-{size}.yaml")
    with open(topo, "w") as f:
        f.write(topology(hosts, n, size, count, DEPTH[size], report, lib))
    metrics = os.path.join(hosts.dir, "metrics.json")
    sampler = console(hosts, topo, [str(max(1, count // 20)), str(count)], metrics)
    lines = [dict(kv.split("=", 1) for kv in line.split()[1:]) for line in open(report)]
    unit = [x for x in lines if x["unit"] == "1"]
    sources = [x for x in unit if x["role"] == "source"]
    sinks = [x for x in unit if x["role"] == "sink"]
    got = sum(int(x["buffers"]) for x in sinks)
    if len(sources) != n or len(sinks) != n or got != count * n:
        raise RuntimeError(f"unexpected report for {n} hosts, {size} B: {len(sources)} sources, {len(sinks)} sinks, "
                           f"{got} buffers (expected {count * n})")
    start, end = min(int(x["start_ns"]) for x in sources), max(int(x["end_ns"]) for x in sinks)
    seconds = (end - start) / 1e9
    nbytes = sum(int(x["bytes"]) for x in sinks)
    return {"buffers_s": got / seconds, "mb_s": nbytes / seconds / 1e6, "seconds": seconds, "buffers": got,
            "peak": sampler.peak, "cpu": sampler.cpu(start, end), "console": sampler.console}


def barrier_run(hosts, n, lib, units):
    """`units` units of work that move nothing, after a warm-up one: the console's barrier."""
    report = os.path.join(hosts.dir, "report.txt")
    topo = os.path.join(hosts.dir, f"barrier-{n}.yaml")
    with open(topo, "w") as f:
        f.write(topology(hosts, n, 100, 0, 16, report, lib))
    metrics = os.path.join(hosts.dir, "metrics.json")
    console(hosts, topo, ["0"] * (units + 1), metrics)
    secs = [u["seconds"] for u in json.load(open(metrics))["units"]][1:]
    return statistics.median(secs) * 1e3


def iperf_run(hosts, n, size, seconds):
    """N iperf3 pairs at once, host i's client to host i+1's server; MB/s received, summed."""
    names = NAMES[:n]
    procs = []
    for i, name in enumerate(names):
        server = hosts.addr[names[(i + 1) % n]]
        cmd = ["ip", "netns", "exec", hosts.ns[name], "iperf3", "-c", server, "-p", str(IPERF_PORT),
               "-l", str(size), "-t", str(seconds), "-O", "1", "-J"]
        procs.append(subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
    total = 0.0
    for p in procs:
        out, err = p.communicate(timeout=seconds + 30)
        doc = json.loads(out) if out.strip() else {}
        if p.returncode != 0 or "error" in doc:
            raise RuntimeError(f"iperf3 failed: {doc.get('error', err.strip())}")
        total += doc["end"]["sum_received"]["bits_per_second"] / 8 / 1e6
    return {"mb_s": total, "buffers_s": total * 1e6 / size}


def measure(hosts, what, fn):
    """Runs fn(), recording the share of both CPUs that other processes used meanwhile."""
    before, t0 = scan(), time.time()
    r = fn()
    r["other_cpu"], r["kernel_cpu"] = others_cpu(before, scan(), hosts.ours(), time.time() - t0)
    log(f"  {what}: " + ", ".join(f"{k} {v:,.3g}" for k, v in r.items() if isinstance(v, float)))
    return r


def med(xs):
    return statistics.median(xs) if xs else 0.0


def size_label(size):
    return "64 KiB" if size == 65536 else f"{size} B"


def fmt(x):
    return f"{x / 1e6:.2f}M" if x >= 1e6 else f"{x / 1e3:.0f}k" if x >= 1e4 else f"{x:.0f}"


def plot(results, ns, sizes, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        log("four_hosts: no matplotlib (use /usr/bin/python3 with python3-matplotlib): no plot")
        return False
    fig, axes = plt.subplots(1, len(sizes), figsize=(6 * len(sizes), 4.6))
    axes = axes if len(sizes) > 1 else [axes]
    for ax, size in zip(axes, sizes):
        s = [results[(n, size)]["sluice"] for n in ns]
        ax.plot(ns, [x["mb_s"] for x in s], "o-", color="tab:blue", label="sluice, all buffers")
        ax.plot(ns, [x["mb_s"] * (n - 1) / n for x, n in zip(s, ns)], "o--", color="tab:blue", alpha=0.6,
                label="sluice, the part that crosses hosts")
        ax.plot(ns, [results[(n, size)]["iperf"]["mb_s"] for n in ns], "s-", color="tab:orange",
                label=f"iperf3, N pairs summed (-l {size})")
        for n, x in zip(ns, s):
            ax.annotate(f"{fmt(x['buffers_s'])} buf/s", (n, x["mb_s"]), textcoords="offset points", xytext=(0, 7),
                        ha="center", fontsize=8, color="tab:blue")
        ax.set_xticks(ns)
        ax.set_xlabel("hosts (network namespaces on one bridge, 2 cores in all)")
        ax.set_ylabel("MB/s, aggregate")
        ax.set_ylim(bottom=0)
        ax.set_title(f"by_key all-to-all, {size_label(size)} buffers")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(png, dpi=100)
    return True


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--hosts", default="2,3,4", help="host counts, each 2..4")
    ap.add_argument("--sizes", default="100,65536", help="buffer sizes: 100 and/or 65536")
    ap.add_argument("--iperf-seconds", type=int, default=3)
    ap.add_argument("--barrier-units", type=int, default=30)
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the buffers per run (quick trials)")
    ap.add_argument("--png", default=os.path.join(HERE, "four_hosts.png"))
    a = ap.parse_args()
    ns = [int(x) for x in a.hosts.split(",")]
    sizes = [int(x) for x in a.sizes.split(",")]
    if not all(2 <= n <= 4 for n in ns) or not all(s in DEPTH for s in sizes):
        sys.exit("four_hosts: --hosts takes 2, 3, 4; --sizes takes 100, 65536")
    title = "## Four hosts: a by_key all-to-all stream across 2, 3 and 4 hosts\n"
    if os.geteuid() != 0:
        print(title + "\nSkipped: needs root to create network namespaces and a bridge "
              "(run `sudo make bench` or `sudo bench/four_hosts.py`).\n")
        return
    if shutil.which("ip") is None or ip("netns", "list", check=False).returncode != 0:
        print(title + "\nSkipped: `ip netns` is not available (install iproute2).\n")
        return
    if shutil.which("iperf3") is None:
        print(title + "\nSkipped: iperf3 is not installed (scripts/install-deps.sh installs it).\n")
        return
    for size in TOTAL:
        TOTAL[size] = max(1000, int(TOTAL[size] * a.scale))
    build = os.path.abspath(a.build)
    lib = os.path.join(build, "bench", "liball_to_all_filters.so")
    if not os.path.exists(lib):
        sys.exit(f"four_hosts: {lib} is missing; build first (make build)")
    # A SIGTERM (make, CI) unwinds through the cleanups like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    samples, barrier, loads = {}, {}, []
    load_before, started = loadavg(), time.time()
    with Bridge(build, max(ns)) as hosts:
        for rep in range(a.reps):
            loads.append(loadavg())
            for n in ns:
                log(f"four_hosts: rep {rep + 1}/{a.reps}, {n} hosts (load {loadavg()})")
                for size in sizes:
                    runs = [("sluice", lambda: sluice_run(hosts, n, size, lib)),
                            ("iperf", lambda: iperf_run(hosts, n, size, a.iperf_seconds))]
                    for what, fn in (runs if rep % 2 == 0 else runs[::-1]):
                        samples.setdefault((n, size, what), []).append(measure(hosts, f"{what} {size} B", fn))
                if a.barrier_units > 0:
                    barrier.setdefault(n, []).append(barrier_run(hosts, n, lib, a.barrier_units))
                    log(f"  barrier: {barrier[n][-1]:.2f} ms per unit")
    took = time.time() - started
    report(a, ns, sizes, samples, barrier, load_before, loads, took)


def report(a, ns, sizes, samples, barrier, load_before, loads, took):
    results = {}
    for n in ns:
        for size in sizes:
            r = {}
            for what in ("sluice", "iperf"):
                runs = samples[(n, size, what)]
                r[what] = {k: med([x[k] for x in runs]) for k in ("mb_s", "buffers_s", "other_cpu")}
            results[(n, size)] = r
    cmd = f"bench/four_hosts.py --build {a.build} --reps {a.reps}"
    print("## Four hosts: a by_key all-to-all stream across 2, 3 and 4 hosts\n")
    print(f"Command: `{cmd}` (as root; {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, {took:.0f} s). "
          f"Load average {load_before} at the start; at each repetition's start: {'; '.join(loads)}; "
          f"{loadavg()} at the end. New benchmark: there is no earlier figure to compare with.\n")
    print(f"Hosts: N network namespaces on one bridge (10.78.0.1-{max(ns)}/24), a sluiced in each, `sluice run` in the "
          "first; KeyedSource (N copies) -> by_key -> KeyedSink (N copies), one copy of each per host; "
          f"{', '.join(f'{size_label(s)}: depth {DEPTH[s]}, {TOTAL[s]:,} buffers per measured unit' for s in sizes)} "
          "(the same total at every N). Every sink checked that it received exactly the buffers by_key sends it, "
          "in order, from every source. Time: first source start to last sink end of work, second unit of "
          "the deployment. Peer: N iperf3 pairs at once (host i to host i+1, the last to the first), "
          f"`iperf3 -l SIZE -t {a.iperf_seconds} -O 1`, received MB/s summed; for 100 B its buffers/s are its bytes "
          f"/ 100 (TCP merges iperf3's 100-byte writes). Medians of {a.reps} interleaved repetitions. "
          "All N hosts share the machine's 2 cores: the scaling columns show what more hosts cost, not what "
          "more machines would add.\n")
    for size in sizes:
        print(f"**{size_label(size)}**\n")
        print("| hosts | sluice buffers/s | sluice MB/s | of which across hosts | iperf3 MB/s (N pairs) | ratio "
              "(sluice / iperf3) | across-host ratio | sluice at N / at 2 | iperf3 at N / at 2 | other CPU |")
        print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        base = results[(ns[0], size)]
        for n in ns:
            r = results[(n, size)]
            s, p = r["sluice"], r["iperf"]
            cross = s["mb_s"] * (n - 1) / n
            print(f"| {n} | {fmt(s['buffers_s'])} | {s['mb_s']:.0f} | {cross:.0f} | {p['mb_s']:.0f} "
                  f"| **{s['mb_s'] / p['mb_s']:.2f}** | {cross / p['mb_s']:.2f} "
                  f"| {s['mb_s'] / base['sluice']['mb_s']:.2f} | {p['mb_s'] / base['iperf']['mb_s']:.2f} "
                  f"| {100 * max(s['other_cpu'], p['other_cpu']):.0f} % |")
        print()
        print("Per repetition, sluice / iperf3 MB/s: " + "; ".join(
            f"N={n}: " + ", ".join(f"{x['mb_s']:.0f}/{y['mb_s']:.0f}" for x, y in
                                   zip(samples[(n, size, 'sluice')], samples[(n, size, 'iperf')])) for n in ns) + ".\n")
    print("**What each host holds** (app daemon per host: peak VmRSS and threads, established data connections, "
          "its busiest thread's and its own CPU during the measured unit, sampled from /proc every 0.25 s; "
          "medians over hosts and repetitions):\n")
    print("| hosts | size | app daemon RSS MiB | threads | data connections | busiest thread, % of a core "
          "| app daemon, % of a core | console RSS MiB | console threads |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in ns:
        for size in sizes:
            runs = samples[(n, size, "sluice")]
            peaks = [p for x in runs for p in x["peak"].values()]
            busiest = [100 * c[0] for x in runs for c in x["cpu"].values()]
            whole = [100 * c[1] for x in runs for c in x["cpu"].values()]
            print(f"| {n} | {size_label(size)} | {med([p['rss_kib'] for p in peaks]) / 1024:.1f} "
                  f"| {med([p['threads'] for p in peaks]):.0f} | {med([p['conns'] for p in peaks]):.0f} "
                  f"| {med(busiest):.0f} | {med(whole):.0f} "
                  f"| {med([x['console']['rss_kib'] for x in runs]) / 1024:.1f} "
                  f"| {med([x['console']['threads'] for x in runs]):.0f} |")
    print()
    if barrier:
        print(f"**The console's barrier per unit of work** (units that move nothing, median of {a.barrier_units} "
              f"per deployment, then of the {a.reps} repetitions): " +
              ", ".join(f"{n} hosts {med(barrier[n]):.2f} ms" for n in ns) + ".\n")
    if plot(results, ns, sizes, a.png):
        print(f"![](four_hosts.png)\n\n(plot: `bench/{os.path.basename(a.png)}`; aggregate MB/s per N, sluice "
              "solid, the part of it that crosses hosts dashed, iperf3's pairs summed; labels: sluice buffers/s)\n")


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        log("four_hosts: interrupted; cleaned up")
        sys.exit(130)
    except Exception as e:
        log(f"four_hosts: {e}")
        sys.exit(1)
