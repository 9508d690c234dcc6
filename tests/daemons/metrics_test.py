#!/usr/bin/env python3
"""sluiced --metrics: sessions, app daemons and refusals by reason, in the Prometheus text
format (checked by promtool), counted as they happen; loopback unless --metrics-public.

  metrics_test.py BUILD_DIR SOURCE_DIR
"""
import json
import os
import re
import signal
import socket
import subprocess
import urllib.error
import urllib.request

from harness import check, main, pipelines


def scrape(d):
    with urllib.request.urlopen(d.metrics_url, timeout=30) as r:
        text = r.read().decode()
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    check(p.returncode == 0, "promtool check metrics", p.stdout + p.stderr, text)
    values = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, value = line.rsplit(" ", 1)
            values[name] = float(value)
    return values


def start(h, name):
    d = h.start(name, args=["--metrics", "127.0.0.1:0"])
    h.wait_for(lambda: re.search(r"metrics at (http://\S+/metrics)", d.text()), 10, "sluiced's metrics address")
    d.metrics_url = re.search(r"metrics at (http://\S+/metrics)", d.text()).group(1)
    return d


def test(h):
    # Not loopback: refused before anything listens.
    p = subprocess.run([h.sluiced, "--listen", "127.0.0.1:0", "--token-file", h.token, "--metrics", "0.0.0.0:0"],
                       capture_output=True, text=True, timeout=30)
    check(p.returncode != 0 and "--metrics-public" in p.stdout + p.stderr,
          "--metrics 0.0.0.0:0 without --metrics-public is refused", p.stdout + p.stderr)

    a = start(h, "a")
    b = start(h, "b")
    m = scrape(a)
    for reason in ["too_many_pending", "too_many_from_address", "not_tls", "tls_handshake", "auth_timeout",
                   "hello_refused", "request_refused", "protocol_error"]:
        check(m.get('sluiced_refusals_total{reason="%s"}' % reason) == 0, "refusal %s starts at 0" % reason, m)
    check(m["sluiced_sessions_total"] == 0 and m["sluiced_app_daemons"] == 0, "nothing yet", m)
    check(m["sluiced_log_lines_dropped_total"] == 0, "no log line dropped (its log is a file)", m)

    # A stranger who does not speak TLS, and a console with the wrong token.
    with socket.create_connection(("127.0.0.1", a.port)) as s:
        s.sendall(b"GET / HTTP/1.1\r\n\r\n")
        s.settimeout(10)
        try:
            while s.recv(4096):
                pass
        except OSError:
            pass
    wrong = h.write_token("wrong")
    topo = pipelines(h, a, b, count=1000, units=("one",))
    status, _, err, _ = h.run("run", topo, "--no-progress", token=wrong)
    check(status == 4, "a console with the wrong token is refused", err)
    h.wait_for(lambda: scrape(a).get('sluiced_refusals_total{reason="tls_handshake"}') == 1, 10,
               "the wrong token counted as a tls_handshake refusal")
    m = scrape(a)
    check(m['sluiced_refusals_total{reason="not_tls"}'] == 1, "the stranger counted as not_tls", m)

    # A run: each daemon starts one app daemon, which ends with it.
    status, _, err, _ = h.run("run", topo, "--no-progress")
    check(status == 0, "a run across a and b", err)
    for d in (a, b):
        h.wait_for(lambda: scrape(d).get("sluiced_app_daemons_ended_total") == 1, 10, d.name + "'s app daemon reaped")
        m = scrape(d)
        check(m["sluiced_app_daemons_started_total"] == 1 and m["sluiced_app_daemons"] == 0, d.name + ": app daemons", m)
        check(m['sluiced_sessions{state="authenticated"}'] == 0, d.name + ": no session left open", m)
    check(scrape(a)["sluiced_sessions_total"] == 3, "a admitted the stranger, the wrong token and the console")

    # The console's --ui across hosts: per host traffic, and the streams' counters equal the
    # summary (--metrics file) once the run ended.
    summary_file = os.path.join(h.dir, "summary.json")
    console = subprocess.Popen([h.console, "run", topo, "--no-progress", "--token-file", h.token, "--ui", "127.0.0.1:0",
                                "--ui-linger", "120", "--metrics", summary_file],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    h.cleanups.append(lambda: (console.poll() is None and console.kill(), console.wait()))
    err = ""
    for line in console.stderr:
        err += line
        if "final state stays at" in line:
            break
    m = re.search(r"stays at (http://\S+/) ", err)
    check(m, "the console lingers with its --ui", err)
    with urllib.request.urlopen(m.group(1) + "metrics", timeout=30) as r:
        text = r.read().decode()
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    check(p.returncode == 0, "promtool check metrics on the console's /metrics", p.stdout + p.stderr)
    with open(summary_file) as f:
        summary = json.load(f)
    for st in summary["streams"]:
        want = 'sluice_stream_buffers_total{stream="%s",' % st["stream"]
        got = [float(l.rsplit(" ", 1)[1]) for l in text.splitlines() if l.startswith(want)]
        check(got == [st["buffers"]], "the console's %s... = the summary's %s" % (want, st["buffers"]), got)
    written = {re.search(r'host="(\w+)"', l).group(1): float(l.rsplit(" ", 1)[1])
               for l in text.splitlines() if l.startswith("sluice_host_buffers_written_total{")}
    check(set(written) == {"a", "b"} and all(v > 0 for v in written.values()), "traffic per host", written)
    check(sum(written.values()) == sum(st["buffers"] for st in summary["streams"]), "hosts' traffic adds up", written)
    console.send_signal(signal.SIGINT)
    check(console.wait(timeout=30) == 0, "the console exits with the run's status after the linger")

    # While a console is connected and authenticating nothing, it shows as a session.
    with socket.create_connection(("127.0.0.1", a.port)):
        h.wait_for(lambda: scrape(a).get('sluiced_sessions{state="authenticating"}') == 1, 10, "an open session")

    try:
        urllib.request.urlopen(a.metrics_url.replace("/metrics", "/nope"), timeout=30)
        check(False, "/nope is not served")
    except urllib.error.HTTPError as e:
        check(e.code == 404, "/nope is 404", e.code)


if __name__ == "__main__":
    main(test)
