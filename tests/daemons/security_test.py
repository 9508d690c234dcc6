#!/usr/bin/env python3
"""Security: token files, wrong tokens, unreachable hosts, plain bytes at the TLS port, and
hostile frames inside an authenticated TLS session (a hand-made console over
`openssl s_client`, keyed with a PSK derived here from the token); the daemon keeps serving
and a correct run works after.

  security_test.py BUILD_DIR SOURCE_DIR
"""
import ctypes
import os
import socket
import struct
import subprocess
import time

from harness import check, children, main, pipelines
from tls_tools import SClient, psk
from wire import (field, frame, hello, parse, first_frame, uint_field, AUTH_RESULT, ERROR, EXIT_REPORT,
                  FAILURE, LAUNCH, START_UNIT)



def logged(d, text, what):
    """Checks that daemon d's log says `text`, within 5 s: it writes its log in the
    background, so a peer may have seen the connection close before the line is written."""
    deadline = time.time() + 5
    while text not in d.text() and time.time() < deadline:
        time.sleep(0.05)
    check(text in d.text(), what, d.text()[-3000:])

def closed_by_peer(sock, timeout):
    """True when the daemon closes the plain connection within timeout (after any replies)."""
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(65536)
            if not data:
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False


def plain(port, data, shut_wr=False, timeout=6):
    """Sends data on a plain TCP connection; returns (closed by the daemon, what it answered)."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    answer = b""
    try:
        s.sendall(data)
        if shut_wr:
            s.shutdown(socket.SHUT_WR)
        s.settimeout(timeout)
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return True, answer
            answer += chunk
    except (ConnectionResetError, BrokenPipeError):
        return True, answer
    except socket.timeout:
        return False, answer
    finally:
        s.close()


def test(h):
    # --- sluiced refuses a bad token file, with a clear message ---------------------------
    for what, path, expect in [
        ("missing", os.path.join(h.dir, "nope"), "does not exist"),
        ("empty", h.write_token("empty", ""), "is empty"),
        ("world-readable", h.write_token("open", "secret\n", 0o644), "chmod 600"),
    ]:
        p = subprocess.run([h.sluiced, "--listen", "127.0.0.1:0", "--token-file", path],
                           capture_output=True, text=True, timeout=10)
        check(p.returncode != 0 and expect in p.stderr, f"sluiced refuses a {what} token file", p.stderr)

    a = h.start("a")
    b = h.start("b")
    topo = pipelines(h, a, b, count=20000)

    # --- a wrong token: refused by TLS, explained on both sides, nothing started ------------
    wrong = h.write_token("wrong")
    status, out, err, _ = h.run("run", topo, "--no-progress", token=wrong)
    check(status == 4, "wrong token: exit status 4", status, err)
    check(f"host a ({a.address}): refused the connection: the TLS handshake failed because the tokens differ; "
          f"pass the daemon's token file with --token-file (or copy it to {wrong})" in err, "wrong token: host a named, the cause and the fix", err)
    check("nothing was started" in err, "wrong token: says nothing was started", err)
    logged(a, "refused: the console's token differs from this daemon's (its TLS-PSK binder does not verify)",
           "wrong token: the daemon logs the refusal")
    check(not a.app_pids() and not b.app_pids() and not children(a.pid) and not children(b.pid),
          "wrong token: no app daemon started")

    # --- the console's own token file must be private too -----------------------------------
    status, _, err, _ = h.run("run", topo, token=h.write_token("loose", "x\n", 0o644))
    check(status == 4 and "chmod 600" in err, "console refuses a world-readable token file", err)

    # --- an unreachable host: exit 4 naming host and address -------------------------------
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    free = s.getsockname()[1]
    s.close()
    status, _, err, _ = h.run("run", topo, "--hosts", f"b=127.0.0.1:{free}")
    check(status == 4 and f"host b (127.0.0.1:{free}): cannot connect" in err, "unreachable host: exit 4, named", err)
    check(not a.app_pids(), "unreachable host: nothing started on the reachable one")

    # --- validate checks every host --------------------------------------------------------
    status, out, err, _ = h.run("validate", topo)
    check(status == 0 and f"host a ({a.address}): ok" in out and f"host b ({b.address}): ok" in out,
          "validate: every host answers and authenticates", out, err)

    # --- a daemon's host name (its choice) cannot drive the console's terminal --------------
    def odd_hostname():
        libc = ctypes.CDLL(None, use_errno=True)
        name = b"evil\x1b[31mRED\x07"
        if libc.unshare(0x04000000) != 0 or libc.sethostname(name, len(name)) != 0:  # CLONE_NEWUTS
            os._exit(97)
    odd = h.start("odd", preexec_fn=odd_hostname)
    status, out, err, _ = h.run("validate", h.topology("odd.yaml", f"""name: odd
{h.hosts_yaml(odd)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 10}}}}
  c: {{class: Consume, library: LIB}}
streams:
  - {{from: p.out, to: c.in}}
