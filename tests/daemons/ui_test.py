#!/usr/bin/env python3
"""sluice run --ui across two host daemons on loopback: the page, loaded in headless
Chromium during the run, shows every filter, every copy with the host it runs on, both
hosts, and every stream with a non-zero live rate; a screenshot is kept at
BUILD_DIR/tests/daemons/ui_hosts_page.png. Then Ctrl-C ends the run: exit 130, no app
daemon, data port or --ui port left, both host daemons still serving.

The topology: produce on a -> forward, one copy on each host -> consume on b, 1 KiB
buffers, every buffer's checksum checked by the consumer (not their order: two forward
copies interleave); both streams cross between the app daemons.

  ui_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import signal
import socket
import sys
import time
import urllib.request

from harness import Failed, check, main

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "console"))
from chromium_page import load, screenshot  # noqa: E402  (the console's ui_test.py uses it too)

FILTERS = {"produce", "forward", "consume"}
STREAMS = {"produce.out -> forward.in", "forward.out -> consume.in"}
COPIES = {"produce#0": "a", "forward#0": "a", "forward#1": "b", "consume#0": "b"}


def status(console, err, base):
    if console.poll() is not None:
        err.seek(0)
        raise Failed(f"the console exited ({console.returncode}) during the run:\n{err.read()[-3000:]}")
    with urllib.request.urlopen(base + "/api/status", timeout=30) as r:
        return json.loads(r.read())


def test(h):
    a = h.start("a")
    b = h.start("b")
    topo = h.topology("ui-hosts.yaml", f"""name: ui-hosts
{h.hosts_yaml(a, b)}defaults: {{buffer_size: 1KiB, depth: 64}}
filters:
  produce: {{class: Produce, library: LIB, args: {{count: 1000000000000}}, place: {{a: 1}}}}
  forward: {{class: Forward, library: LIB, place: {{a: 1, b: 1}}}}
  consume: {{class: Consume, library: LIB, args: {{order: false}}, place: {{b: 1}}}}
streams:
  - {{from: produce.out, to: forward.in}}
  - {{from: forward.out, to: consume.in}}
""")
    console, _, err = h.start_console("run", topo, "--ui", "127.0.0.1:0")

    def console_says(pattern):
        err.seek(0)
        return re.search(pattern, err.read())

    h.wait_for(lambda: console_says(r"watching the run at (http://\S+/)") or console.poll() is not None, 30,
               "the console's --ui address")
    m = console_says(r"watching the run at (http://\S+/)")
    check(m and console.poll() is None, "the console serves its --ui", err.read() if not m else "")
    url = m.group(1)
    base = url.rstrip("/")
    port = int(re.search(r":(\d+)/$", url).group(1))

    # Until both hosts have reported traffic on every stream.
    h.wait_for(lambda: (lambda s: s["status"] == "running" and all(st["buffers"] > 0 for st in s["streams"]))(
        status(console, err, base)), 60, "every stream to carry data")

    # The page, as a browser draws it (its rates need two reports a second apart: retry).
    for _ in range(10):
        code, dom, chromium_err = load(url, h.dir)
        check(code == 0, "chromium --dump-dom", chromium_err[-2000:])
        if dom.status == "running" and dom.copies == COPIES and set(dom.edges) == STREAMS and \
                all(v > 0 for v in dom.edges.values()):
            break
    check(dom.filters == FILTERS, "the page shows every filter", dom.filters)
    check(dom.copies == COPIES, "the page shows every copy with its host", dom.copies)
    check(dom.hosts == {"a", "b"}, "the page lists both hosts", dom.hosts)
    check(set(dom.edges) == STREAMS and all(v > 0 for v in dom.edges.values()),
          "the page shows every stream with a non-zero live rate", dom.edges)
    check(dom.status == "running", "the page says the run is running", dom.status)
    for d in (a, b):
        check(d.address in dom.text, f"the page shows host {d.name}'s address {d.address}")
    shot = os.path.join(h.build, "tests", "daemons", "ui_hosts_page.png")
    ok, chromium_err = screenshot(url, h.dir, shot)
    check(ok, "chromium --screenshot, a PNG at " + shot, chromium_err[-2000:])

    # Ctrl-C: cancelled everywhere, nothing left.
    pids = a.app_pids() + b.app_pids()
    console.send_signal(signal.SIGINT)
    try:
        console.wait(30)
    except Exception:
        pass
    check(console.returncode == 130, f"SIGINT: the console exits 130 (status {console.returncode})")
    check(console_says(r"run failed: interrupted by SIGINT"), "SIGINT: reported")
    h.no_orphans(pids, "after SIGINT")
    check(a.serving() and b.serving(), "both host daemons still serving")
    try:
        socket.create_connection(("127.0.0.1", port), timeout=5).close()
        check(False, f"the --ui port {port} is closed after the console exited")
    except OSError:
        check(True, f"the --ui port {port} is closed after the console exited")


if __name__ == "__main__":
    main(test)
