"""sluiced's and sluice-appd's command lines: a bad or missing value is refused at once with a
message that names the option and says what it accepts, exit status 2 (as the console's);
--help and --version work. Nothing is started: every refusal comes before the daemon
listens or reads its control socket. Then one sluiced writes its --ready-file in a directory
where symlinks were planted, and follows none."""
import os
import re
import signal
import socket
import subprocess

from harness import check, free_consecutive_ports, main, received


def run(args, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=10, **kwargs)


def refused(h, binary, args, expect, what):
    p = run([binary] + args)
    check(p.returncode == 2 and expect in p.stderr, f"{what}: status 2, '{expect}'",
          f"status {p.returncode}", p.stderr)


def test(h):
    token = ["--token-file", h.token]
    # sluiced: values that are not what the option accepts.
    refused(h, h.sluiced, ["--listen", "127.0.0.1"] + token,
            "--listen: address '127.0.0.1' has no port; write host:port, e.g. 127.0.0.1:7700 or [::1]:7700",
            "sluiced --listen without a port")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:99999"] + token,
            "--listen: '99999' in '127.0.0.1:99999' is not a port; use a number from 0 to 65535 (0: any free port)",
            "sluiced --listen with a port out of range")
    refused(h, h.sluiced, ["--listen", "::1:7700"] + token, "needs brackets around the host, e.g. [::1]:7700",
            "sluiced --listen with an IPv6 address without brackets")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:0", "--metrics", "localhost"] + token,
            "--metrics: address 'localhost' has no port", "sluiced --metrics without a port")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:0", "--metrics", "0.0.0.0:0"] + token, "--metrics-public",
            "sluiced --metrics on an address that is not loopback, without --metrics-public")
    refused(h, h.sluiced, ["--listen"], "--listen", "sluiced --listen without a value")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:0", "--bogus"] + token, "--bogus",
            "sluiced with an unknown option")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:0"], "--token-file is required", "sluiced without credentials")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:0", "--data-ports", "7799-7701"] + token,
            "--data-ports: '7799-7701' is not a port range: 7799 is above 7701; write the lower port first",
            "sluiced --data-ports upside down")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:0", "--data-ports", "0-100"] + token,
            "'0-100' is not a port range; write LO-HI, two ports from 1 to 65535", "sluiced --data-ports from 0")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:47702", "--data-ports", "47700-47709"] + token,
            "--data-ports 47700-47709 holds --listen's port 47702: an app daemon could never listen there",
            "sluiced --data-ports around its own control port")
    refused(h, h.sluiced, ["--listen", "127.0.0.1:0", "--metrics", "47705", "--data-ports", "47700-47709"] + token,
            "--data-ports 47700-47709 holds --metrics's port 47705", "sluiced --data-ports around its --metrics port")
    p = run([h.sluiced, "--help"])
    check(p.returncode == 0 and "--listen ADDR:PORT" in p.stdout and "--metrics-public" in p.stdout,
          "sluiced --help lists the options", p.stdout, p.stderr)
    p = run([h.sluiced, "--version"])
    check(p.returncode == 0 and p.stdout.startswith("sluiced "), "sluiced --version", p.stdout)

    # sluice-appd: its descriptors are whole numbers, and --control-fd is required.
    refused(h, h.appd, ["--control-fd", "3x"], "--control-fd '3x' is not a whole number from 0 to 1048576",
            "sluice-appd --control-fd with a bad value")
    refused(h, h.appd, ["--control-fd", "-1"], "--control-fd '-1' is not a whole number",
            "sluice-appd --control-fd with a negative value")
    refused(h, h.appd, ["--control-fd", "3", "--crash-fd", "four"], "--crash-fd 'four' is not a whole number",
            "sluice-appd --crash-fd with a bad value")
    refused(h, h.appd, [], "--control-fd is required", "sluice-appd without --control-fd")
    refused(h, h.appd, ["--control-fd"], "--control-fd", "sluice-appd --control-fd without a value")
    refused(h, h.appd, ["--control-fd", "3", "--crash-fd", "987654"],
            "--crash-fd 987654 is not an open file descriptor", "sluice-appd --crash-fd that is not open")
    p = run([h.appd, "--help"])
    check(p.returncode == 0 and "--control-fd FD" in p.stdout, "sluice-appd --help lists the options", p.stdout)
    p = run([h.appd, "--version"])
    check(p.returncode == 0 and p.stdout.startswith("sluice-appd "), "sluice-appd --version", p.stdout)

    # --ready-file in a directory others can write to: the temporary file beside it is made
    # exclusively under a fresh name, so symlinks planted at the names it used to use
    # (ready.tmp.PID) lead nowhere, and a symlink at the ready file itself is replaced.
    ready_dir = os.path.join(h.dir, "pub")
    os.mkdir(ready_dir)
    os.chmod(ready_dir, 0o1777)
    victim = os.path.join(h.dir, "victim")
    with open(victim, "w") as f:
        f.write("precious\n")
    with open("/proc/sys/kernel/ns_last_pid") as f:
        last = int(f.read())
    for pid in range(last + 1, last + 500):
        os.symlink(victim, os.path.join(ready_dir, f"ready.tmp.{pid}"))
    ready = os.path.join(ready_dir, "ready")
    os.symlink(victim, ready)
    d = h.start("ready", args=("--ready-file", ready))
    h.wait_for(lambda: not os.path.islink(ready) and os.path.exists(ready), 10, "sluiced to write its ready file")
    with open(ready) as f:
        written = f.read()
    with open(victim) as f:
        kept = f.read()
    check(written == d.address + "\n" and oct(os.stat(ready).st_mode & 0o777) == "0o644",
          "sluiced writes ADDR:PORT to its ready file, mode 0644", written)
    check(kept == "precious\n", "and follows no symlink planted in the directory", kept)
    left = [n for n in os.listdir(ready_dir) if n.startswith("ready.tmp.") and not os.path.islink(os.path.join(ready_dir, n))]
    check(not left, "and leaves no temporary file behind", left)

    # A --ready-file it cannot write: status 1, naming it, and the log never said it listened.
    p = run([h.sluiced, "--listen", "127.0.0.1:0", "--ready-file", os.path.join(h.dir, "no-dir", "ready")] + token)
    check(p.returncode == 1 and f"--ready-file: cannot write '{os.path.join(h.dir, 'no-dir', 'ready')}': cannot create a "
          "file beside it" in p.stderr
          and "listening on" not in p.stderr,
          "sluiced with a --ready-file it cannot write: status 1, named, without saying it listened",
          p.returncode, p.stderr)

    # Under systemd, stderr is the journal's stream (JOURNAL_STREAM names its device and
    # inode): each line leads with its syslog priority, so that journald files an error as an
    # error (`journalctl -p err`); elsewhere, nothing is added.
    journal = os.path.join(h.dir, "journal")
    missing = ["--listen", "127.0.0.1:0", "--token-file", os.path.join(h.dir, "no-token")]
    with open(journal, "w+") as f:
        st = os.fstat(f.fileno())
        subprocess.run([h.sluiced] + missing, stdout=f, stderr=f, timeout=10,
                       env=dict(os.environ, JOURNAL_STREAM=f"{st.st_dev}:{st.st_ino}"))
        f.seek(0)
        text = f.read()
    check(re.match(r"<3>\S+Z sluiced\[\d+\] \[error\] token file '", text),
          "with stderr the journal's stream, sluiced's lines lead with their syslog priority (<3> an error)", text)
    p = run([h.sluiced] + missing, env=dict(os.environ, JOURNAL_STREAM="1:2"))
    check(p.returncode == 1 and re.match(r"\S+Z sluiced\[\d+\] \[error\] token file '", p.stderr),
          "... and without it (JOURNAL_STREAM naming another file), none", p.stderr)

    # sluice submit and sluice stop pointed at a host daemon: named as such, status 4, and
    # the daemon goes on (submit said "serve closed the connection before the unit ended").
    for args in (("submit", d.address, "--work", "x"), ("stop", d.address)):
        status, out, err, _ = h.run(*args, timeout=30)
        check(status == 4 and "is a host daemon (sluiced on" in err and "not a sluice serve" in err,
              f"sluice {args[0]} at a host daemon's address: status 4, named", status, err)
    check(d.proc.poll() is None, "the host daemon goes on")

    data_ports(h)

    # SIGHUP (the terminal it ran in closed): a clean stop, said, as SIGTERM (it died without
    # a word, status 129).
    d.proc.send_signal(signal.SIGHUP)
    try:
        d.proc.wait(10)
    except subprocess.TimeoutExpired:
        pass
    check(d.proc.returncode == 0 and "received SIGHUP; killing every app daemon and exiting" in d.text(),
          "sluiced stops on SIGHUP as on SIGTERM, saying so", d.proc.returncode, d.text()[-2000:])
    check(not os.path.exists(ready), "a stopped sluiced removes its ready file (it named an address nobody listens on)",
          os.listdir(ready_dir))


