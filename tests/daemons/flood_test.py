#!/usr/bin/env python3
"""Floods: a host daemon limited to 64 descriptors, held under 120 idle connections for 2 s,
first from 120 source addresses (it runs out of descriptors: the accept loop must back off,
not spin), then from one (the cap per address makes room for each by closing the oldest).
Each flood costs it under 0.5 s of CPU and under 200 KB of log, and a console connects and
runs once it ends. Then any local user's 8 idle sockets, each opened again as soon as it is
closed, do not keep a console out of its host daemon, nor a submitter out of sluice serve;
nor do 8 stalled handshakes renewed every 0.9 s, which kept every console out when a
handshake had to stall for 1 s before it made room (an outside review: 9 a second did).

  flood_test.py BUILD_DIR SOURCE_DIR
"""
import os
import re
import resource
import select
import socket
import subprocess
import threading
import time

from harness import check, main

CONNECTIONS = 120
HOLD_SECONDS = 2
DESCRIPTORS = 64


def cpu_seconds(pid):
    """utime + stime of pid, in seconds (/proc/PID/stat fields 14 and 15)."""
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def limit_descriptors():
    resource.setrlimit(resource.RLIMIT_NOFILE, (DESCRIPTORS, DESCRIPTORS))


def one_host(h, d):
    return h.topology("flood.yaml", f"""name: flood
hosts:
  a: {d.address}
filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000}}}}
  c: {{class: Consume, library: LIB}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
""")


def flood(h, d, topo, what, sources):
    cpu0, log0 = cpu_seconds(d.pid), os.path.getsize(d.log_path)
    socks = []
    try:
        for source in sources:
            s = socket.socket()
            s.bind((source, 0))
            s.connect(("127.0.0.1", d.port))
            socks.append(s)
        time.sleep(HOLD_SECONDS)
        cpu, log = cpu_seconds(d.pid) - cpu0, os.path.getsize(d.log_path) - log0
    finally:
        for s in socks:
            s.close()
    check(len(socks) == CONNECTIONS and d.serving(), f"{what}: {len(socks)} connections held for {HOLD_SECONDS} s")
    check(cpu < 0.5, f"{what}: sluiced used {cpu:.2f} s of CPU (< 0.5 s)")
    check(log < 200_000, f"{what}: sluiced wrote {log} bytes of log (< 200 KB)", d.text()[-3000:])
    status, out, err, _ = h.run("run", topo, "--no-progress")
    check(status == 0 and "units of work: 1/1 finished" in err, f"{what}: then a console connects and runs", err,
          d.text()[-3000:])
    return d.text()[log0:]


class Holder:
    """Holds `count` connections to `port` from 127.0.0.1, each sending `first_bytes` (nothing:
    idle; a TLS record's first bytes: a handshake begun and stalled) and opened again as soon
    as the server closes it, or once it is `renew` seconds old (the first ones staggered over
    that time): what any local user can do without the token."""

    def __init__(self, port, count=8, first_bytes=b"", renew=None):
        self.port, self.first_bytes, self.renew, self.renewed = port, first_bytes, renew, 0
        now = time.monotonic()
        self.socks = [self.begin() for _ in range(count)]
        self.born = [now - (renew or 0) * i / count for i in range(count)]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    def begin(self):
        s = socket.create_connection(("127.0.0.1", self.port))
        if self.first_bytes:
            s.sendall(self.first_bytes)
        return s

    def loop(self):
        while not self.stop.is_set():
            ready, _, _ = select.select(self.socks, [], [], 0.01)
            now = time.monotonic()
            for i, s in enumerate(self.socks):
                closed = False
                if s in ready:
                    try:
                        closed = s.recv(1) == b""
                    except OSError:
                        closed = True
                if closed or (self.renew is not None and now - self.born[i] >= self.renew):
                    s.close()
                    self.socks[i], self.born[i] = self.begin(), now
                    self.renewed += 1

    def close(self):
        self.stop.set()
        self.thread.join()
        for s in self.socks:
            s.close()


