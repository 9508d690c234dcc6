#!/usr/bin/env python3
"""Streams across hosts (the data plane): producer and consumer copies on both
hosts, each policy, three units, more than a million buffers per policy, every buffer
checked for order and checksum per producer-consumer pair; a chain that crosses twice;
a remote exception and a killed app daemon while streams cross.

  cross_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import signal
import socket
import struct
import subprocess
import time
import urllib.request

from harness import check, main, received

PER_PRODUCER = int(os.environ.get("SLUICE_CROSS_COUNT", "170000"))  # x 2 producers x 3 units > 1M


def test(h):
    a = h.start("a")
    b = h.start("b")
    for policy in ["round_robin", "demand_driven", "by_key", "broadcast"]:
        topo = h.topology(f"{policy}.yaml", f"""name: cross-{policy}
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 64B, count: {PER_PRODUCER}}}, place: {{a: 1, b: 1}}}}
  c: {{class: Consume, library: LIB, place: {{a: 1, b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 64B, depth: 64, policy: {policy}}}
work: [one, two, three]
""")
        mark = (len(a.text()), len(b.text()))
        start = time.time()
        status, out, err, _ = h.run("run", topo, "--no-progress", timeout=600)
        check(status == 0 and "units of work: 3/3 finished" in err, f"{policy}: three units across hosts", err)
        produced = 2 * PER_PRODUCER * 3
        got_a, ver_a = received(a.text()[mark[0]:])
        got_b, ver_b = received(b.text()[mark[1]:])
        want = produced * (2 if policy == "broadcast" else 1)
        check(got_a + got_b == want and ver_a + ver_b == want,
              f"{policy}: {want} buffers received and verified in order ({got_a} on a, {got_b} on b, "
              f"{time.time() - start:.1f} s)", a.text()[mark[0]:][-2000:], b.text()[mark[1]:][-2000:])
        if policy != "broadcast":
            check(got_a > 0 and got_b > 0, f"{policy}: both hosts' consumers got buffers")
        check(re.search(rf"p\.out -> c\.in\s+{produced}\s", err), f"{policy}: summary counts every buffer", err)

    # A chain that crosses twice: a -> b -> a.
    chain = h.topology("chain.yaml", f"""name: chain
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 4KiB, count: 100000}}, place: {{a: 1}}}}
  f: {{class: Forward, library: LIB, place: {{b: 1}}}}
  c: {{class: Consume, library: LIB, place: {{a: 1}}}}
streams:
  - {{from: p.out, to: f.in, buffer_size: 4KiB}}
  - {{from: f.out, to: c.in, buffer_size: 4KiB}}
""")
    status, out, err, _ = h.run("run", chain, "--no-progress", timeout=300)
    check(status == 0 and "received 100000 buffers, 409600000 bytes; 100000 verified in order" in a.text(),
          "a chain a -> b -> a delivers every buffer in order", err)

    # `to: client` in a plain run across hosts: the console joins the data plane as the
    # client and counts what arrives (a submitting program would read it).
    to_client = h.topology("to_client.yaml", f"""name: to-client
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 5000}}, copies: 2}}
  f: {{class: Forward, library: LIB, place: {{b: 1}}}}
streams:
  - {{from: p.out, to: f.in, buffer_size: 1KiB}}
  - {{from: f.out, to: client, buffer_size: 1KiB}}
work: [one, two]
""")
    console, _, err_file = h.start_console("run", to_client, "--ui", "127.0.0.1:0", "--ui-linger", "120")
    final = None
    ahead = []
    try:
        def ended():
            nonlocal final
            err_file.seek(0)
            m = re.search(r"watching the run at (http://\S+/)", err_file.read())
            if m is None:
                return console.poll() is not None
            with urllib.request.urlopen(m.group(1) + "api/status", timeout=30) as r:
                final = json.loads(r.read())
            # The console's reads are live, the hosts' counts come twice a second: never
            # more read than written on the view.
            ahead.extend(st for st in final["streams"] if st["consumed"] > st["buffers"])
            return final["ended"]
        h.wait_for(ended, 300, "the run to end, its final state lingering on --ui")
    finally:
        console.send_signal(signal.SIGINT)  # ends the linger
        console.wait(30)
    err_file.seek(0)
    err = err_file.read()
    check(final and final["status"] == "ok" and re.search(r"f\.out -> client\s+20000\s", err),
          "sluice run across hosts: the to: client stream reaches the console (2 units x 2 x 5000)", err)
    # The hosts report only their producers' share of it; the console adds what it read.
    client_row = [st for st in final["streams"] if st["to"] == "client"]
    check(len(client_row) == 1 and client_row[0]["buffers"] == 20000 and client_row[0]["consumed"] == 20000,
          "--ui across hosts: the to: client stream's buffers consumed by the console are counted", client_row)
    check(not ahead, "--ui across hosts: no sample shows more consumed than written", ahead[:3])

    # The head-of-line reproducer: on b, fwd -> fwd2 forward srcx's buffers (so they stay
    # in that stream's pool) into join.in1, which join reads only after in2 ends; srcz's
    # buffers to in2 share the a -> b connection. It used to hang once srcx's pool on b
    # was all in fwd2's queue; it must finish, as it does embedded.
    graph_lib = os.path.join(h.build, "core-cpp", "tests", "libsluice_graph_filters.so")
    report = os.path.join(h.dir, "hol-report")
    os.mkdir(report)
    hol = h.topology("hol.yaml", f"""name: head-of-line
