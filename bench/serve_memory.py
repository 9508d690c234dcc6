#!/usr/bin/env python3
"""A long-lived `sluice serve` across two host daemons: what each failed unit leaves behind.

Each failed unit retires its deployment and keeps its results pool's bookkeeping (a few KiB,
docs/application.md); the next unit deploys afresh. This measures serve's resident memory
(VmRSS) after 5 units and after --units, for units that fail (the stage throws) and, side by
side in a serve of its own, units that finish: KiB of RSS gained per unit between the two.

    bench/serve_memory.py --build build [--units 200] [--java-embedded]

--java-embedded: the same units through a serve of its own, embedded (no host daemons), with a
Java forward between the source and the stage (the Java bridge keeps per-block records, and
each deployment its own Java threads).
"""
import argparse
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemons"))
import harness  # noqa: E402  (sluiced processes, tokens, cleanup)


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        return int(re.search(r"VmRSS:\s+(\d+)", f.read()).group(1))


def serve_rss(h, topology, hosts, work, units):  # hosts: () for an embedded serve
    """serve's RSS in KiB after 5 units and after `units`, each `work` submitted in turn."""
    log = os.path.join(h.dir, f"serve-{work.split()[-1]}.log")
    with open(log, "w") as out:
        placed = ["--hosts", ",".join(f"{d.name}={d.address}" for d in hosts)] if hosts else []
        serve = subprocess.Popen([h.console, "serve", topology, "--listen", "127.0.0.1:0", "--token-file", h.token]
                                 + placed,
                                 stdout=out, stderr=subprocess.STDOUT)
    try:
        harness.wait_until(lambda: re.search(r" at (127\.0\.0\.1:\d+)", open(log).read()), 60, "serve to listen")
        address = re.search(r" at (127\.0\.0\.1:\d+)", open(log).read()).group(1)
        samples = {}
        for i in range(1, units + 1):
            subprocess.run([h.console, "submit", address, "--work", work, "--token-file", h.token],
                           capture_output=True, timeout=120)
            if i in (5, units):
                samples[i] = rss_kib(serve.pid)
        subprocess.run([h.console, "stop", address, "--token-file", h.token], capture_output=True, timeout=60)
        serve.wait(timeout=60)
        return samples[5], samples[units]
    finally:
        if serve.poll() is None:
            serve.kill()
            serve.wait()


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--build", default="build")
    p.add_argument("--units", type=int, default=200)
    p.add_argument("--java-embedded", action="store_true")
    args = p.parse_args()
    with harness.Harness(args.build, os.path.join(HERE, ".."), prefix="sluice-serve-memory-") as h:
        a, b = h.start("a"), h.start("b")
        lib = os.path.join(h.build, "application", "libsluice_app_filters.so")
        topology = h.topology("serve-memory.yaml", "name: serve-memory\nfilters:\n"
                              f"  src:   {{class: AppSource, library: {lib}, copies: 2}}\n"
                              f"  stage: {{class: AppStage, library: {lib}}}\n"
                              "streams:\n"
                              "  - {from: src.out, to: stage.in, depth: 4, buffer_size: 64KiB}\n"
                              "  - {from: stage.out, to: client, depth: 16, buffer_size: 64KiB}\n")
        hosts = (a, b)
        if args.java_embedded:
            jar = os.path.join(h.build, "bench", "java_bench_filters.jar")
            topology = h.topology("serve-memory-java.yaml", "name: serve-memory-java\nfilters:\n"
                                  f"  src:   {{class: AppSource, library: {lib}, copies: 2}}\n"
                                  f"  mid:   {{lang: java, class: org.sluice.bench.Forward, classpath: [{jar}]}}\n"
                                  f"  stage: {{class: AppStage, library: {lib}}}\n"
                                  "streams:\n"
                                  "  - {from: src.out, to: mid.in, depth: 4, buffer_size: 64KiB}\n"
                                  "  - {from: mid.out, to: stage.in, depth: 4, buffer_size: 64KiB}\n"
                                  "  - {from: stage.out, to: client, depth: 16, buffer_size: 64KiB}\n")
            hosts = ()
        rows = [(what, *serve_rss(h, topology, hosts, work, args.units))
                for what, work in (("failed (`count=20 fail=stage`)", "count=20 fail=stage"),
                                   ("finished (`count=20`)", "count=20"))]
        print("## A long-lived serve: resident memory per failed unit\n")
        where = ("embedded (a Java forward between src and stage" if args.java_embedded else
                 "across two host daemons on this machine (src copies on both")
        print(f"`bench/serve_memory.py --build {args.build} --units {args.units}"
              f"{' --java-embedded' if args.java_embedded else ''}`: `sluice serve` {where}, results 64 KiB x 16 "
              f"to the client), {args.units} units submitted one after another; serve's VmRSS after the 5th and "
              "the last.\n")
        print("| units | RSS after 5 | after the last | KiB per unit |")
        print("|---|---:|---:|---:|")
        for what, first, last in rows:
            print(f"| {what} | {first / 1024:.1f} MiB | {last / 1024:.1f} MiB | {(last - first) / (args.units - 5):.1f} |")
        print()


if __name__ == "__main__":
    main()
