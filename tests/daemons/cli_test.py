"""sluiced's and sluice-appd's command lines: a bad or missing value is refused at once with a
message that names the option and says what it accepts, exit status 2 (as the console's);
--help and --version work. Nothing is started: every refusal comes before the daemon
listens or reads its control socket. Then one sluiced writes its --ready-file in a directory
where symlinks were planted, and follows none."""
import os
import signal
import subprocess

from harness import check, main


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
    check(p.returncode == 1 and "--ready-file: cannot create a file beside" in p.stderr
          and "listening on" not in p.stderr,
          "sluiced with a --ready-file it cannot write: status 1, named, without saying it listened",
          p.returncode, p.stderr)

    # sluice submit and sluice stop pointed at a host daemon: named as such, status 4, and
    # the daemon goes on (submit said "serve closed the connection before the unit ended").
    for args in (("submit", d.address, "--work", "x"), ("stop", d.address)):
        status, out, err, _ = h.run(*args, timeout=30)
        check(status == 4 and "is a host daemon (sluiced on" in err and "not a sluice serve" in err,
              f"sluice {args[0]} at a host daemon's address: status 4, named", status, err)
    check(d.proc.poll() is None, "the host daemon goes on")

    # SIGHUP (the terminal it ran in closed): a clean stop, said, as SIGTERM (it died without
    # a word, status 129).
    d.proc.send_signal(signal.SIGHUP)
    try:
        d.proc.wait(10)
    except subprocess.TimeoutExpired:
        pass
    check(d.proc.returncode == 0 and "received SIGHUP; killing every app daemon and exiting" in d.text(),
          "sluiced stops on SIGHUP as on SIGTERM, saying so", d.proc.returncode, d.text()[-2000:])


if __name__ == "__main__":
    main(test)
