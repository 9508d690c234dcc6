#!/usr/bin/env python3
"""Security: token files, wrong tokens, unreachable hosts, and hostile bytes at every
listening port of the host daemon; the daemon keeps serving and a correct run works after.

  security_test.py BUILD_DIR SOURCE_DIR
"""
import hashlib
import hmac
import os
import socket
import struct
import subprocess
import time

from harness import Failed, check, children, main, pipelines


def varint(n):
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def field(number, payload):  # length-delimited protobuf field
    return varint(number << 3 | 2) + varint(len(payload)) + payload


def frame(body):
    return struct.pack(">I", len(body)) + body


def closed_by_peer(sock, timeout):
    """True when the daemon closes the connection within timeout (after any replies)."""
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


def read_frame(sock):
    def exactly(n):
        data = b""
        while len(data) < n:
            chunk = sock.recv(n - len(data))
            if not chunk:
                raise EOFError("closed")
            data += chunk
        return data
    (n,) = struct.unpack(">I", exactly(4))
    return exactly(n)


def parse(body):
    """Top-level protobuf fields of body: {number: [bytes or int]}."""
    out, i = {}, 0
    while i < len(body):
        key, i = _varint(body, i)
        number, wire = key >> 3, key & 7
        if wire == 2:
            n, i = _varint(body, i)
            out.setdefault(number, []).append(body[i:i + n])
            i += n
        elif wire == 0:
            v, i = _varint(body, i)
            out.setdefault(number, []).append(v)
        else:
            raise ValueError("unexpected wire type")
    return out


def _varint(b, i):
    shift = value = 0
    while True:
        c = b[i]
        i += 1
        value |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return value, i


def authenticate(port, token):
    """A console's handshake, by hand. Returns the authenticated socket."""
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    client_nonce = os.urandom(32)
    s.sendall(frame(field(1, varint(1 << 3) + varint(1) + field(2, client_nonce))))
    challenge = parse(parse(read_frame(s))[2][0])
    server_nonce = challenge[2][0]
    mac = hmac.new(token, b"sluice-client" + server_nonce + client_nonce, hashlib.sha256).digest()
    s.sendall(frame(field(3, field(1, mac))))
    result = parse(parse(read_frame(s))[4][0])
    proof = hmac.new(token, b"sluice-server" + client_nonce + server_nonce, hashlib.sha256).digest()
    assert result.get(1) == [1] and result[2][0] == proof, result
    return s


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

    # --- a wrong token: refused, named, nothing started ------------------------------------
    wrong = h.write_token("wrong")
    status, out, err, _ = h.run("run", topo, "--no-progress", token=wrong)
    check(status == 4, "wrong token: exit status 4", status, err)
    check(f"host a ({a.address}): authentication refused" in err, "wrong token: host a named", err)
    check("nothing was started" in err, "wrong token: says nothing was started", err)
    check("authentication failed (wrong token)" in a.text(), "wrong token: the daemon logs the refusal", a.text())
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
    status, out, err, _ = h.run("validate", topo, token=wrong)
    check(status == 4, "validate with a wrong token: exit 4", out, err)

    # --- hostile bytes at every listening port ------------------------------------------------
    nonce = os.urandom(32)
    hello = field(1, field(1, b"\x01") + field(2, nonce))  # Envelope{hello{..}} (version as bytes: malformed type)
    good_hello = field(1, varint(1 << 3 | 0) + varint(1) + field(2, nonce))
    launch = field(5, field(1, b"evil") + field(6, b"a"))
    cases = [
        ("random bytes", os.urandom(4096)),
        ("truncated frame", struct.pack(">I", 200) + b"\x0a\x05abc"),
        ("oversized length", struct.pack(">I", 0xFFFFFFF0) + os.urandom(64)),
        ("length just over the limit", struct.pack(">I", (16 << 20) + 1)),
        ("zero length", struct.pack(">I", 0)),
        ("malformed protobuf", frame(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")),
        ("unknown message type", frame(field(99, b"hi"))),
        ("wrongly typed hello", frame(hello)),
        ("launch before authenticating", frame(launch)),
        ("hello then garbage", frame(good_hello) + os.urandom(300)),
        ("hello then a bogus response", frame(good_hello) + frame(field(3, field(1, os.urandom(32))))),
    ]
    for d in (a, b):
        for what, data in cases:
            s = socket.create_connection(("127.0.0.1", d.port), timeout=5)
            try:
                s.sendall(data)
                if what == "truncated frame":
                    s.shutdown(socket.SHUT_WR)
            except (BrokenPipeError, ConnectionResetError):
                pass
            closed = closed_by_peer(s, 6)
            s.close()
            check(closed and d.serving(), f"{d.name}: {what}: connection dropped, daemon serving")
        check(not children(d.pid) and not d.app_pids(), f"{d.name}: hostile input started nothing")

    # --- hostile input after authenticating: refused, app daemons killed, daemon serving ---
    token = open(h.token, "rb").read().strip()
    s = authenticate(a.port, token)
    check(True, "a hand-made console authenticates (HMAC-SHA256 both ways)")
    s.sendall(frame(field(9, field(2, b"w"))))  # start_unit with nothing launched
    reply = parse(read_frame(s))
    while 15 in reply:  # heartbeats
        reply = parse(read_frame(s))
    check(17 in reply and b"no application is running" in reply[17][0], "start_unit before launch: an error reply")
    # A launch whose topology does not parse: the app daemon reports it and exits.
    launch_bad = field(5, field(1, b"x") + field(2, b"filters: [") + field(3, b"evil.yaml") + field(4, b"/") +
                       field(5, field(1, b"a")) + field(6, b"a"))
    s.sendall(frame(launch_bad))
    seen = []
    while not (seen and seen[-1] == 16):
        msg = parse(read_frame(s))
        seen += [k for k in msg if k != 15]
    check(12 in seen and seen[-1] == 16, "a bad launch: failure relayed, then the exit report", seen)
    s.sendall(struct.pack(">I", 0x7FFFFFFF))
    check(closed_by_peer(s, 5), "authenticated, then an oversized frame: dropped")
    s.close()
    s = authenticate(b.port, token)
    s.sendall(frame(field(5, field(1, b"x") + field(2, b"name: z\n") + field(6, b"b"))) + os.urandom(100))
    check(closed_by_peer(s, 5), "authenticated, launch, then garbage: dropped")
    s.close()
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
    check("did not authenticate within 5 s" in a.text(), "the daemon logs the timeout")
    check(a.serving() and b.serving(), "both daemons still serving")


if __name__ == "__main__":
    main(test)
