#!/usr/bin/env python3
"""The seed's producer/consumer table, reproduced (DESIGN.md "Bars", issue 4 "Benchmark").

A producer on host a writes COUNT buffers of SIZE bytes to a consumer on host b; each filter
times its own stream calls (C++: steady_clock around OutputStream::write / InputStream::read,
bench/seed_filters.cc; Java: System.nanoTime, bench/java/org/sluice/bench/Seed*.java) and
appends a line to a report file. Producer and consumer in {C++, Java} x {C++, Java}, buffer
sizes 10, 100, 1000, 10000, 100000 bytes, interleaved (rep -> size -> pair), medians of REPS.

Hosts: two sluiced daemons, each in its own network namespace, joined by a veth pair
(10.77.1.1/24 and 10.77.1.2/24, only inside namespaces this script creates) when running as
root with `ip netns`; otherwise two sluiced on loopback ports. Every process, namespace and
veth this script creates is removed on the way out, also on failure or Ctrl-C.

Prints Markdown (our figures in microseconds beside the seed's in milliseconds) and writes a
log-log plot (matplotlib if installed, else gnuplot).

  bench/seed_table.py [--build build] [--reps 3] [--count 5000] [--mode auto|netns|loopback]
                      [--png bench/seed_table.png] [--sizes 10,100,...]
"""
import argparse
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemons"))
import harness  # noqa: E402  (the daemon tests' helpers: sluiced processes, tokens, cleanup)
SIZES = [10, 100, 1000, 10000, 100000]
PAIRS = [("cpp", "cpp"), ("cpp", "java"), ("java", "cpp"), ("java", "java")]
NAME = {"cpp": "C++", "java": "Java"}

# The seed's table (ms per buffer; Java's timer had a 1 ms grain, so 0 means "< 1 ms").
# (producer, consumer, size) -> ((write, read) hyena -> condor, (write, read) condor -> hyena)
SEED = {
    ("java", "java", 10): ((2, 3), (2, 2)), ("java", "cpp", 10): ((1, 1), (3, 0.5)),
    ("cpp", "java", 10): ((0.1, 3), (0.2, 2)), ("cpp", "cpp", 10): ((0.1, 1), (0.2, 0.07)),
    ("java", "java", 100): ((0, 1), (0, 1)), ("java", "cpp", 100): ((0, 0.1), (0, 0.06)),
    ("cpp", "java", 100): ((0.06, 1), (0.1, 0)), ("cpp", "cpp", 100): ((0.06, 0.1), (0.1, 0.06)),
    ("java", "java", 1000): ((1, 1), (1, 1)), ("java", "cpp", 1000): ((1, 0.1), (1, 0.06)),
    ("cpp", "java", 1000): ((0.07, 1), (0.1, 0)), ("cpp", "cpp", 1000): ((0.07, 0.01), (0.1, 0.06)),
    ("java", "java", 10000): ((1, 0), (1, 0)), ("java", "cpp", 10000): ((1, 0.1), (1, 0.06)),
    ("cpp", "java", 10000): ((0.2, 1), (0.5, 0)), ("cpp", "cpp", 10000): ((0.2, 0.2), (0.4, 0.06)),
    ("java", "java", 100000): ((11, 1), (11, 0)), ("java", "cpp", 100000): ((11, 0.1), (10, 0.06)),
    ("cpp", "java", 100000): ((12, 0), (10, 0)), ("cpp", "cpp", 100000): ((11, 0.2), (10, 0.06)),
}


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def ip(*args, check=True):
    p = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if check and p.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {p.stderr.strip()}")
    return p


