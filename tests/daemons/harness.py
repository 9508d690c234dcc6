"""Helpers for the multi-host tests: real sluiced processes on loopback (or in network
namespaces), token files, topologies, the console, and checks that nothing is left behind.

Every test builds a Harness in a `with` block; leaving it (normally or by an exception)
kills every process the test started, by pid, and removes its files.
"""
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77  # ctest SKIP_RETURN_CODE


class Failed(Exception):
    pass


def check(cond, what, *details):
    if not cond:
        raise Failed(what + ("\n" + "\n".join("  | " + l for d in details for l in str(d).splitlines()) if details else ""))
    print("ok:", what, flush=True)


def alive(pid):
    """True when pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
        return state != "Z"
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return False


def children(pid):
    """Live child pids of pid."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                out.append(int(d))
        except (FileNotFoundError, ProcessLookupError, IndexError, ValueError):
            pass
    return out


def listening(port, netns=None, owner=None):
    """True when something (a process named `owner`, if given) listens on TCP `port`.
    Ephemeral ports are reused by unrelated processes, so checks of an app daemon's data
    port ask for the owner."""
    cmd = ["ss", "-Hltnp", f"sport = :{port}"]
    if netns:
        cmd = ["ip", "netns", "exec", netns] + cmd
    out = subprocess.run(cmd, capture_output=True, text=True).stdout.strip()
    return bool(out) and (owner is None or f'"{owner}"' in out)


def free_consecutive_ports(count):
    """`count` consecutive loopback ports that nothing listens on now."""
    for base in range(42000, 60000, 89):
        socks = []
        try:
            for port in range(base, base + count):
                s = socket.socket()
                socks.append(s)
                s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for s in socks:
                s.close()
    raise AssertionError(f"no {count} consecutive free ports")


class Daemon:
    def __init__(self, harness, name, listen, token_file, netns=None, args=(), preexec_fn=None):
        """args: more sluiced options; with --cert, no --token-file is passed."""
        self.name = name
        self.log_path = os.path.join(harness.dir, f"sluiced-{name}.log")
        self.log = open(self.log_path, "w")
        cmd = [harness.sluiced, "--listen", listen] + list(args)
        if "--cert" not in args:
            cmd += ["--token-file", token_file]
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        self.proc = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, preexec_fn=preexec_fn)
        self.pid = self.proc.pid  # ip netns exec execs, so this is sluiced itself
        self.address = None
        try:
            deadline = time.time() + 10
            while time.time() < deadline:
                m = re.search(r"listening on (\S+?);", self.text())
                if m:
                    self.address = m.group(1)
                    break
                if self.proc.poll() is not None:
                    break
                time.sleep(0.05)
            if self.address is None:
                raise Failed(f"sluiced {name} did not start:\n{self.text()}")
        except BaseException:  # not yet in harness.daemons: stop it here, or it would outlive us
            self.stop()
            raise
        self.port = int(self.address.rsplit(":", 1)[1])

    def text(self):
        with open(self.log_path, errors="replace") as f:  # a payload or a filter may log any bytes
            return f.read()

    def app_pids(self):
        pids = []
        for p in re.findall(r"launched application .* sluice-appd pid (\d+)", self.text()):
            if int(p) not in pids:
                pids.append(int(p))
        return pids

    def data_ports(self):
        return [int(p) for p in re.findall(r"data plane on \S+:(\d+)", self.text())]

    def serving(self):
        return self.proc.poll() is None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()