defaults: {{buffer_size: 1KiB, depth: 4}}
{h.hosts_yaml(a, b)}filters:
  srcx: {{class: GSource, library: {graph_lib}, args: {{count: 200, report: {report}}}, place: {{a: 1}}}}
  srcz: {{class: GSource, library: {graph_lib}, args: {{count: 2000, report: {report}}}, place: {{a: 1}}}}
  fwd:  {{class: GMix, library: {graph_lib}, args: {{order: in, outputs: out, report: {report}}}, place: {{b: 1}}}}
  fwd2: {{class: GMix, library: {graph_lib}, args: {{order: in, outputs: out, report: {report}}}, place: {{b: 1}}}}
  join: {{class: GMix, library: {graph_lib}, args: {{order: "in2,in1", report: {report}}}, place: {{b: 1}}}}
streams:
  - {{from: srcx.out, to: fwd.in}}
  - {{from: fwd.out, to: fwd2.in}}
  - {{from: fwd2.out, to: join.in1}}
  - {{from: srcz.out, to: join.in2}}
work: [first, second]
""")
    status, out, err, secs = h.run("run", hol, "--no-progress", timeout=120)
    join = {}
    for unit in (0, 1):
        with open(os.path.join(report, f"join.0.{unit}")) as f:
            for line in f:
                port, buffers, _ = line.split()
                join[port] = join.get(port, 0) + int(buffers)
    check(status == 0 and join == {"in1": 400, "in2": 4000},
          f"head-of-line reproducer across two daemons finishes with every buffer ({secs:.1f} s): {join}", err)

    # Two copies on one host feeding one consumer copy on another, which reads jy to its end
    # before jx: embedded each copy has a lane of depth 4 in jx's queue, and the graph finishes
    # (up to 12 buffers here; at 14 it cannot, embedded or not). Across hosts the two copies
    # shared one credit window of 4, which one copy's buffers and end of work filled: the
    # other copy waited on jx and never ended jy, a hang at 4 buffers (an outside review). A
    # host's window is now one copy's for each of its copies.
    join_report = os.path.join(h.dir, "join-report")
    os.mkdir(join_report)
    shared = h.topology("shared-window.yaml", f"""name: shared-window
defaults: {{buffer_size: 1MiB, depth: 4}}
{h.hosts_yaml(a, b)}filters:
  s:  {{class: GSource, library: {graph_lib}, args: {{count: 12}}, place: {{a: 1}}}}
  sp: {{class: GMix, library: {graph_lib}, args: {{order: in, outputs: "x,y", copy: true}}, place: {{a: 2}}}}
  j:  {{class: GMix, library: {graph_lib}, args: {{order: "jy,jx", report: {join_report}}}, place: {{b: 1}}}}
streams:
  - {{from: s.out, to: sp.in}}
  - {{from: sp.x, to: j.jx}}
  - {{from: sp.y, to: j.jy}}
