#!/usr/bin/env python3
"""Runs through host daemons on loopback, and faults: three units with every buffer
verified; a filter that throws on a remote host; kill -9 of an app daemon and of a host
daemon mid-run. Each failure is reported precisely, the console exits non-zero within 5 s,
and no process or port is left behind.

Uses placements where no stream crosses hosts, so it needs only the control plane.

  faults_test.py BUILD_DIR SOURCE_DIR
"""
import ctypes
import os
import re
import shutil
import signal
import time

from harness import Failed, alive, check, children, listening, main, pipelines
from throttled_proxy import ThrottledProxy


def hide_directory(path):
    """In the child before exec: a mount namespace of its own in which `path` is an empty
    tmpfs (what that host does not have)."""
    libc = ctypes.CDLL(None, use_errno=True)
    ms_rec, ms_private = 0x4000, 0x40000
    if (libc.unshare(0x00020000) != 0  # CLONE_NEWNS
            or libc.mount(b"none", b"/", None, ms_rec | ms_private, None) != 0
            or libc.mount(b"tmpfs", path.encode(), b"tmpfs", 0, None) != 0):
        raise OSError(ctypes.get_errno(), "cannot hide " + path + " in a mount namespace (needs root)")


def app_pid_of(d, after=0):
    pids = d.app_pids()
    return pids[after] if len(pids) > after else None


def start_long_run(h, topo, daemons):
    """Starts a long run and waits until every daemon's app daemon runs units."""
    before = {d.name: len(d.app_pids()) for d in daemons}
    p, out, err = h.start_console("run", topo)
    h.wait_for(lambda: all(len(d.app_pids()) > before[d.name] for d in daemons), 10, "app daemons to start")
    h.wait_for(lambda: all("ready:" in d.text().split("launched application")[-1] for d in daemons), 10,
               "app daemons to be ready")
    time.sleep(1.0)  # well into the first unit
    check(p.poll() is None, "the long run is running")
    return p, out, err, {d.name: d.app_pids()[-1] for d in daemons}


def freeze_app_daemon(h, topo, daemons, host, what, named):
    """Freezes (SIGSTOP) host `host`'s app daemon in a long run: the console exits 1 within
    8 s (4 s of silence allowed), and the run's failure is that app daemon, on its host."""
    p, out, err, pids = start_long_run(h, topo, daemons)
    os.kill(pids[host], signal.SIGSTOP)
    stopped = time.time()
    check(finished_within(p, 8) and p.returncode == 1, f"{what}: console exits 1 ({time.time() - stopped:.2f} s)")
    err.seek(0)
    text = err.read()
    check(f"run failed: host {host}: app daemon: the app daemon (sluice-appd pid {pids[host]}) sent no heartbeat"
          in text, f"{what}: {named}", text)
    h.no_orphans(list(pids.values()), f"after: {what}")


def finished_within(p, seconds):
    try:
        p.wait(seconds)
        return True
    except Exception:
        return False