class Hosts(harness.Harness):
    """Two sluiced daemons (in two namespaces joined by veth, or on loopback); a context
    manager that leaves nothing behind (harness.Harness stops the daemons, kills any app
    daemon left, runs self.cleanups last-in first-out and removes the directory)."""

    def __init__(self, build, mode):
        super().__init__(build, os.path.dirname(HERE), prefix="sluice-seed-")
        self.mode = mode
        self.ns = {}

    def __enter__(self):
        super().__enter__()
        try:
            self._setup()
        except BaseException:
            self.__exit__(*sys.exc_info())
            raise
        return self

    def _netns_possible(self):
        return (os.geteuid() == 0 and shutil.which("ip") is not None
                and ip("netns", "list", check=False).returncode == 0)

    def _setup(self):
        if self.mode == "auto":
            self.mode = "netns" if self._netns_possible() else "loopback"
        if self.mode == "netns":
            tag = f"sd{os.getpid() % 100000}"
            ns_a, ns_b, veth_a, veth_b = f"{tag}-a", f"{tag}-b", f"{tag}va", f"{tag}vb"
            # Deleting a namespace deletes the veth end inside it, and with it the pair.
            self.cleanups.append(lambda: ip("netns", "del", ns_a, check=False))
            self.cleanups.append(lambda: ip("netns", "del", ns_b, check=False))
            self.cleanups.append(lambda: ip("link", "del", veth_a, check=False))
            ip("netns", "add", ns_a)
            ip("netns", "add", ns_b)
            ip("link", "add", veth_a, "type", "veth", "peer", "name", veth_b)
            ip("link", "set", veth_a, "netns", ns_a)
            ip("link", "set", veth_b, "netns", ns_b)
            for ns, dev, addr in [(ns_a, veth_a, "10.77.1.1/24"), (ns_b, veth_b, "10.77.1.2/24")]:
                ip("-n", ns, "addr", "add", addr, "dev", dev)
                ip("-n", ns, "link", "set", dev, "up")
                ip("-n", ns, "link", "set", "lo", "up")
            self.ns = {"a": ns_a, "b": ns_b}
            self.address = {"a": self.start("a", "10.77.1.1:7700", netns=ns_a).address,
                            "b": self.start("b", "10.77.1.2:7700", netns=ns_b).address}
        else:
            self.address = {"a": self.start("a").address, "b": self.start("b").address}

    def run_topology(self, topology_path, timeout=300):
        """Runs `sluice run` on the topology (from host a's namespace); returns its stderr."""
        status, out, err, _ = self.run("run", topology_path, "--no-progress", timeout=timeout,
                                       netns=self.ns.get("a"))
        if status != 0:
            raise RuntimeError(f"sluice run failed ({status}):\n{out}\n{err}")
        return err


def filter_yaml(lang, role, build, args):
    cls = "SeedProducer" if role == "producer" else "SeedConsumer"
    if lang == "cpp":
        where = f"class: {cls}, library: {os.path.join(build, 'bench', 'libseed_filters.so')}"
    else:
        where = (f"lang: java, class: org.sluice.bench.{cls}, "
                 f"classpath: [{os.path.join(build, 'bench', 'java_bench_filters.jar')}]")
    return "{" + where + ", args: {" + ", ".join(f"{k}: {v}" for k, v in args.items()) + "}"


def one_run(hosts, build, prod, cons, size, count, depth):
    report = os.path.join(hosts.dir, "report.txt")
    if os.path.exists(report):
        os.unlink(report)
    topo = os.path.join(hosts.dir, "seed.yaml")
    with open(topo, "w") as f:
        f.write(f"""name: seed-{prod}-{cons}-{size}
hosts:
  a: {hosts.address['a']}
  b: {hosts.address['b']}
filters:
  p: {filter_yaml(prod, 'producer', build, {'size': size, 'count': count, 'report': report})}, place: {{a: 1}}}}
  c: {filter_yaml(cons, 'consumer', build, {'report': report})}, place: {{b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: {size}, depth: {depth}}}
""")
    hosts.run_topology(topo)
    got = {}
    for line in open(report):
        fields = dict(kv.split("=", 1) for kv in line.split()[1:])
        got[fields["role"]] = fields
    p, c = got["producer"], got["consumer"]
    if int(c["count"]) != count or int(p["count"]) != count or p["host"] != "a" or c["host"] != "b":
        raise RuntimeError(f"unexpected report: {got}")
    return {"write": float(p["rest_mean_ns"]), "read": float(c["rest_mean_ns"]),
            "write1": float(p["first_ns"]), "read1": float(c["first_ns"]),
            "write50": float(p["rest_p50_ns"]), "read50": float(c["rest_p50_ns"])}