def wait_until(cond, timeout, what):
    """Polls cond() every 50 ms until it is true; Failed after `timeout` seconds."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        if cond():
            return
        time.sleep(0.05)
    raise Failed("timed out waiting for " + what)

class Harness:
    def __init__(self, build, source, prefix="sluice-daemons-"):
        self.prefix = prefix  # of the temporary directory
        self.build = os.path.abspath(build)
        self.source = os.path.abspath(source)
        self.sluiced = os.path.join(self.build, "daemons", "sluiced")
        self.appd = os.path.join(self.build, "daemons", "sluice-appd")
        self.console = os.path.join(self.build, "console", "sluice")
        self.lib = os.path.join(self.build, "examples", "libexamples.so")
        self.daemons = []
        self.cleanups = []  # callables, run last-in first-out

    def __enter__(self):
        self.tmp = tempfile.TemporaryDirectory(prefix=self.prefix)
        self.dir = self.tmp.name
        self.token = self.write_token("token")
        return self

    def __exit__(self, *exc):
        every_app = [p for d in self.daemons for p in d.app_pids()]
        for d in self.daemons:
            d.stop()
        for pid in every_app:  # belt and braces: nothing of ours survives a failed test
            if alive(pid):
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
        for c in reversed(self.cleanups):
            try:
                c()
            except Exception as e:  # keep cleaning
                print("cleanup:", e, file=sys.stderr)
        if exc[0] is not None:
            for d in self.daemons:
                print(f"--- sluiced {d.name} log ---\n{d.text()[-6000:]}", file=sys.stderr)
        self.tmp.cleanup()
        return False

    def write_token(self, name, content=None, mode=0o600):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(content if content is not None else os.urandom(24).hex() + "\n")
        os.chmod(path, mode)
        return path

    def start(self, name, listen="127.0.0.1:0", token=None, netns=None, args=(), preexec_fn=None):
        d = Daemon(self, name, listen, token or self.token, netns, args, preexec_fn)
        self.daemons.append(d)
        return d

    def topology(self, name, text):
        path = os.path.join(self.dir, name)
        with open(path, "w") as f:
            f.write(text.replace("LIB", self.lib))
        return path

    def hosts_yaml(self, *daemons):
        return "hosts:\n" + "".join(f"  {d.name}: {d.address}\n" for d in daemons)

    def run(self, *args, timeout=300, netns=None, token=None):
        """Runs the console; returns (status, stdout, stderr, seconds)."""
        cmd = [self.console] + list(args)
        if "--token-file" not in args and "--cert" not in args:
            cmd += ["--token-file", token or self.token]
        if netns:
            cmd = ["ip", "netns", "exec", netns] + cmd
        start = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, time.time() - start

    def start_console(self, *args):
        cmd = [self.console] + list(args) + ["--token-file", self.token, "--no-progress"]
        out = open(os.path.join(self.dir, "console.out"), "w+")
        err = open(os.path.join(self.dir, "console.err"), "w+")
        p = subprocess.Popen(cmd, stdout=out, stderr=err)
        self.cleanups.append(lambda: (p.poll() is None and p.kill(), p.wait()))
        return p, out, err

    def wait_for(self, cond, timeout, what):
        wait_until(cond, timeout, what)

    def no_orphans(self, app_pids, what):
        deadline = time.time() + 3
        while time.time() < deadline and any(alive(p) for p in app_pids):
            time.sleep(0.05)
        check(app_pids and not any(alive(p) for p in app_pids), f"{what}: no app daemon left ({app_pids})")
        for d in self.daemons:
            if d.serving():
                left = children(d.pid)
                check(not left, f"{what}: sluiced {d.name} has no child left", left)
        ports = [p for d in self.daemons for p in d.data_ports()]
        busy = [p for p in ports if listening(p, owner="sluice-appd")]
        check(not busy, f"{what}: no data port left listening ({len(ports)} checked)", busy)


def received(text):
    """(buffers, verified) summed over the consumers' end-of-unit lines in text."""
    total = verified = 0
    for m in re.finditer(r"received (\d+) buffers, \d+ bytes; (\d+) verified in order", text):
        total += int(m.group(1))
        verified += int(m.group(2))
    return total, verified


def main(test):
    """Runs test(harness) with BUILD and SOURCE from argv; exit 0, 1 or SKIP."""
    build, source = sys.argv[1], sys.argv[2]
    try:
        with Harness(build, source) as h:
            test(h)
    except Failed as e:
        print("FAIL:", e, file=sys.stderr)
        sys.exit(1)
    except Skip as e:
        print("SKIP:", e)
        sys.exit(SKIP)
    print("PASS")


class Skip(Exception):
    pass


def pipelines(h, a, b, count=200000, units=("one", "two", "three")):
    """Two independent producer->consumer pipelines, one per host: no stream crosses."""
    return h.topology("pipelines.yaml", f"""name: pipelines
{h.hosts_yaml(a, b)}filters:
  pa: {{class: Produce, library: LIB, args: {{size: 1KiB, count: {count}}}, place: {{{a.name}: 1}}}}
  ca: {{class: Consume, library: LIB, place: {{{a.name}: 1}}}}
  pb: {{class: Produce, library: LIB, args: {{size: 1KiB, count: {count}}}, place: {{{b.name}: 2}}}}
  cb: {{class: Consume, library: LIB, place: {{{b.name}: 1}}}}
streams:
  - {{from: pa.out, to: ca.in, buffer_size: 1KiB}}
  - {{from: pb.out, to: cb.in, buffer_size: 1KiB}}
work: [{", ".join(units)}]
""")