""")
    status, out, err, secs = h.run("run", shared, "--no-progress", "--stall-timeout", "10", timeout=120)
    joined = {}
    if status == 0:
        with open(os.path.join(join_report, "j.0.0")) as f:
            for line in f:
                port, buffers, _ = line.split()
                joined[port] = int(buffers)
    check(status == 0 and sum(joined.values()) == 12 and set(joined) == {"jx", "jy"},
          f"two copies on one host share no credit window: the join finishes as it does embedded ({secs:.1f} s): "
          f"{joined}", err)

    # Hostile bytes at every app daemon's data port mid-run: refused, the run goes on.
    steady = h.topology("steady.yaml", f"""name: steady
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 300000}}, place: {{a: 1, b: 1}}}}
  c: {{class: Consume, library: LIB, place: {{a: 1, b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
work: [one, two, three]
""")
    ports_before = len(a.data_ports()) + len(b.data_ports())
    p, out, err = h.start_console("run", steady)
    h.wait_for(lambda: len(a.data_ports()) + len(b.data_ports()) >= ports_before + 2, 15, "the data ports")
    time.sleep(0.5)
    ports = a.data_ports()[-1:] + b.data_ports()[-1:]
    for port in ports:
        for data in [os.urandom(2048), struct.pack("<I", 0xFFFFFFFF) * 8, b"\x00" * 3]:
            try:
                s = socket.create_connection(("127.0.0.1", port), timeout=3)
                s.sendall(data)
                s.settimeout(3)
                try:
                    s.recv(100)
                except (socket.timeout, ConnectionResetError):
                    pass
                s.close()
            except OSError:
                pass  # refused is fine too
    p.wait(300)
    err.seek(0)
    text = err.read()
    check(p.returncode == 0 and "units of work: 3/3 finished" in text,
          f"hostile bytes at the data ports {ports} mid-run: refused, the run finishes", text)
    check(re.search(r"^\d{4}-\d\d-\d\dT[0-9:.]+Z sluice-appd\([ab]\)\[\d+\] \[warn\] sluice data plane \([ab]\): "
                    r"refused connection from 127\.0\.0\.1:", a.text() + b.text(), re.M),
          "the data plane logs the refusals as the app daemon's lines, with a time", (a.text() + b.text())[-3000:])

    # A remote exception while streams cross.
    throw = h.topology("throw.yaml", f"""name: throw
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 100000}}, place: {{a: 1}}}}
  c: {{class: Consume, library: LIB, place: {{b: 1}}}}
  q: {{class: Produce, library: LIB, args: {{size: 2KiB}}, place: {{b: 1}}}}
  d: {{class: Consume, library: LIB, place: {{a: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
  - {{from: q.out, to: d.in, buffer_size: 1KiB}}
""")
    start = time.time()
    status, out, err, secs = h.run("run", throw, "--no-progress", timeout=60)
    check(status == 1 and "run failed: filter 'q' copy 0 on host b failed in process (unit of work 0): args.size 2048" in err
          and secs < 5, f"a remote exception across hosts is named with its host ({secs:.2f} s)", err)
    # Host a was still running when b failed: its answer to the abort carries its last counts,
    # final, so the summary does not call them a lower bound (an outside review saw a healthy
    # host listed as "(at least: no final counts came from host a ...)").
    check("(at least:" not in err, "a healthy host's counts, sent in answer to the abort, are not called partial", err)
    h.no_orphans(a.app_pids() + b.app_pids(), "after a remote exception across hosts")

    # A filter on b writes 3000 buffers to a, then throws, before b ever sends progress: the
    # failed run's summary counts b's 3000, not 0 (b's failure carries its counts).
    daemon_lib = os.path.join(h.build, "tests", "daemons", "libsluice_daemon_filters.so")
    fail = h.topology("fail.yaml", f"""name: fail
{h.hosts_yaml(a, b)}filters:
  f: {{class: Fail, library: {daemon_lib}, args: {{count: 3000}}, place: {{b: 1}}}}
  d: {{class: Consume, library: LIB, args: {{verify: false}}, place: {{a: 1}}}}
streams:
  - {{from: f.out, to: d.in, buffer_size: 1KiB}}
""")
    status, out, err, secs = h.run("run", fail, "--no-progress", timeout=60)
    check(status == 1 and "filter 'f' copy 0 on host b failed in process (unit of work 0): failing as asked after "
          "3000 buffers" in err, "a filter on b that fails after 3000 buffers is named", err)
    check(re.search(r"f\.out -> d\.in\s+3000\s+3\.1\s", err),
          "the failed run's summary counts the 3000 buffers the failing host wrote", err)
    # The same failure with a to: client stream: the console's own end of the data plane
    # stops before the hosts go, so it does not log their going as a lost connection (an
    # [error] line printed before the real cause).
    to_client_fail = h.topology("fail_client.yaml", f"""name: fail-client
{h.hosts_yaml(a, b)}filters:
  f: {{class: Fail, library: {daemon_lib}, args: {{count: 1000}}, place: {{b: 1}}}}
  w: {{class: Forward, library: LIB, place: {{a: 1}}}}
streams:
  - {{from: f.out, to: w.in, buffer_size: 1KiB}}
  - {{from: w.out, to: client, buffer_size: 1KiB}}
""")
    for attempt in range(3):
        status, out, err, secs = h.run("run", to_client_fail, "--no-progress", timeout=60)
        check(status == 1 and "filter 'f' copy 0 on host b failed in process (unit of work 0)" in err
              and "sluice data plane (client)" not in err and "[error]" not in err,
              f"a failed run with a to: client stream names its cause and nothing else (try {attempt + 1})", err)
    # A message larger than a control frame may carry (16 MiB): cut, the failure still named.
    huge = h.topology("huge.yaml", open(fail).read().replace("count: 3000}", "count: 3, pad: 20000000}"))
    status, out, err, secs = h.run("run", huge, "--no-progress", timeout=60)
    check(status == 1 and "filter 'f' copy 0 on host b failed in process (unit of work 0): failing as asked after "
          "3 buffersxxx" in err and re.search(r"\n *\.\.\. \(200000\d\d bytes in all: cut to 64 KiB\)", err) and len(err) < 256 << 10,
          "a failure message of 20 MB across hosts: named, cut to 64 KiB", err[:300], err[-300:])

    # A payload that is not UTF-8 (a payload is any bytes): it reaches both hosts, the unit
    # finishes, and a failure message that carries it comes back whole. A text field of the
    # control protocol refused such bytes: the frame was unreadable, and the run failed as
    # "sluiced died or the host went away" while both daemons were fine.
    r = subprocess.run([h.console, "run", steady, "--no-progress", "--token-file", h.token, "--work", b"caf\xe9 \xff\xfe"],
                       capture_output=True, timeout=300)
    check(r.returncode == 0 and b"units of work: 1/1 finished" in r.stderr,
          "a payload that is not UTF-8 runs across hosts as it does in one process", r.stderr[-2000:])
    echo = h.topology("echo.yaml", open(fail).read().replace("count: 3000}", "count: 3, echo_work: true}"))
    r = subprocess.run([h.console, "run", echo, "--no-progress", "--token-file", h.token, "--work", b"caf\xe9 \xff\xfe"],
                       capture_output=True, timeout=60)
    # Whole, and printed with the bytes that are not UTF-8 escaped, as control characters are.
    check(r.returncode == 1 and b"failing as asked after 3 buffers for work caf\\xe9 \\xff\\xfe" in r.stderr
          and b"sluiced died" not in r.stderr,
          "a failure message with bytes that are not UTF-8 comes back from host b whole", r.stderr[-2000:])
    h.no_orphans(a.app_pids() + b.app_pids(), "after the payloads that are not UTF-8")

    # kill -9 an app daemon while streams cross: the app daemon is named, not its peer's
    # broken connection.
    long = h.topology("long.yaml", f"""name: long
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000000000}}, place: {{a: 1, b: 1}}}}
  c: {{class: Consume, library: LIB, place: {{a: 1, b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
""")
    before = len(b.app_pids())
    a_mark = len(a.text())
    p, out, err = h.start_console("run", long)
    h.wait_for(lambda: len(b.app_pids()) > before, 15, "the long run to launch")
    time.sleep(2.0)  # wired and well into the unit
    check(p.poll() is None, "the long run across hosts is running")
    victim = b.app_pids()[-1]
    os.kill(victim, signal.SIGKILL)
    killed = time.time()
    p.wait(10)
    took = time.time() - killed
    err.seek(0)
    text = err.read()
    check(p.returncode == 1 and took < 5, f"killed app daemon across hosts: exit 1 within 5 s ({took:.2f} s)", text)
    check(f"host b: the app daemon (sluice-appd pid {victim}) was killed by SIGKILL" in text,
          "killed app daemon across hosts: named precisely", text)
    lost = [l for l in a.text()[a_mark:].splitlines() if "data connection to host 'b'" in l and " lost" in l]
    # (None when the console's abort reached a first: the loss is a consequence.)
    check(len(lost) <= 1 and all("[warn] failure: " in l for l in lost),
          "host a's app daemon logs its lost connection to b at most once, as its failure (not also as a data "
          "plane error)", lost)
    h.no_orphans(a.app_pids() + b.app_pids(), "after killing an app daemon across hosts")


if __name__ == "__main__":
    main(test)