def idle_sockets_keep_nobody_out(h, d, topo):
    holder = Holder(d.port)
    try:
        time.sleep(0.3)
        status, _, err, _ = h.run("run", topo, "--no-progress")
        check(status == 0 and "units of work: 1/1 finished" in err,
              "8 idle sockets renewed as they close do not keep a console out of sluiced", err, d.text()[-3000:])
        check("closed to make room for a newer connection from 127.0.0.1" in d.text() and holder.renewed >= 1,
              "sluiced closed the oldest idle one to let the console in, and says so", d.text()[-3000:])
    finally:
        holder.close()

    # 8 handshakes begun (a TLS record's first bytes) and stalled: young ones are not closed
    # for a newcomer, so the console's is turned away at first; it tries again, and once they
    # have stalled for over 1 s they make room.
    # (A daemon of its own: the log lines of the caps, rate-limited, start afresh.)
    d = h.start("stalled")
    topo = one_host(h, d)
    stalled = []
    try:
        for _ in range(8):
            c = socket.create_connection(("127.0.0.1", d.port))
            c.sendall(b"\x16\x03\x01")
            stalled.append(c)
        time.sleep(0.1)
        status, _, err, _ = h.run("run", topo, "--no-progress")
        check(status == 0 and "units of work: 1/1 finished" in err,
              "8 stalled handshakes delay a console (it tries again), they do not keep it out", err, d.text()[-3000:])
        check("it had been authenticating for" in d.text(), "sluiced closed a stalled one to let the console in",
              d.text()[-3000:])
    finally:
        for c in stalled:
            c.close()

    # The same 8, each renewed before it has stalled for 0.9 s (staggered, so that a new one
    # comes every ~110 ms): when a handshake had to stall for 1 s to make room, none ever did,
    # and every console was turned away for as long as this went on (9 connections a second).
    renewer = Holder(d.port, first_bytes=b"\x16\x03\x01", renew=0.9)
    try:
        time.sleep(0.3)
        status, _, err, _ = h.run("run", topo, "--no-progress")
        check(status == 0 and "units of work: 1/1 finished" in err,
              "8 stalled handshakes renewed every 0.9 s do not keep a console out", err, d.text()[-3000:])
        check(renewer.renewed >= 2, f"they were renewed while the console connected ({renewer.renewed} times)")
    finally:
        renewer.close()

    # sluice serve's port: the same caps, the same room made.
    serve = subprocess.Popen([h.console, "serve", topo, "--listen", "127.0.0.1:0", "--token-file", h.token],
                             stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    h.cleanups.append(lambda: (serve.poll() is None and serve.kill(), serve.wait()))
    err = ""
    for line in serve.stderr:
        err += line
        m = re.search(r"serving '[^']*' at (\S+) \(", line)
        if m:
            break
    check(m, "sluice serve starts", err)
    address = m.group(1)
    holder = Holder(int(address.rsplit(":", 1)[1]))
    try:
        time.sleep(0.3)
        status, _, err, _ = h.run("submit", address, "--work", "one")
        check(status == 0 and "units of work: 1/1 finished" in err,
              "8 idle sockets renewed as they close do not keep a submitter out of sluice serve", err)
    finally:
        holder.close()
    serve.terminate()
    serve.wait(30)


def test(h):
    d = h.start("a", preexec_fn=limit_descriptors)
    with open(f"/proc/{d.pid}/limits") as f:
        check(any(l.startswith("Max open files") and f" {DESCRIPTORS} " in l for l in f),
              f"sluiced runs with {DESCRIPTORS} descriptors")
    topo = one_host(h, d)
    status, _, err, _ = h.run("run", topo, "--no-progress")
    check(status == 0, "a run works before the floods", err)

    log = flood(h, d, topo, f"{CONNECTIONS} idle connections from {CONNECTIONS} addresses",
                [f"127.0.0.{i}" for i in range(2, 2 + CONNECTIONS)])
    accept_lines = [l for l in log.splitlines() if "accept failed: Too many open files" in l]
    check(accept_lines and "not accepting for 100 ms" in accept_lines[0],
          "out of descriptors, the accept loop pauses (and says so)", log[-3000:])
    check(len(accept_lines) <= HOLD_SECONDS + 3, f"failed accepts are logged at most once a second "
          f"({len(accept_lines)} lines)", accept_lines)

    log = flood(h, d, topo, f"{CONNECTIONS} idle connections from one address", ["127.0.0.1"] * CONNECTIONS)
    check("are authenticating already (the cap per address)" in log, "the cap per address refuses the rest", log[-3000:])
    check("similar lines not logged" in log, "the refusals are logged at a bounded rate, with a count", log[-3000:])

    idle_sockets_keep_nobody_out(h, d, topo)


if __name__ == "__main__":
    main(test)
