#!/usr/bin/env python3
"""Draws `make bench`'s tables as plots, next to them.

    plots.py RESULTS_MD OUT_DIR

Reads the Markdown that bench/run.sh printed (bench/out/local.md) and writes, when the
tables are there:
  OUT_DIR/local.png   local C++ -> C++ msg/s and MB/s vs ZeroMQ inproc, by buffer size
                      (quiet, and under two CPU hogs when that table is there);
  OUT_DIR/remote.png  remote C++ -> C++ over loopback (and veth) as ratios to iperf3,
                      ZeroMQ tcp and sockperf, with each bar's line;
  OUT_DIR/java.png    ns per buffer of a C++ and a Java forwarding filter, by size;
  OUT_DIR/shapes.png  more copies than cores (graph_bench): each pipeline shape's buffers/s
                      as a ratio to the pair's, quiet and under CPU hogs, and the whole mixed
                      graph across two daemons as a ratio to embedded, each with its bar;
                      beside it, when flink_peer.py's tables are there, each shape's
                      sluice / Flink records/s.
Also reads bench/RESULTS.md itself (its remote and Java tables keep the headings the
benchmarks print, with "→" for "->"): that is how bench/plot_remote.png was drawn.
Prints a Markdown line per plot written (run.sh appends it to the results). Needs
matplotlib (Debian's python3-matplotlib, as bench/seed_table.py).
"""
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402

