#!/usr/bin/env python3
"""The control connections' TLS, tried as an attacker on the path and as a misconfigured
site would: the token never crosses the wire; a record altered inside a session is
rejected and nothing is launched; a TLS console against a port that does not speak TLS,
certificates from another CA, an expired one, one for another host, and a console and a
daemon in different modes each get a clear refusal on both sides.

  tls_test.py BUILD_DIR SOURCE_DIR
"""
import os
import shutil
import socket
import ssl
import subprocess
import threading

from harness import check, children, main
from tls_tools import Pki, Proxy, psk, token_bytes


def one_host(h, d, name="one.yaml", count=2000):
    return h.topology(name, f"""name: one
hosts:
  a: {d.address}
filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: {count}}}}}
  c: {{class: Consume, library: LIB}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
""")


def via(h, topo, proxy):
    """The same topology, with host a reached through the proxy."""
    return ["--hosts", f"a=127.0.0.1:{proxy.port}"]


class PlainServer:
    """A server that does not speak TLS: reads what comes, answers `answer` (if any) and
    closes, like a sluiced of protocol version 1 (which reads a huge frame length and closes)."""

    def __init__(self, answer=b""):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(4)
        self.port = self.sock.getsockname()[1]
        self.answer = answer
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self):
        while True:
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            try:
                c.recv(4096)
                if self.answer:
                    c.sendall(self.answer)
            except OSError:
                pass
            c.close()

    def close(self):
        self.sock.close()


