#!/usr/bin/env python3
"""sluice run --ui, end to end, on the mixed C++/Java example (make run's pipeline).

    ui_test.py SOURCE_DIR BUILD_DIR EXAMPLES_JAR

While the run goes on (it is made long: many units of work, the text read many times per
unit), it checks:
  - the page, loaded in headless Chromium, names every filter and every stream of the
    topology, each stream with a non-zero live rate (read from the DOM's data-* attributes);
    a screenshot is kept at BUILD_DIR/tests/console/ui_page.png;
  - /metrics passes `promtool check metrics`;
  - unknown paths get 404, POST 405, and a request fuzz (garbage and mutated requests over
    raw sockets) gets 4xx and never a 5xx or a dead server.
Then it interrupts the run (SIGINT: the run is long on purpose) and, while the final state
lingers (--ui-linger), checks that /metrics' counters equal the --metrics file's summary and
pass promtool again; a second SIGINT ends the linger, and the port is closed after.
Also: --ui on an address that is not loopback is refused without --ui-public, and with it
on every address the console announces the machine's name.
"""
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from chromium_page import load, screenshot  # beside this file
from ui_http import get, parse_metrics  # beside this file

src, build, jar = sys.argv[1], sys.argv[2], sys.argv[3]
sluice = os.path.join(build, "console", "sluice")
artifacts = os.path.join(build, "tests", "console")
work = tempfile.mkdtemp(prefix="sluice-ui-")
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
        print("FAIL: " + what, file=sys.stderr)
    return cond


def fatal(what):
    print("FAIL: " + what, file=sys.stderr)
    sys.exit(1)


def topology():
    with open(os.path.join(src, "examples", "mixed.yaml")) as f:
        text = f.read()
    subs = [("args: {path: data/words.txt}",
             "args: {path: %s, repeat: 40}" % os.path.join(src, "examples", "data", "words.txt")),
            ("../build/examples/libexamples.so", os.path.join(build, "examples", "libexamples.so")),
            ("java/target/examples.jar", jar),
            # Long enough to be watched: many units (each ends with count -> top moving), more
            # than any machine runs before the test ends the run (3,000 once were: ~6 s on a
            # fast one, and the SIGINT meant for the run ended the linger instead).
            ("work: [first-pass, second-pass]", "work: [%s]" % ", ".join("u%d" % i for i in range(100000)))]
    for old, new in subs:
        if old not in text:
            fatal("examples/mixed.yaml no longer has '%s'; update this test" % old)
        text = text.replace(old, new)
    path = os.path.join(work, "mixed.yaml")
    with open(path, "w") as f:
        f.write(text)
    filters = re.findall(r"^  (\w+):\s*\{", text.split("streams:")[0].split("filters:")[1], re.M)
    streams = ["%s -> %s" % m for m in re.findall(r"from: (\S+),\s*to: ([^,}\s]+)", text)]
    return path, filters, streams


def promtool(text, when):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    check(p.returncode == 0, "promtool check metrics (%s): %s%s" % (when, p.stdout, p.stderr))


def raw(port, data):
    """Sends `data`, half-closes, returns what came back (b"" when closed without an answer)."""
    with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
        s.sendall(data)
        s.shutdown(socket.SHUT_WR)
        got = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return got
            got += chunk