def test(h):
    a = h.start("a")
    b = h.start("b")

    # --- three units, every buffer checked, summary merged over the hosts ----------------
    topo = pipelines(h, a, b, count=200000)
    status, out, err, _ = h.run("run", topo, "--no-progress", "--metrics", os.path.join(h.dir, "m.json"))
    check(status == 0, "pipelines on two hosts: exit 0", err)
    check("units of work: 3/3 finished" in err, "three units finished", err)
    check(re.search(r"pa\.out -> ca\.in\s+600000\s", err) and re.search(r"pb\.out -> cb\.in\s+1200000\s", err),
          "summary merges both hosts' streams", err)
    check(a.text().count("received 200000 buffers, 204800000 bytes; 200000 verified in order from 1 producer(s)") == 3,
          "host a: every unit's buffers verified", a.text())
    check(b.text().count("received 400000 buffers, 409600000 bytes; 400000 verified in order from 2 producer(s)") == 3,
          "host b: every unit's buffers verified", b.text())
    h.no_orphans(a.app_pids() + b.app_pids(), "after a clean run")

    # --- a host slow to answer (3.6 s) does not cost the console the hosts that answered ---
    # at once: they hear its heartbeats meanwhile (a daemon drops a console silent for 3 s;
    # host a did, and the run failed blaming host a).
    slow = ThrottledProxy(b.port, delay=3.6)
    try:
        slow_topo = h.topology("slow_host.yaml", open(topo).read().replace(
            f"  b: {b.address}\n", f"  b: {slow.address}\n"))
        check(slow.address in open(slow_topo).read(), "the topology reaches host b through the slow proxy")
        status, out, err, secs = h.run("run", slow_topo, "--no-progress")
        check(status == 0 and "units of work: 3/3 finished" in err and secs > 3.6,
              "a host that takes 3.6 s to answer: the run finishes on both hosts", status, secs, err)
        check("no heartbeat from the console" not in a.text(), "host a did not drop the console meanwhile", a.text())
    finally:
        slow.close()
    h.no_orphans(a.app_pids() + b.app_pids(), "after a run with a slow host")

    # --- default placement: round-robin over hosts in file order ---------------------------
    rr = h.topology("rr.yaml", f"""name: rr
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000}}, copies: 2}}
streams: []
""".replace("streams: []\n", ""))
    status, out, err, _ = h.run("validate", rr)
    check(status == 0 and "  a: p#0" in out and "  b: p#1" in out, "copies without place: go round-robin", out, err)
    check(f"host a ({a.address}): the application loads and its pools fit (launched, then shut down)" in out and
          f"host b ({b.address}): the application loads and its pools fit" in out,
          "validate launches the application on each host as far as its first unit, and says so", out, err)
    h.no_orphans(a.app_pids() + b.app_pids(), "after validate")

    # --- validate: a library that one host does not have -------------------------------------
    # Host "hidden" runs in a mount namespace of its own in which the library's directory is
    # an empty tmpfs: the console and host a see the library, host hidden does not. validate
    # used to say ok (it loaded the libraries here only); the run then failed at launch.
    only_here = os.path.join(h.dir, "only_here")
    os.makedirs(only_here)
    lib_copy = os.path.join(only_here, "libfilters.so")
    shutil.copy(h.lib, lib_copy)
    hidden = h.start("hidden", preexec_fn=lambda: hide_directory(only_here))
    missing = h.topology("missing.yaml", f"""name: missing
{h.hosts_yaml(a, hidden)}filters:
  p: {{class: Produce, library: {lib_copy}, args: {{size: 1KiB, count: 10}}, place: {{a: 1}}}}
  c: {{class: Consume, library: {lib_copy}, place: {{hidden: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
""")
    status, out, err, _ = h.run("validate", missing, timeout=60)
    check(status == 3 and "validate failed: host hidden: load: " in err and "filter 'c': cannot load filter library '"
          + lib_copy in err and "every host needs the same library: and classpath: paths" in err and
          not out.rstrip().endswith("ok"),
          "validate: a library missing on one host fails validate (status 3), naming the host, filter and library",
          status, out, err)
    check("filter 'p'" not in err, "... and that host loads only the filters placed on it (p runs on a)", err)
    h.no_orphans(a.app_pids() + hidden.app_pids(), "after a validate that failed on one host")
    # A library only the hosts that run its filter have: validate and the run both go through
    # (every host loaded every filter's library before, so this run failed on host hidden).
    partial = h.topology("partial.yaml", open(missing).read().replace(
        f"c: {{class: Consume, library: {lib_copy}", f"c: {{class: Consume, library: {h.lib}"))
    status, out, err, _ = h.run("validate", partial, timeout=60)
    check(status == 0 and out.rstrip().endswith("ok"), "validate: a library on the host that runs its filter only", out, err)
    status, out, err, _ = h.run("run", partial, "--no-progress", timeout=60)
    check(status == 0 and "units of work: 1/1 finished" in err, "... and the run", out, err)

    # --- a host without copies takes part in the check only: its sluiced dying mid-run does ---
    # not fail the run (it failed it: "lost the connection to the host daemon").
    c = h.start("c")
    idle = h.topology("idle_host.yaml", f"""name: idle-host
{h.hosts_yaml(a, b, c)}filters:
  pa: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000000000}}, place: {{a: 1}}}}
  ca: {{class: Consume, library: LIB, place: {{a: 1}}}}
  pb: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000000000}}, place: {{b: 1}}}}
  cb: {{class: Consume, library: LIB, place: {{b: 1}}}}
streams:
  - {{from: pa.out, to: ca.in, buffer_size: 1KiB}}
  - {{from: pb.out, to: cb.in, buffer_size: 1KiB}}
""")
    p, _, err, _ = start_long_run(h, idle, [a, b])
    c.proc.kill()
    c.proc.wait()
    time.sleep(4.5)  # past the console's 3 s of silence and its heartbeats
    err.seek(0)
    said = err.read()
    check(p.poll() is None and "host c" not in said, "a host without copies whose sluiced dies mid-run: the run goes on",
          p.poll(), said)
    p.send_signal(signal.SIGINT)
    check(finished_within(p, 10) and p.returncode == 130, "... and ends by Ctrl-C as usual (130)", p.returncode)
    check(c.app_pids() == [], "... and no app daemon was started on it", c.text())
    h.no_orphans(a.app_pids() + b.app_pids(), "after a run beside a host without copies")

    # --- a filter that throws on a remote host ------------------------------------------------
    throw = h.topology("throw.yaml", open(topo).read().replace(
        "args: {size: 1KiB, count: 200000}, place: {b: 2}", "args: {size: 4KiB, count: 200000}, place: {b: 2}"))
    status, out, err, secs = h.run("run", throw, "--no-progress")
    check(status == 1, "remote exception: exit 1", err)
    check(re.search(r"run failed: filter 'pb' copy [01] on host b failed in process \(unit of work 0\): "
                    r"args.size 4096 exceeds the stream's buffer_size 1024", err), "remote exception named with its host", err)
    h.no_orphans(a.app_pids() + b.app_pids(), "after a remote exception")

    # --- a run that stops moving across hosts: each copy named with its host and wait ---------
    graphs = os.path.join(h.build, "core-cpp", "tests", "libsluice_graph_filters.so")
    # 1 MiB buffers: across hosts the credit window is then the depth (1), not a MiB's worth.
    stall = h.topology("stall.yaml", f"""name: stall
defaults: {{buffer_size: 1MiB, depth: 1}}
{h.hosts_yaml(a, b)}filters:
  src:   {{class: GSource, library: {graphs}, args: {{count: 200}}, place: {{a: 1}}}}
  split: {{class: GMix, library: {graphs}, args: {{order: in, outputs: "o0,o1"}}, place: {{a: 1}}}}
  join:  {{class: GMix, library: {graphs}, args: {{order: "i1,i0"}}, place: {{b: 1}}}}
streams:
  - {{from: src.out, to: split.in}}
  - {{from: split.o0, to: join.i0}}
  - {{from: split.o1, to: join.i1}}
""")
    # Below 1 s the gap between two of the hosts' reports (0.5 s) looks like a stall: refused
    # before anything starts (it failed healthy runs with an empty report).
    launched = a.text().count("launched application")
    status, out, err, secs = h.run("run", stall, "--no-progress", "--stall-timeout", "0.6", timeout=60)
    check(status == 2 and "sluice: --stall-timeout 0.6: across hosts give at least 1 s" in err
          and a.text().count("launched application") == launched,
          "--stall-timeout 0.6 across hosts: refused, saying why", err)
    status, out, err, secs = h.run("run", stall, "--no-progress", "--stall-timeout", "2", timeout=60)
    check(status == 1 and secs < 10, f"stalled across hosts: --stall-timeout 2 fails the run ({secs:.1f} s)", err)
    check("run failed: no buffer has moved for 2." in err and
          re.search(r"join#0 on host b: waiting [0-9.]+ s to read from split\.o1 -> join\.i1", err) and
          re.search(r"split#0 on host a: waiting [0-9.]+ s to write to split\.o0 -> join\.i0", err),
          "stalled across hosts: each copy's wait named with its host", err)
    # split's o0 frame sits in join's full queue on b (depth 1), so a holds no credit for it.
    # (The report is the failure's message: its lines are indented 4 more on stderr.)
    check(re.search(r"what the data planes hold:\n      host a:\n        to host 'b': ", err) and
          "split.o0 -> join.i0 copy 0 credit 0/1;" in err and
          re.search(r"      host b:\n        from host 'a': .*\n        landing split\.o0 -> join\.i0: copy 0 holds back 0 "
                    r"\(credit left: a 0/1\)", err),
          "stalled across hosts: what each data plane holds, by host", err)
    h.no_orphans(a.app_pids() + b.app_pids(), "after a stalled run")

    long = h.topology("long.yaml", open(topo).read().replace("count: 200000", "count: 1000000000"))

    # --- kill -9 an app daemon mid-run ----------------------------------------------------------
    p, out, err, pids = start_long_run(h, long, [a, b])
    os.kill(pids["a"], signal.SIGKILL)
    killed = time.time()
    check(finished_within(p, 5) and p.returncode == 1, f"app daemon killed: console exits 1 within 5 s ({time.time() - killed:.2f} s)")
    # Its peers' connections reset at once: not the 1.5 s a silent data connection waits for
    # a frozen app daemon to be named (an outside review saw 1.55 s; ~0.3 s since).
    check(time.time() - killed < 1.2, f"app daemon killed: named as fast as a crash ({time.time() - killed:.2f} s)")
    err.seek(0)
    text = err.read()
    check(f"host a: the app daemon (sluice-appd pid {pids['a']}) was killed by SIGKILL during the run; host a ran "
          "ca#0, pa#0" in text, "app daemon killed: reported with host, pid, signal and the copies lost with it", text)
    h.no_orphans(list(pids.values()), "after kill -9 of an app daemon")
    check(a.serving() and b.serving(), "both host daemons still serving")
    for port in a.data_ports() + b.data_ports():
        check(not listening(port, owner="sluice-appd"), f"data port {port} closed")

    # --- a frozen app daemon (SIGSTOP): its host daemon misses its heartbeats and kills it ---
    freeze_app_daemon(h, long, [a, b], "a", "frozen app daemon", "reported with host and pid")

    # --- a frozen app daemon at the sending end of a stream that crosses hosts: its silence ---
    # on the data connection (3 s) comes before its host daemon's verdict (4 s), and is only a
    # consequence: the run names the frozen app daemon's host, not the host that noticed.
    crossing = h.topology("crossing_long.yaml", f"""name: crossing-long
{h.hosts_yaml(a, b)}filters:
  pb: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000000000}}, place: {{b: 1}}}}
  ca: {{class: Consume, library: LIB, place: {{a: 1}}}}
streams:
  - {{from: pb.out, to: ca.in, buffer_size: 1KiB}}
""")
    freeze_app_daemon(h, crossing, [a, b], "b", "frozen sending app daemon",
                      "the run names its host (b), not host a that heard nothing from it")

    # --- Ctrl-C: the run is cancelled everywhere, exit 130 ------------------------------------
    p, out, err, pids = start_long_run(h, long, [a, b])
    p.send_signal(signal.SIGINT)
    check(finished_within(p, 5) and p.returncode == 130, f"SIGINT: console exits 130 within 5 s (status {p.returncode})")
    err.seek(0)
    check("run failed: interrupted by SIGINT" in err.read(), "SIGINT: reported")
    h.no_orphans(list(pids.values()), "after SIGINT")

    # --- the console itself killed: every host daemon kills its app daemon ---------------------
    p, out, err, pids = start_long_run(h, long, [a, b])
    p.kill()
    p.wait()
    h.no_orphans(list(pids.values()), "after kill -9 of the console")
    check(a.serving() and b.serving(), "both host daemons still serving")

    # --- the console itself frozen (Ctrl-Z, SIGSTOP) past the 3 s the host daemons wait: they end
    # the run; the console, once resumed, says it was its own pause, not the link or the hosts ----
    p, out, err, pids = start_long_run(h, long, [a, b])
    p.send_signal(signal.SIGSTOP)
    try:
        h.wait_for(lambda: not alive(pids["a"]) and not alive(pids["b"]), 10,
                   "the host daemons to end the stopped console's app daemons")
    finally:
        p.send_signal(signal.SIGCONT)
    check(finished_within(p, 5) and p.returncode == 1, f"stopped console: exits 1 once resumed ({p.returncode})")
    err.seek(0)
    text = err.read()
    check(re.search(r"this console did not run for [\d.]+ s \(stopped, by Ctrl-Z or SIGSTOP, or starved of CPU\)",
                    text) and "the link is down" not in text and "sluiced died" not in text,
          "stopped console: it names its own pause, not the link or the host daemons", text)
    h.no_orphans(list(pids.values()), "after stopping the console")

    # --- a frozen host daemon (SIGSTOP): the console gives host b up after 3 s of silence, and
    # b's app daemon, hearing nothing from its sluiced for 4 s, exits by itself (it used to run
    # on, data port open, until sluiced woke up) -------------------------------------------------
    p, out, err, pids = start_long_run(h, long, [a, b])
    before_freeze = len(b.text())
    os.kill(b.pid, signal.SIGSTOP)
    try:
        check(finished_within(p, 8) and p.returncode == 1, "frozen host daemon: console exits 1")
        h.wait_for(lambda: not alive(pids["b"]), 10, "the frozen host daemon's app daemon to exit by itself")
        check(not any(listening(port, owner="sluice-appd") for port in b.data_ports()),
              "frozen host daemon: its app daemon's data port is closed")
        check(re.search(r"sluice-appd\(b\)\[\d+\] \[error\] (sluiced sent nothing for \d+ ms|control connection to "
                        r"sluiced: the peer took nothing for 4000 ms) \(stopped or hung", b.text()),
              "frozen host daemon: its app daemon says why it exits", b.text()[-3000:])
    finally:
        os.kill(b.pid, signal.SIGCONT)
    # Once woken, b says it was its own pause, and blames neither its app daemon nor the console.
    h.wait_for(lambda: "sluiced did not run for" in b.text()[before_freeze:], 5, "the woken host daemon to name its pause")
    time.sleep(0.5)  # what it does next, on the same turn of its event loop
    woken = b.text()[before_freeze:]
    check(re.search(r"sluiced did not run for [\d.]+ s \(stopped, by SIGSTOP or Ctrl-Z, or starved of CPU\)", woken)
          and "sent no heartbeat" not in woken and "no heartbeat from the console" not in woken
          and woken.count("killing sluice-appd") <= 1,
          "frozen host daemon: once woken, it names its own pause, not its app daemon's or the console's silence", woken)
    h.no_orphans(list(pids.values()), "after freezing a host daemon")
    check(a.serving() and b.serving(), "both host daemons serve again once b is woken")

    # --- kill -9 a host daemon mid-run -----------------------------------------------------------
    p, out, err, pids = start_long_run(h, long, [a, b])
    os.kill(b.pid, signal.SIGKILL)
    killed = time.time()
    check(finished_within(p, 5) and p.returncode == 1, f"host daemon killed: console exits 1 within 5 s ({time.time() - killed:.2f} s)")
    err.seek(0)
    text = err.read()
    check(f"host b ({b.address}): lost the connection to the host daemon" in text, "host daemon killed: reported with host and address", text)
    check("; host b ran cb#0, pb#0, pb#1" in text, "host daemon killed: the copies lost with it are named", text)
    b.proc.wait()
    h.no_orphans(list(pids.values()), "after kill -9 of a host daemon")
    check(not listening(b.port), "the killed daemon's port is free")
    check(a.serving(), "the other host daemon still serving")

    # --- a host daemon stopped (SIGTERM) mid-run: it tells the console why ---------------------
    b2 = h.start("b")
    p, out, err, pids = start_long_run(h, pipelines(h, a, b2, count=10**9), [a, b2])
    b2.proc.send_signal(signal.SIGTERM)
    check(finished_within(p, 5) and p.returncode == 1, "host daemon stopped: console exits 1 within 5 s")
    err.seek(0)
    text = err.read()
    check(f"host b ({b2.address}): the host daemon said: sluiced is shutting down (it received SIGTERM) and "
          "stops its app daemons" in text, "host daemon stopped: the console says so, not 'sluiced died'", text)
    check(b2.proc.wait(5) == 0, "the stopped daemon exits 0")
    h.no_orphans(list(pids.values()), "after SIGTERM to a host daemon")

    # --- and the surviving daemon still runs applications -----------------------------------
    b2 = h.start("b")
    status, out, err, _ = h.run("run", pipelines(h, a, b2, count=10000), "--no-progress")
    check(status == 0, "a new run works afterwards", err)


if __name__ == "__main__":
    main(test)