def test(h):
    a = h.start("a")
    topo = one_host(h, a)

    # --- the token never crosses the wire ---------------------------------------------------
    proxy = Proxy(a.port)
    h.cleanups.append(proxy.close)
    status, out, err, _ = h.run("run", topo, "--no-progress", *via(h, topo, proxy))
    check(status == 0, "a run through a recording proxy works", err)
    token, key = token_bytes(h.token), bytes.fromhex(psk(h.token))
    wire = proxy.up + proxy.down
    check(proxy.up[:1] == b"\x16" and proxy.down[:1] == b"\x16", "both sides speak TLS from the first byte")
    check(token not in wire and key not in wire and token.hex().encode() not in wire,
          f"neither the token nor the PSK appears in the {len(wire)} bytes that crossed")
    check(b"Produce" not in proxy.up, "the launch (the topology's text) crossed encrypted")

    # --- a record altered on the way, console -> daemon: rejected, nothing launched ---------
    proxy.tamper_up(256)  # the launch: the only record this large
    mark = len(a.text())
    status, out, err, _ = h.run("run", topo, "--no-progress", *via(h, topo, proxy))
    check(proxy.tampered and proxy.tampered[0][0] == "up", "the proxy altered the launch record", proxy.tampered)
    check(status == 1 and "the daemon rejected a message from this console that failed its integrity check "
          "(TLS alert: bad record MAC): the traffic was altered on the way" in err,
          "console -> daemon tampering: the run fails and the console says the traffic was altered", err)
    log = a.text()[mark:]
    check("a message from the console failed its integrity check (TLS: bad record MAC)" in log,
          "the daemon logs the altered record", log)
    check("launched application" not in log and not children(a.pid), "the altered launch started nothing", log)

    # --- daemon -> console: the console rejects the record ----------------------------------
    proxy.tamper_down()
    status, out, err, _ = h.run("validate", topo, *via(h, topo, proxy))
    check(proxy.tampered[-1][0] == "down", "the proxy altered the daemon's answer to the hello", proxy.tampered)
    check(status == 4 and "a message from the daemon failed its integrity check (TLS: bad record MAC): the "
          "traffic was altered on the way" in err, "daemon -> console tampering: refused and explained", out, err)
    check(a.serving(), "the daemon still serves")

    # --- a TLS console against a port that does not speak TLS -------------------------------
    old = PlainServer()  # like a version-1 sluiced: the ClientHello is a bad frame; it closes
    h.cleanups.append(old.close)
    status, _, err, _ = h.run("validate", topo, "--hosts", f"a=127.0.0.1:{old.port}")
    check(status == 4 and f"host a (127.0.0.1:{old.port}): the daemon closed the connection during the TLS "
          "handshake (tried again for 5 s): it is busy" in err and "or does not speak TLS (an older sluiced?)" in err,
          "a port that closes: clear refusal", err)
    http = PlainServer(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
    h.cleanups.append(http.close)
    status, _, err, _ = h.run("validate", topo, "--hosts", f"a=127.0.0.1:{http.port}")
    check(status == 4 and "does not speak TLS 1.3" in err and "run a sluiced of this version there" in err,
          "a port that answers in plain text: clear refusal", err)

    # --- a TLS 1.2-only client: named as such, not as one that offered no token ----------------
    mark = len(a.text())
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    with socket.create_connection(("127.0.0.1", a.port), timeout=10) as raw:
        try:
            with ctx.wrap_socket(raw):
                pass
            check(False, "a TLS 1.2 handshake with sluiced fails")
        except (ssl.SSLError, OSError):
            pass
    h.wait_for(lambda: "refused: the client does not speak TLS 1.3" in a.text()[mark:], 5,
               "the daemon to log a TLS 1.2-only client as one that does not speak TLS 1.3")
    check("offered no token" not in a.text()[mark:], "and not as one that offered no token", a.text()[mark:])

    # --- certificates --------------------------------------------------------------------------
    pki = Pki(os.path.join(h.dir, "pki"))
    ca, other_ca = pki.ca("site-ca"), pki.ca("other-ca")
    daemon_cert = pki.issue(ca, "daemon")
    console_cert = pki.issue(ca, "console", san=None)
    stranger = pki.issue(other_ca, "stranger", san=None)
    expired = pki.issue(ca, "expired", san=None, days=-1)
    elsewhere = pki.issue(ca, "elsewhere", san="DNS:elsewhere.example")
    server_only = pki.issue(ca, "server-only", san=None, usage="serverAuth")
    client_only = pki.issue(ca, "client-only", usage="clientAuth")

    c = h.start("c", args=Pki.options(daemon_cert, ca))
    check("TLS 1.3 with certificates" in c.text(), "sluiced says it uses certificates")
    ctopo = one_host(h, c, "cert.yaml")
    status, out, err, _ = h.run("run", ctopo, "--no-progress", *Pki.options(console_cert, ca))
    check(status == 0 and "units of work: 1/1 finished" in err, "certificates: a run works", err)
    check("authenticated (TLSv1.3" in c.text() and "certificate CN=console" in c.text(),
          "the daemon logs the console's certificate", c.text())

    def refused(what, options, console_says, daemon_says, daemon=c, topology=ctopo):
        mark = len(daemon.text())
        status, out, err, _ = h.run("validate", topology, *options)
        check(status == 4 and console_says in err, f"{what}: the console says why", err)
        h.wait_for(lambda: daemon_says in daemon.text()[mark:], 5, f"{what}: the daemon's log line")
        check(True, f"{what}: the daemon logs why ({daemon_says})")
        check(not children(daemon.pid), f"{what}: nothing started")

    refused("a console certificate from another CA", Pki.options(stranger, ca),
            "the daemon refused this console's certificate because it is not signed by the daemon's --ca "
            "(TLS alert: unknown CA)",
            "refused the console's certificate (CN=stranger): it is not signed by this daemon's --ca")
    refused("an expired console certificate", Pki.options(expired, ca),
            "the daemon refused this console's certificate because it has expired (TLS alert: certificate expired); "
            f"renew {expired[0]}",
            "refused the console's certificate (CN=expired): certificate has expired")
    refused("a console that trusts another CA", Pki.options(stranger, other_ca),
            "refused the daemon: the daemon's certificate (CN=daemon) is not signed by this console's --ca",
            "the console refused this daemon's certificate (TLS alert: unknown CA)")
    refused("a console certificate for servers only", Pki.options(server_only, ca),
            "the daemon refused this console's certificate (TLS alert: unsupported certificate), most likely because "
            f"its extendedKeyUsage lacks clientAuth; issue {server_only[0]} with extendedKeyUsage=clientAuth",
            "refused the console's certificate (CN=server-only): it may not be used by a client: its extendedKeyUsage "
            "lacks clientAuth")
    refused("a token console against a certificate daemon", [],
            "the daemon uses certificates (sluiced --cert/--key/--ca) and this console a token; run the console "
            "with --cert, --key and --ca",
            "refused: the console uses a token (TLS-PSK) and this daemon certificates")
    refused("a certificate console against a token daemon", Pki.options(console_cert, ca),
            "the daemon uses a token (TLS-PSK) and this console certificates; run the console with --token-file",
            "refused: the client offered no token (TLS-PSK)", daemon=a, topology=topo)

    e = h.start("e", args=Pki.options(elsewhere, ca))
    refused("a daemon certificate for another host", Pki.options(console_cert, ca),
            "refused the daemon: the daemon's certificate (CN=elsewhere) is not issued for the address in hosts:",
            "the console refused this daemon's certificate", daemon=e, topology=one_host(h, e, "elsewhere.yaml"))

    d = h.start("d", args=Pki.options(client_only, ca))
    refused("a daemon certificate for clients only", Pki.options(console_cert, ca),
            "refused the daemon: the daemon's certificate (CN=client-only) may not serve: its extendedKeyUsage lacks "
            "serverAuth; issue sluiced's --cert with extendedKeyUsage=serverAuth",
            f"the console refused this daemon's certificate (TLS alert: unsupported certificate), most likely because "
            f"its extendedKeyUsage lacks serverAuth; issue {client_only[0]}", daemon=d, topology=one_host(h, d, "client-only.yaml"))

    # --- options that do not fit together ------------------------------------------------------
    for what, args, expect in [
        ("--cert without --key and --ca", ["--cert", daemon_cert[0]], "--cert, --key and --ca go together"),
        ("both a token and certificates", ["--token-file", h.token] + Pki.options(daemon_cert, ca), "not both"),
        ("a key that is not the certificate's", ["--cert", daemon_cert[0], "--key", console_cert[1], "--ca", ca[0]],
         "does not match certificate"),
        ("a missing CA file", ["--cert", daemon_cert[0], "--key", daemon_cert[1], "--ca", os.path.join(h.dir, "nope")],
         "(--ca): No such file or directory"),
    ]:
        p = subprocess.run([h.sluiced, "--listen", "127.0.0.1:0"] + args, capture_output=True, text=True, timeout=10)
        check(p.returncode != 0 and expect in p.stderr, f"sluiced refuses {what}", p.stderr)
    loose = pki.issue(ca, "loose")
    os.chmod(loose[1], 0o644)
    p = subprocess.run([h.sluiced, "--listen", "127.0.0.1:0"] + Pki.options(loose, ca), capture_output=True, text=True,
                       timeout=10)
    check(p.returncode != 0 and "is accessible by other users (mode 644); make it private with: chmod 600" in p.stderr,
          "sluiced refuses a private key that others can read", p.stderr)
    # A CA file others may write to: whoever appends their own CA to it is trusted at the next
    # start (an outside review made itself a console of another user's daemon that way).
    open_ca = os.path.join(h.dir, "open-ca.pem")
    shutil.copy(ca[0], open_ca)
    os.chmod(open_ca, 0o666)
    p = subprocess.run([h.sluiced, "--listen", "127.0.0.1:0", "--cert", daemon_cert[0], "--key", daemon_cert[1],
                        "--ca", open_ca], capture_output=True, text=True, timeout=10)
    check(p.returncode != 0 and f"CA certificate (--ca) '{open_ca}' may be written by other users ('{open_ca}', mode 666)" in p.stderr
          and f"chmod o-w {open_ca}" in p.stderr, "sluiced refuses a CA file that others may write to", p.stderr)
    x = h.start("x", args=Pki.options(expired, ca))
    check(f"certificate '{expired[0]}' (--cert) expired on" in x.text(), "sluiced warns that its certificate expired",
          x.text())
    status, _, err, _ = h.run("validate", ctopo, "--cert", console_cert[0])
    check(status == 2 and "--cert requires" in err, "the console refuses --cert alone (usage, status 2)", err)


if __name__ == "__main__":
    main(test)