def fuzz(port):
    rng = random.Random(12)
    valid = b"GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
    cases = []
    for _ in range(60):  # garbage: never a request
        cases.append(("garbage", bytes(rng.randrange(256) for _ in range(rng.randrange(1, 300))) + b"\r\n\r\n"))
    for _ in range(60):  # a valid request with bytes flipped, cut, or repeated
        b = bytearray(valid)
        for _ in range(rng.randrange(1, 6)):
            b[rng.randrange(len(valid) - 4)] = rng.randrange(256)
        cases.append(("mutated", bytes(b)))
    for m in [b"POST", b"PUT", b"DELETE", b"OPTIONS", b"TRACE", b"CONNECT", b"BREW"]:
        cases.append(("method", m + b" /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"))
    cases += [("long target", b"GET /" + b"a" * 20000 + b" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
              ("long header", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX: " + b"x" * 20000 + b"\r\n\r\n"),
              ("body", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello"),
              ("chunked", b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n"),
              ("absolute target", b"GET http://evil.example/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"),
              ("rebinding", b"GET / HTTP/1.1\r\nHost: evil.example\r\n\r\n"),
              ("HTTP/2 preface", b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"),
              ("version", b"GET / HTTP/9.9\r\nHost: 127.0.0.1\r\n\r\n"),
              ("nul", b"GET /\x00 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")]
    counts = {}
    for kind, data in cases:
        got = raw(port, data)
        m = re.match(rb"HTTP/1\.[01] (\d{3})", got)
        code = int(m.group(1)) if m else None
        counts[code] = counts.get(code, 0) + 1
        check(code is None or code < 500, "fuzz %s %r: answered %s" % (kind, data[:60], code))
        if kind in ("garbage", "method", "long target", "long header", "body", "chunked", "rebinding",
                    "HTTP/2 preface", "version", "nul", "absolute target"):
            check(code is not None and 400 <= code < 500, "fuzz %s %r: want a 4xx, got %s" % (kind, data[:60], code))
    print("fuzz: %d requests, answers %s" % (len(cases), counts))


def watched_without_linger(path):
    """Without --ui-linger, a page that polls (as the page does, twice a second) still gets
    the run's final state before the console exits: it waited for it, up to 1.5 s. Before,
    the console exited at once and the page's last state said "running"."""
    console = subprocess.Popen([sluice, "run", path, "--ui", "127.0.0.1:0", "--no-progress"],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        url = None
        for line in console.stderr:
            m = re.search(r"watching the run at (http://\S+/)", line)
            if m:
                url = m.group(1)
                break
        if url is None:
            fatal("the console printed no --ui address (exit %s)" % console.wait())
        threading.Thread(target=console.stderr.read, daemon=True).start()  # keep the pipe drained
        seen = []

        def page():
            while console.poll() is None:
                try:
                    seen.append(json.loads(get(url + "api/status")[1]))
                except (OSError, ValueError):
                    pass
                time.sleep(0.5)
        poller = threading.Thread(target=page)
        poller.start()
        deadline = time.time() + 120
        while not any(s["status"] == "running" for s in seen) and time.time() < deadline:
            time.sleep(0.1)
        check(any(s["status"] == "running" for s in seen), "without --ui-linger: the page saw the run running")
        console.send_signal(signal.SIGINT)
        stopped = time.time()
        status = console.wait(timeout=60)
        took = time.time() - stopped
        poller.join()
        last = seen[-1] if seen else {}
        check(status == 130 and last.get("ended") is True and last.get("exit_code") == 130,
              "without --ui-linger: a polling page's last state is the run's end (exit %d; last: ended %s, status %s)"
              % (status, last.get("ended"), last.get("status")))
        check(took < 10, "... and the console exited soon after (%.1f s)" % took)
    finally:
        if console.poll() is None:
            console.kill()
            console.wait()


def main():
    path, filters, streams = topology()
    check(len(filters) == 5 and len(streams) == 4, "parsed the topology: %s %s" % (filters, streams))

    # Not loopback: refused, saying what to do.
    p = subprocess.run([sluice, "run", path, "--ui", "0.0.0.0:0", "--no-progress"], capture_output=True, text=True,
                       timeout=60)
    check(p.returncode == 2 and "--ui-public" in p.stderr,
          "--ui 0.0.0.0:0 without --ui-public: exit %d, stderr %r" % (p.returncode, p.stderr))
    # With it, the address printed is one a browser elsewhere can use: the machine's name, not 0.0.0.0.
    short = os.path.join(work, "short.yaml")
    with open(short, "w") as f:
        f.write("name: short\nfilters:\n  read: {class: LineReader, library: %s, args: {path: %s}}\n"
                "  top: {class: TopWords, library: %s}\nstreams:\n  - {from: read.out, to: top.in}\n"
                % (os.path.join(build, "examples", "libexamples.so"),
                   os.path.join(src, "examples", "data", "words.txt"), os.path.join(build, "examples", "libexamples.so")))
    p = subprocess.run([sluice, "run", short, "--ui", "0.0.0.0:0", "--ui-public", "--no-progress"],
                       capture_output=True, text=True, timeout=60)
    m = re.search(r"^sluice: watching the run at http://(\S+):(\d+)/ \(every address of this machine\)$",
                  p.stderr, re.M)
    check(p.returncode == 0 and m and m.group(1) == socket.gethostname(),
          "--ui 0.0.0.0:0 --ui-public announces the machine's name: exit %d, stderr %r" % (p.returncode, p.stderr))

    watched_without_linger(path)

    metrics_file = os.path.join(work, "m.json")
    cmd = [sluice, "run", path, "--ui", "127.0.0.1:0", "--ui-linger", "600", "--metrics", metrics_file,
           "--no-progress"]
    console = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    lines, seen = [], threading.Condition()

    def read_stderr():
        for line in console.stderr:
            with seen:
                lines.append(line)
                seen.notify_all()
        with seen:
            lines.append(None)
            seen.notify_all()

    threading.Thread(target=read_stderr, daemon=True).start()

    def wait_line(pattern):
        with seen:
            while True:
                for line in lines:
                    if line is None:
                        fatal("the console ended (exit %s) before printing /%s/:\n%s" %
                              (console.wait(), pattern, "".join(l for l in lines if l)))
                    m = re.search(pattern, line)
                    if m:
                        return m
                if not seen.wait(timeout=120):
                    fatal("no /%s/ from the console in 120 s" % pattern)

    try:
        url = wait_line(r"watching the run at (http://\S+/)").group(1)
        port = int(re.search(r":(\d+)/$", url).group(1))
        base = url.rstrip("/")

        # Until every stream has carried data (count -> top carries it at each unit's end).
        for _ in range(240):
            code, body = get(base + "/api/status")
            s = json.loads(body)
            if s["status"] == "running" and all(st["buffers"] > 0 for st in s["streams"]):
                break
            check(s["status"] in ("starting", "running"), "status while waiting: %s" % s["status"])
            time.sleep(0.5)
        else:
            fatal("streams never all carried data: %s" % body)
        check({f["name"] for f in s["filters"]} == set(filters), "/api/status filters: %s" % s["filters"])
        check([st["stream"] for st in s["streams"]] == streams, "/api/status streams")

        # The page, as a browser draws it. The live rate of count.out -> top.in is non-zero
        # only when a unit ended within the last second: load the page again until all are.
        for attempt in range(10):
            status, dom, err = load(url, work)
            check(status == 0, "chromium --dump-dom: exit %d %s" % (status, err[-2000:]))
            if dom.status == "running" and set(dom.edges) == set(streams) and all(v > 0 for v in dom.edges.values()):
                break
        check(dom.filters == set(filters), "the page's filters %s, want %s" % (dom.filters, filters))
        check(set(dom.edges) == set(streams), "the page's streams %s, want %s" % (sorted(dom.edges), streams))
        check(all(v > 0 for v in dom.edges.values()), "the page's live rates: %s" % dom.edges)
        check(dom.status == "running", "the page's status: %s" % dom.status)
        for name in filters + streams:
            check(name.replace("->", "→").split(" ")[0] in dom.text, "the page names %s" % name)
        shot = os.path.join(artifacts, "ui_page.png")
        ok, err = screenshot(url, work, shot)
        check(ok, "chromium --screenshot, a PNG: %s" % err[-2000:])
        if ok:
            print("screenshot: " + shot)

        code, text = get(base + "/metrics")
        check(code == 200, "/metrics: %d" % code)
        promtool(text, "while running")
        m = parse_metrics(text)
        check(len(m.get("sluice_stream_buffers_total", [])) == len(streams), "a buffers counter per stream")
        check(len(m.get("sluice_copy_state", [])) == 1 + 2 + 1 + 2 + 1, "a state per copy")

        check(get(base + "/nope")[0] == 404, "GET /nope is 404")
        check(get(base + "/metrics", "POST")[0] == 405, "POST /metrics is 405")
        code, body = get(base + "/", "HEAD")
        check(code == 200 and body == "", "HEAD / is 200 with no body")
        fuzz(port)
        check(console.poll() is None, "the console outlived the fuzz")
        check(get(base + "/api/status")[0] == 200, "/api/status after the fuzz")

        # End the run; its final state lingers.
        console.send_signal(signal.SIGINT)
        wait_line(r"final state stays at")
        with open(metrics_file) as f:
            summary = json.load(f)
        code, text = get(base + "/metrics")
        promtool(text, "after the run")
        m = parse_metrics(text)
        for st in summary["streams"]:
            for metric, key in [("sluice_stream_buffers_total", "buffers"), ("sluice_stream_bytes_total", "bytes"),
                                ("sluice_stream_producer_blocked_seconds_total", "producer_blocked_seconds"),
                                ("sluice_stream_consumer_blocked_seconds_total", "consumer_blocked_seconds")]:
                got = [v for labels, v in m[metric] if labels["stream"] == st["stream"]]
                check(got == [float(st[key])], "%s{stream=%s} = %s, the summary says %s" % (metric, st["stream"], got, st[key]))
        check(m["sluice_run_ended"][0][1] == 1, "sluice_run_ended is 1")
        check(m["sluice_run_exit_code"][0][1] == summary["exit_code"] == 130, "exit code 130 in both")
        check(m["sluice_units_finished_total"][0][1] == sum(u["finished"] for u in summary["units"]), "units finished")
        code, body = get(base + "/api/status")
        s = json.loads(body)
        check(s["ended"] and s["streams"][0]["buffers"] == summary["streams"][0]["buffers"], "/api/status's final state")
        check(s.get("failure", {}).get("stage") is not None, "the interruption shows as the failure")

        console.send_signal(signal.SIGINT)  # ends the linger
        check(console.wait(timeout=60) == 130, "the console's exit status after the linger")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=5).close()
            check(False, "port %d still open after the console exited" % port)
        except OSError:
            pass
    finally:
        if console.poll() is None:
            console.kill()
            console.wait()
        subprocess.run(["rm", "-rf", work])

    if failures:
        print("%d check(s) failed" % len(failures), file=sys.stderr)
        sys.exit(1)
    print("ui test: all checks passed")


main()
