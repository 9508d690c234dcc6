"""TLS for the daemons' tests, with tools independent of the code under test: the PSK a
token gives (HKDF-SHA256, written here from docs/protocol.md), a hand-made console over
`openssl s_client`, a TCP proxy that records or alters what passes, and a small PKI made
with the `openssl` command."""
import hashlib
import hmac
import os
import socket
import subprocess
import threading
import time

from wire import parse, split_frames, HEARTBEAT

PSK_LABEL = b"sluice control psk v1"


def token_bytes(token_file):
    with open(token_file, "rb") as f:
        return f.read().rstrip(b" \t\r\n")


def psk(token_file):
    """HKDF-SHA256(salt "", ikm token, info "sluice control psk v1", 32 bytes), in hex."""
    prk = hmac.new(b"\0" * 32, token_bytes(token_file), hashlib.sha256).digest()
    return hmac.new(prk, PSK_LABEL + b"\x01", hashlib.sha256).hexdigest()


class SClient:
    """A hand-made console: `openssl s_client` in TLS 1.3 PSK mode. What is sent goes into
    the TLS session as is; what comes out is collected by a thread."""

    def __init__(self, port, psk_hex, identity="sluice"):
        self.proc = subprocess.Popen(
            ["openssl", "s_client", "-connect", f"127.0.0.1:{port}", "-tls1_3", "-psk", psk_hex,
             "-psk_identity", identity, "-quiet", "-nocommands"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.buffer = b""
        self.eof = False
        self.cond = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            data = self.proc.stdout.read1(65536)
            with self.cond:
                if not data:
                    self.eof = True
                    self.cond.notify_all()
                    return
                self.buffer += data
                self.cond.notify_all()

    def send(self, data):
        try:
            self.proc.stdin.write(data)
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass

    def message(self, timeout=5, heartbeats=False):
        """The next message ({field: [values]}), or None at the end of the session."""
        deadline = time.time() + timeout
        with self.cond:
            while True:
                bodies, rest = split_frames(self.buffer)
                if bodies:
                    first = bodies[0]
                    self.buffer = self.buffer[4 + len(first):]
                    m = parse(first)
                    if HEARTBEAT in m and not heartbeats:
                        continue
                    return m
                if self.eof:
                    return None
                left = deadline - time.time()
                if left <= 0:
                    raise TimeoutError("no message within %s s" % timeout)
                self.cond.wait(left)

    def closed_by_peer(self, timeout):
        """True when the daemon ends the session within timeout."""
        deadline = time.time() + timeout
        with self.cond:
            while not self.eof and time.time() < deadline:
                self.cond.wait(deadline - time.time())
            return self.eof

    def close(self):
        if self.proc.poll() is None:
            self.proc.kill()
        self.proc.wait()
        self.reader.join(5)
        for f in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            try:
                f.close()
            except (BrokenPipeError, OSError):
                pass


class Proxy:
    """A TCP proxy on 127.0.0.1 in front of 127.0.0.1:`port`: sees every byte both ways, parsed
    as TLS records. `tamper_up(length)` flips a byte inside the first client -> server
    application-data record of at least `length` bytes; `tamper_down()` does that to the
    first server -> client application-data record sent after the client's second one (its
    Finished, then its hello: so the daemon's answer to the hello)."""

    def __init__(self, port):
        self.target = port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.up = b""     # everything client -> server
        self.down = b""   # everything server -> client
        self.tamper_up_min = None
        self.tamper_down_armed = False
        self.tampered = []  # ("up" | "down", record length)
        self.lock = threading.Lock()
        self.sockets = []
        self.running = True
        threading.Thread(target=self._accept, daemon=True).start()

    def tamper_up(self, length):
        self.tamper_up_min = length

    def tamper_down(self):
        self.tamper_down_armed = True

    def _accept(self):
        while self.running:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            server = socket.create_connection(("127.0.0.1", self.target))
            with self.lock:
                self.sockets += [client, server]
            connection = {"up_app_records": 0}
            threading.Thread(target=self._pump, args=(client, server, "up", connection), daemon=True).start()
            threading.Thread(target=self._pump, args=(server, client, "down", connection), daemon=True).start()

    def _alter(self, direction, record, connection):
        kind, length = record[0], len(record) - 5
        with self.lock:
            if kind != 0x17:
                return record
            if direction == "up":
                connection["up_app_records"] += 1
                if self.tamper_up_min is not None and length >= self.tamper_up_min:
                    self.tamper_up_min = None
                else:
                    return record
            else:
                if not (self.tamper_down_armed and connection["up_app_records"] >= 2):
                    return record
                self.tamper_down_armed = False
            self.tampered.append((direction, length))
        altered = bytearray(record)
        altered[5 + length // 2] ^= 0x01
        return bytes(altered)

    def _pump(self, src, dst, direction, connection):
        pending = b""
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                with self.lock:
                    if direction == "up":
                        self.up += data
                    else:
                        self.down += data
                pending += data
                out = b""
                while len(pending) >= 5:
                    n = 5 + int.from_bytes(pending[3:5], "big")
                    if len(pending) < n:
                        break
                    out += self._alter(direction, pending[:n], connection)
                    pending = pending[n:]
                if out:
                    dst.sendall(out)
        except OSError:
            pass
        # Half-close, as TCP would end to end: what flows the other way (an alert) goes on.
        for s, how in ((dst, socket.SHUT_WR), (src, socket.SHUT_RD)):
            try:
                s.shutdown(how)
            except OSError:
                pass

    def close(self):
        self.running = False
        self.listener.close()
        with self.lock:
            for s in self.sockets:
                s.close()


class Pki:
    """Certificate authorities and certificates (EC P-256) in `directory`."""

    def __init__(self, directory):
        self.dir = directory
        os.makedirs(directory, exist_ok=True)

    def _openssl(self, *args):
        p = subprocess.run(["openssl"] + list(args), capture_output=True, text=True)
        if p.returncode != 0:
            raise RuntimeError("openssl " + " ".join(args) + ":\n" + p.stderr)

    def ca(self, name):
        cert, key = os.path.join(self.dir, name + ".pem"), os.path.join(self.dir, name + ".key")
        self._openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                      "-keyout", key, "-out", cert, "-days", "30", "-subj", "/CN=" + name)
        os.chmod(key, 0o600)
        return cert, key

    def issue(self, ca, name, san="IP:127.0.0.1,DNS:localhost", days=30, usage="serverAuth,clientAuth"):
        """A certificate for `name` signed by `ca` (cert, key); days=-1 makes it expired; `usage` is its
        extendedKeyUsage."""
        cert, key = os.path.join(self.dir, name + ".pem"), os.path.join(self.dir, name + ".key")
        csr, ext = os.path.join(self.dir, name + ".csr"), os.path.join(self.dir, name + ".ext")
        with open(ext, "w") as f:
            f.write("basicConstraints=CA:FALSE\nextendedKeyUsage=" + usage + "\n")
            if san:
                f.write("subjectAltName=" + san + "\n")
        self._openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                      "-keyout", key, "-out", csr, "-subj", "/CN=" + name)
        self._openssl("x509", "-req", "-in", csr, "-CA", ca[0], "-CAkey", ca[1], "-set_serial",
                      str(int.from_bytes(os.urandom(8), "big")), "-days", str(days), "-extfile", ext, "-out", cert)
        os.chmod(key, 0o600)
        return cert, key

    @staticmethod
    def options(cert_key, ca):
        return ["--cert", cert_key[0], "--key", cert_key[1], "--ca", ca[0]]