"""))
    check(status == 0 and f"host odd ({odd.address}): ok, sluiced on evil\\x1b[31mRED\\x07" in out
          and "\x1b" not in out and "\x07" not in out,
          "validate shows a daemon's host name with its control characters escaped", repr(out), err)
    odd.stop()
    status, out, err, _ = h.run("validate", topo, token=wrong)
    check(status == 4 and "the tokens differ" in err, "validate with a wrong token: exit 4, why", out, err)

    # --- plain bytes at the TLS port: closed, the daemon serving -------------------------------
    # A console of protocol version 1 says hello in plain text: it is told why, in its framing.
    v1_hello = frame(field(1, uint_field(1, 1) + field(2, os.urandom(32))))
    closed, answer = plain(a.port, v1_hello)
    reply = parse(first_frame(answer))
    result = parse(reply[AUTH_RESULT][0]) if AUTH_RESULT in reply else {}
    check(closed and result.get(1, [0]) == [0] and b"TLS 1.3" in result.get(3, [b""])[0]
          and b"run a console of the same sluice version" in result.get(3, [b""])[0],
          "a version-1 console gets a plain refusal that says to upgrade, then the connection closes", reply)
    logged(a, "a console of protocol version 1 (plain text); told it to upgrade", "the daemon logs the old console")
    cases = [
        ("random bytes", b"G" + os.urandom(4095), False),
        ("an HTTP request", b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", False),
        ("a plain frame with a huge length", struct.pack(">I", 0xFFFFFFF0) + os.urandom(64), False),
        ("a TLS record header, then garbage", b"\x16\x03\x01\x00\x80" + os.urandom(128), False),
        ("half a ClientHello, then end of file", b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03", True),
        ("a malformed ClientHello", b"\x16\x03\x01\x00\x2f\x01\x00\x00\x2b\x03\x01" + os.urandom(32) +
         b"\x00\x00\x02\x00\x2f\x01\x00", False),
    ]
    launched = {d.name: len(d.app_pids()) for d in (a, b)}  # validate's, above
    for d in (a, b):
        for what, data, shut in cases:
            closed, _ = plain(d.port, data, shut_wr=shut)
            check(closed and d.serving(), f"{d.name}: {what}: connection dropped, daemon serving")
        check(not children(d.pid) and len(d.app_pids()) == launched[d.name], f"{d.name}: hostile input started nothing")
    logged(a, "not a TLS client (first byte 0x47 ('G': plain text, an HTTP request?))",
           "the daemon logs a client that is not TLS")

    # --- hostile frames inside TLS, before the hello ------------------------------------------
    key = psk(h.token)
    launch = field(LAUNCH, field(1, b"evil") + field(2, b"name: z\n") + field(6, b"a"))
    for what, data, reason in [
        ("a launch before the hello", frame(launch), "expected hello, got launch"),
        ("a frame over 4 KiB before the hello", struct.pack(">I", 5000) + b"x" * 100, "exceeds the limit of 4096"),
        ("garbage before the hello", b"\x00\x00\x00\x05\xff\xff\xff\xff\xff", "malformed message"),
    ]:
        c = SClient(a.port, key)
        c.send(data)
        closed = c.closed_by_peer(6)
        c.close()
        check(closed and a.serving(), f"inside TLS, {what}: dropped, daemon serving")
        logged(a, reason, f"inside TLS, {what}: the daemon logs why ({reason})")
    check(not children(a.pid) and len(a.app_pids()) == launched["a"], "hostile frames before the hello started nothing")

    # --- hostile input after the hello: refused, app daemons killed, daemon serving -----------
    c = SClient(a.port, key)
    c.send(hello())
    opened = c.message()
    result = parse(opened[AUTH_RESULT][0]) if opened and AUTH_RESULT in opened else {}
    check(result.get(1) == [1], "a hand-made console (openssl s_client, PSK = HKDF(token)) opens a session", opened)
    c.send(frame(field(START_UNIT, field(2, b"w"))))  # start_unit with nothing launched
    reply = c.message()
    check(reply and ERROR in reply and b"no application is running" in reply[ERROR][0], "start_unit before launch: an error reply")
    # A launch whose topology does not parse: the app daemon reports it and exits.
    launch_bad = field(LAUNCH, field(1, b"x") + field(2, b"filters: [") + field(3, b"evil.yaml") + field(4, b"/") +
                       field(5, field(1, b"a")) + field(6, b"a"))
    c.send(frame(launch_bad))
    seen = []
    while not (seen and seen[-1] == EXIT_REPORT):
        m = c.message(10)
        if m is None:
            break
        seen += list(m)
    check(FAILURE in seen and seen[-1] == EXIT_REPORT, "a bad launch: failure relayed, then the exit report", seen)
    c.send(struct.pack(">I", 0x7FFFFFFF))
    check(c.closed_by_peer(5), "authenticated, then an oversized frame: dropped")
    c.close()
    c = SClient(b.port, key)
    c.send(hello() + frame(field(LAUNCH, field(1, b"x") + field(2, b"name: z\n") + field(6, b"b"))) + os.urandom(100))
    check(c.closed_by_peer(5), "authenticated, launch, then garbage: dropped")
    c.close()
    time.sleep(0.5)
    check(a.serving() and b.serving() and not children(a.pid) and not children(b.pid),
          "after authenticated garbage: daemons serving, no app daemon left")

    # --- a half-open connection does not block anyone and is timed out ------------------------
    idle = socket.create_connection(("127.0.0.1", a.port), timeout=10)
    started = time.time()
    status, out, err, _ = h.run("run", topo, "--no-progress")
    check(status == 0 and "units of work: 3/3 finished" in err, "a correct run works beside a half-open connection", err)
    check(closed_by_peer(idle, 10) and time.time() - started < 10, "an idle unauthenticated connection is timed out")
    idle.close()
    logged(a, "did not authenticate within 5 s", "the daemon logs the timeout")
    check(a.serving() and b.serving(), "both daemons still serving")


if __name__ == "__main__":
    main(test)