def fmt_us(ns):
    us = ns / 1000
    return f"{us:.2f}" if us < 10 else f"{us:.1f}" if us < 100 else f"{us:.0f}"


def fmt_ms(v):
    return ("%g" % v)


def load():
    return open("/proc/loadavg").read().split()[:3]


def plot(results, sizes, png):
    series = []  # (label, kind, xs, ys_ms, ours)
    for prod, cons in PAIRS:
        label = f"{NAME[prod]}→{NAME[cons]}"
        for kind, k in (("write", 0), ("read", 1)):
            ours = [results[(prod, cons, s)][kind] / 1e6 for s in sizes]
            # The seed's two directions, averaged; 0 ms (below Java's 1 ms timer) cannot be drawn.
            seed = [(s, sum(d[k] for d in SEED[(prod, cons, s)]) / 2) for s in sizes]
            series.append((label, kind, list(sizes), ours, True))
            series.append((label, kind, [s for s, v in seed if v > 0], [v for s, v in seed if v > 0], False))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return plot_gnuplot(series, png)
    fig, axes = plt.subplots(1, 2, figsize=(13, 5.2), sharey=True)
    colors = {"C++→C++": "tab:blue", "C++→Java": "tab:orange", "Java→C++": "tab:green", "Java→Java": "tab:red"}
    for ax, kind in zip(axes, ("write", "read")):
        for label, k, xs, ys, ours in series:
            if k != kind or not xs:
                continue
            ax.plot(xs, ys, marker="o" if ours else "s", linestyle="-" if ours else "--", color=colors[label],
                    alpha=1.0 if ours else 0.55, label=f"{label} {'sluice' if ours else 'seed'}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("buffer size (bytes)")
        ax.set_title(f"{kind} time per buffer (2nd buffer on), producer→consumer")
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("ms per buffer (log)")
    axes[1].legend(fontsize=8, ncol=2, loc="upper left")
    fig.suptitle("The seed's producer/consumer experiment across two hosts: sluice (solid) vs the seed (dashed; "
                 "0 ms entries omitted)", fontsize=10)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    return "matplotlib"


def plot_gnuplot(series, png):
    if shutil.which("gnuplot") is None:
        log("no matplotlib and no gnuplot: no plot")
        return None
    with tempfile.TemporaryDirectory() as d:
        plots = {"write": [], "read": []}
        for i, (label, kind, xs, ys, ours) in enumerate(series):
            path = os.path.join(d, f"s{i}.dat")
            with open(path, "w") as f:
                f.writelines(f"{x} {y}\n" for x, y in zip(xs, ys))
            if xs:
                plots[kind].append(f"'{path}' using 1:2 with linespoints {'lw 2' if ours else 'dt 2'} "
                                   f"title '{label} {'sluice' if ours else 'seed'}'")
        script = (f"set terminal pngcairo size 1400,560\nset output '{png}'\nset multiplot layout 1,2\n"
                  "set logscale xy\nset xlabel 'buffer size (bytes)'\nset ylabel 'ms per buffer'\nset key left top\n"
                  f"set title 'write time per buffer'\nplot {', '.join(plots['write'])}\n"
                  f"set title 'read time per buffer'\nplot {', '.join(plots['read'])}\nunset multiplot\n")
        subprocess.run(["gnuplot"], input=script, text=True, check=True)
    return "gnuplot"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--count", type=int, default=5000)
    ap.add_argument("--depth", type=int, default=16)
    ap.add_argument("--mode", choices=["auto", "netns", "loopback"], default="auto")
    ap.add_argument("--png", default=os.path.join(HERE, "seed_table.png"))
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    a = ap.parse_args()
    sizes = [int(s) for s in a.sizes.split(",")]
    build = os.path.abspath(a.build)
    # A SIGTERM (make, CI) unwinds through the cleanups like Ctrl-C does.
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    samples = {}
    load_before = load()
    started = time.time()
    with Hosts(build, a.mode) as hosts:
        log(f"seed_table: hosts a={hosts.address['a']} b={hosts.address['b']} ({hosts.mode})")
        for rep in range(a.reps):
            for size in sizes:
                for prod, cons in PAIRS:
                    r = one_run(hosts, build, prod, cons, size, a.count, a.depth)
                    samples.setdefault((prod, cons, size), []).append(r)
                    log(f"rep {rep + 1}/{a.reps} {prod}->{cons} {size:>6} B: write {fmt_us(r['write'])} us, "
                        f"read {fmt_us(r['read'])} us (first {fmt_us(r['write1'])} / {fmt_us(r['read1'])} us)")
        mode, addr = hosts.mode, dict(hosts.address)
    took = time.time() - started
    results = {k: {m: statistics.median(x[m] for x in v) for m in ("write", "read", "write1", "read1", "write50", "read50")}
               for k, v in samples.items()}

    where = ("two network namespaces joined by a veth pair (10.77.1.1 and 10.77.1.2), one sluiced in each"
             if mode == "netns" else f"two sluiced on loopback ports ({addr['a']}, {addr['b']}) — not root, no veth")
    print("## The seed's producer/consumer table, across two hosts\n")
    print(f"Command: `bench/seed_table.py --reps {a.reps} --count {a.count}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
          f"load average {' '.join(load_before)} before, {' '.join(load())} after; {took:.0f} s).\n")
    print(f"Hosts: {where}. Producer on host a, consumer on host b, placed by `sluice run` through the "
          f"daemons; {a.count} buffers per run, stream depth {a.depth}, one unit of work per run (a fresh app "
          f"daemon, and for Java a fresh JVM, each run). Runs interleaved (rep → size → pair), medians of {a.reps}. "
          "Times are measured inside the filters around each `OutputStream.write` / `InputStream.read` call "
          "(C++ `steady_clock`, Java `System.nanoTime`), mean over buffers 2…N; the first buffer is in its own "
          "columns; the median of buffers 2…N, in brackets, is a typical call apart from the waits. The seed's figures are in **ms** for its two directions (hyena→condor / condor→hyena); "
          "its Java timer had a 1 ms grain, so its 0 means < 1 ms.\n")
    print("| size B | producer → consumer | write µs/buffer mean (median) | read µs/buffer mean (median) "
          "| seed write ms | seed read ms | seed/ours, mean write | 1st write µs | 1st read µs |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for size in sizes:
        for prod, cons in PAIRS:
            r = results[(prod, cons, size)]
            s = SEED[(prod, cons, size)]
            seed_w = sum(d[0] for d in s) / 2
            ratio = f"{seed_w * 1e6 / r['write']:,.0f}×" if seed_w > 0 and r["write"] > 0 else "–"
            print(f"| {size} | {NAME[prod]} → {NAME[cons]} | {fmt_us(r['write'])} ({fmt_us(r['write50'])}) "
                  f"| {fmt_us(r['read'])} ({fmt_us(r['read50'])}) "
                  f"| {fmt_ms(s[0][0])} / {fmt_ms(s[1][0])} | {fmt_ms(s[0][1])} / {fmt_ms(s[1][1])} | {ratio} "
                  f"| {fmt_us(r['write1'])} | {fmt_us(r['read1'])} |")
    tool = plot(results, sizes, a.png)
    if tool:
        print(f"\n![](seed_table.png)\n\n(plot: `{os.path.relpath(a.png, HERE)}`, drawn with {tool}; mean write and read per "
              "buffer in ms, log-log; the seed's dashed lines are the mean of its two directions, its 0 ms entries left out)")
    print()


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        log("seed_table: interrupted; cleaned up")
        sys.exit(130)
    except Exception as e:
        log(f"seed_table: {e}")
        sys.exit(1)