def data_ports(h):
    """sluiced --data-ports: every app daemon it starts listens for data in that range (the
    console's launch cannot widen it); when every port of it is taken, the run fails at
    launch naming the host, the range and what to do, and the daemons go on."""
    first = free_consecutive_ports(4)
    ports = f"{first}-{first + 3}"
    a = h.start("ports-a", args=("--data-ports", ports))
    b = h.start("ports-b", args=("--data-ports", ports))
    topo = h.topology("ports.yaml", f"""name: ports
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 64B, count: 20000}}, place: {{ports-a: 1, ports-b: 1}}}}
  c: {{class: Consume, library: LIB, place: {{ports-a: 1, ports-b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 64B, policy: round_robin}}
""")
    for _ in range(2):
        status, out, err, _ = h.run("run", topo, "--no-progress", timeout=120)
        check(status == 0 and "units of work: 1/1 finished" in err, "a run across two sluiced --data-ports", err)
    check(f"; data ports: {ports}\n" in a.text(), "sluiced logs its data ports as it starts", a.text()[:500])
    used = a.data_ports() + b.data_ports()
    check(len(used) == 4 and all(first <= p <= first + 3 for p in used),
          f"every app daemon's data port is in {ports}", used)
    check(received(a.text() + b.text())[1] == 2 * 2 * 20000, "and every buffer arrived in order")

    # Every port of b's one-port range held by something else: named at launch, status 1.
    held = socket.socket()
    # The app daemons above used this port: connections they closed may still be in
    # TIME_WAIT on it, which a bind without SO_REUSEADDR refuses (EADDRINUSE, seen once).
    held.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    held.bind(("127.0.0.1", first + 3))
    held.listen(1)
    try:
        c = h.start("ports-c", args=("--data-ports", str(first + 3)))
        topo = h.topology("ports-held.yaml", f"""name: ports-held
{h.hosts_yaml(a, c)}filters:
  p: {{class: Produce, library: LIB, args: {{count: 10}}, place: {{ports-a: 1}}}}
  c: {{class: Consume, library: LIB, place: {{ports-c: 1}}}}
streams:
  - {{from: p.out, to: c.in}}
""")
        status, out, err, _ = h.run("run", topo, "--no-progress", timeout=120)
        check(status == 1 and "host ports-c" in err and f"no free port on 127.0.0.1 in --data-ports {first + 3}: all 1 "
              "are in use" in err and "widen --data-ports" in err,
              "a --data-ports range with every port taken fails the launch, named", status, err)
        check(a.serving() and c.serving(), "and both host daemons go on")

        # The console's own data port (a to: client stream) in `sluice run --data-ports`: a
        # port held elsewhere is named; a free one carries the stream.
        to_client = h.topology("ports-client.yaml", f"""name: ports-client
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 1KiB, count: 3000}}, place: {{ports-b: 1}}}}
streams:
  - {{from: p.out, to: client, buffer_size: 1KiB}}
""")
        status, out, err, _ = h.run("run", to_client, "--no-progress", "--data-ports", str(first + 3), timeout=120)
        check(status != 0 and f"no free port on 127.0.0.1 in --data-ports {first + 3}: all 1 are in use" in err,
              "sluice run --data-ports with its one port taken: named", status, err)
        status, out, err, _ = h.run("run", to_client, "--no-progress", "--data-ports", f"{first + 2}-{first + 3}",
                                    timeout=120)
        check(status == 0 and re.search(r"p\.out -> client\s+3000\s", err),
              "sluice run --data-ports with a free port in it: the stream reaches the console", status, err)
    finally:
        held.close()
    refused(h, h.console, ["run", to_client, "--data-ports", "7701-"],
            "--data-ports: '7701-' is not a port range", "sluice run --data-ports half a range")
    refused(h, h.console, ["serve", to_client, "--data-ports", "x"],
            "--data-ports: 'x' is not a port range", "sluice serve --data-ports that is no number")


if __name__ == "__main__":
    main(test)