SI = {"": 1, "k": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
SIZES = {"B": 1, "KiB": 1024, "MiB": 1024 * 1024}


def number(text):
    """'16.16M' -> 16160000.0, '**2.71x**' -> 2.71, '+121' -> 121.0; None when not a number."""
    m = re.match(r"^\**([+-]?[0-9.]+)\s*([kMGT]?)x?\**", text.strip())
    return float(m.group(1)) * SI[m.group(2)] if m else None


def size(text):
    m = re.match(r"^([0-9.]+)\s*([KM]?i?B)$", text.strip())
    return float(m.group(1)) * SIZES[m.group(2)] if m else None


def sections(text):
    """[(heading, [rows of cells])] for every table, under the nearest heading."""
    out, heading, rows = [], "", None
    for line in text.splitlines():
        if line.startswith("#"):
            heading = line.lstrip("#").strip()
            continue
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if rows is None:
                rows = [cells]
                out.append((heading, rows))
            elif not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        else:
            rows = None
    return out


def local_plot(tables, out_dir):
    local = [(h, rows) for h, rows in tables if h.startswith("Local C++ -> C++ stream vs ZeroMQ")]
    if not local:
        return None
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for heading, rows in local:
        tag = " (2 hogs)" if "hogs" in heading else ""
        style = "--" if tag else "-"
        data = [r for r in rows[1:] if size(r[0])]
        x = [size(r[0]) for r in data]
        axes[0].plot(x, [number(r[1]) for r in data], "o" + style, color="C0", label="sluice" + tag)
        axes[0].plot(x, [number(r[2]) for r in data], "s" + style, color="C1", label="ZeroMQ inproc_thr" + tag)
        axes[0].plot(x, [number(r[3]) for r in data], "^" + style, color="C2", label="ZeroMQ zmq_send" + tag)
        axes[1].plot(x, [number(r[5]) for r in data], "o" + style, color="C0", label="sluice" + tag)
        axes[1].plot(x, [number(r[6]) for r in data], "s" + style, color="C1", label="best ZeroMQ" + tag)
    for ax, what in zip(axes, ["messages/s", "MB/s"]):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("buffer size, bytes")
        ax.set_ylabel(what)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle("Local C++ -> C++ stream vs ZeroMQ inproc PUSH/PULL")
    fig.tight_layout()
    path = os.path.join(out_dir, "local.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def peer_of(cell):
    """'4263 (iperf3 -l 64K, single stream)' -> 'iperf3'; 'ZeroMQ 4.3.4 tcp' -> 'ZeroMQ'."""
    m = re.search(r"\((\S+)", cell)
    return m.group(1).rstrip(",") if m else "peer"


def remote_plot(tables, out_dir):
    # The comparison tables (their last column is the bar), not the encryption one below them.
    # Headings as net_bench prints them ("Remote C++ -> C++ stream over loopback ...") or as
    # bench/RESULTS.md keeps them ("Remote C++ → C++ over loopback").
    remote = [(h, rows) for h, rows in tables
              if re.match(r"Remote C\+\+ (->|→) C\+\+", h) and rows[0][-1] == "bar"]
    if not remote:
        return None
    labels, series = [], []  # x labels in first-seen order; (where, {label: (ratio, bar)})
    for heading, rows in remote:
        where = "veth pair" if "veth" in heading else "loopback"
        points = {}
        for r in rows[1:]:
            if len(r) < 5 or number(r[3]) is None:
                continue
            label = r[0].replace(", us", ", µs").replace(", MB/s", " MB/s") + "\nvs " + peer_of(r[2])
            points[label] = (number(r[3]), number(r[4].replace(">=", "").replace("<=", "")))
            if label not in labels:
                labels.append(label)
        series.append((where, points))
    fig, ax = plt.subplots(figsize=(10, 4.6))
    width = 0.8 / len(series)
    for i, (where, points) in enumerate(series):
        xs = [j + i * width for j, label in enumerate(labels) if label in points]
        ys = [points[label][0] for label in labels if label in points]
        bars = ax.bar(xs, ys, width, label=where)
        ax.bar_label(bars, fmt="%.2f", fontsize=7)
        for x, label in zip(xs, [label for label in labels if label in points]):
            bar = points[label][1]
            if bar is not None:
                ax.hlines(bar, x - width / 2, x + width / 2, colors="k", linestyles="dotted")
    ax.set_xticks([j + width * (len(series) - 1) / 2 for j in range(len(labels))])
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylabel("sluice / peer")
    ax.set_title("Remote C++ -> C++ stream: ratio to the peer (dotted: the bar; "
                 "throughput higher is better, round trip lower)", fontsize=9)
    ax.legend()
    ax.grid(True, axis="y", alpha=0.3)
    fig.tight_layout()
    path = os.path.join(out_dir, "remote.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def java_plot(tables, out_dir):
    java = [rows for h, rows in tables if h.startswith("A forwarding filter between a C++ source and a C++ sink")]
    if not java:
        return None
    data = [r for r in java[0][1:] if size(r[0])]
    x = [size(r[0]) for r in data]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(x, [number(r[1]) for r in data], "o-", label="C++ forward")
    ax.plot(x, [number(r[2]) for r in data], "s-", label="Java forward")
    ax.plot(x, [number(r[3]) for r in data], "^:", label="Java adds (bar: <= 200 ns)")
    ax.axhline(200, color="k", linestyle="dotted", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("buffer size, bytes")
    ax.set_ylabel("ns per buffer")
    ax.set_title("Java overhead: a forwarding filter between C++ copies")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    path = os.path.join(out_dir, "java.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


# graph_bench's shapes that have a bar, and the bar (ratio to the pair in the same run).
SHAPE_BARS = {"3-stage chain": 0.8, "5-stage chain": 0.8, "4+4 copies": 0.5, "keyed shuffle 2 -> 2": 0.8}


def flink_panel(ax, flink_runs):
    """sluice / Flink records/s per shape (bench/flink_peer.py), quiet and under hogs: the aim
    is above 1 on every shape."""
    labels = [r[0] for r in flink_runs[0][1][1:] if len(r) > 3]
    width = 0.8 / len(flink_runs)
    for i, (heading, rows) in enumerate(flink_runs):
        ratio = {r[0]: number(r[3]) for r in rows[1:] if len(r) > 3}
        hogs = re.search(r"(\d+) CPU hogs", heading)
        name = "under %s CPU hogs" % hogs.group(1) if hogs else "quiet"
        xs = [k + (i - (len(flink_runs) - 1) / 2) * width for k in range(len(labels))]
        ax.bar(xs, [ratio.get(label) or 0 for label in labels], width, label=name)
    ax.axhline(1.0, color="k", linestyle="--", linewidth=1)
    ax.set_yscale("log")
    ax.set_yticks([0.25, 0.5, 1, 2, 4, 8])
    ax.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: "%g" % v))
    ax.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels([label.replace(" chain", "\nchain").replace(" shuffle ", "\nshuffle ") for label in labels],
                       fontsize=8)
    ax.set_ylabel("sluice / Flink records/s (dashes: level)")
    ax.set_title("Beside a warm Apache Flink 1.20 (operator chaining)")
    ax.grid(True, axis="y", which="both", alpha=0.3)
    ax.legend(fontsize=8)


def shapes_plot(tables, out_dir):
    runs = [(h, rows) for h, rows in tables if h.startswith("More copies than cores: pipeline shapes")]
    whole = [rows for h, rows in tables if h.startswith("A whole mixed graph at 100 B")]
    flink = [(h, rows) for h, rows in tables
             if h.startswith("Beside Apache Flink") and rows and rows[0][:1] == ["shape"]]
    if not runs:
        return None
    labels = list(SHAPE_BARS)
    if flink:
        fig, (ax, flink_ax) = plt.subplots(1, 2, figsize=(14, 5.2), gridspec_kw={"width_ratios": [3, 2]})
        flink_panel(flink_ax, flink)
    else:
        fig, ax = plt.subplots(figsize=(8, 4.8))
    width = 0.8 / (len(runs) + (1 if whole else 0))
    for i, (heading, rows) in enumerate(runs):
        ratio = {r[0]: number(r[2]) for r in rows[1:] if len(r) > 2}
        hogs = re.search(r"(\d+) CPU hogs", heading)
        name = "under %s CPU hogs" % hogs.group(1) if hogs else "quiet"
        layout = re.search(r"SLUICE_LAYOUT=(\w+)", heading)
        if layout:
            name += ", " + layout.group(1)
        xs = [k + (i - (len(runs) - 1) / 2) * width for k in range(len(labels))]
        ax.bar(xs, [ratio.get(label) or 0 for label in labels], width, label="graph_bench, " + name)
    names, bars = labels[:], list(SHAPE_BARS.values())
    across = [number(r[2]) for r in whole[0][1:] if r[0].startswith("two daemons")] if whole else []
    if across and across[0] is not None:
        names.append("whole graph across\ntwo daemons (vs embedded)")
        bars.append(0.5)
        ax.bar([len(labels)], across[:1], width, color="tab:gray", label="whole_graph.py")
    for k, bar in enumerate(bars):
        ax.plot([k - 0.45, k + 0.45], [bar, bar], "k--", linewidth=1)
    ax.set_xticks(range(len(names)))
    ax.set_xticklabels(names, fontsize=8)
    ax.set_ylabel("buffers/s, ratio to the pair (dashes: the bar)")
    ax.set_title("More copies than cores, 100 B, 2 cores")
    ax.set_ylim(0, max([1.0] + [b.get_height() for b in ax.patches]) * 1.08)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, loc="upper center", bbox_to_anchor=(0.5, -0.16), ncol=3)
    fig.tight_layout()
    path = os.path.join(out_dir, "shapes.png")
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: plots.py RESULTS_MD OUT_DIR")
    with open(sys.argv[1]) as f:
        tables = sections(f.read())
    os.makedirs(sys.argv[2], exist_ok=True)
    drawn = [p for p in (local_plot(tables, sys.argv[2]), remote_plot(tables, sys.argv[2]),
                         java_plot(tables, sys.argv[2]), shapes_plot(tables, sys.argv[2])) if p]
    if not drawn:
        sys.exit("plots.py: no local, remote, Java or pipeline-shape table in " + sys.argv[1])
    print("## Plots\n")
    for p in drawn:
        print("![%s](%s)\n" % (os.path.basename(p)[:-4], os.path.basename(p)))


if __name__ == "__main__":
    main()
