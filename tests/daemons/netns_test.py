#!/usr/bin/env python3
"""Two hosts with their own addresses: network namespaces joined by a veth pair
(10.77.0.1/24 and 10.77.0.2/24, only inside namespaces this test creates), a sluiced in
each, a run across them; then the link is taken down mid-run and the console must report
it within 5 s and leave nothing behind; with the data ports dropped from the start, the
run fails naming the data plane. Needs root and `ip netns`; skips otherwise.

  netns_test.py BUILD_DIR SOURCE_DIR
"""
import os
import shutil
import subprocess
import time

from harness import Skip, alive, check, main


def ip(*args, check_rc=True):
    p = subprocess.run(["ip"] + list(args), capture_output=True, text=True)
    if check_rc and p.returncode != 0:
        raise RuntimeError(f"ip {' '.join(args)}: {p.stderr.strip()}")
    return p


def test(h):
    if os.geteuid() != 0:
        raise Skip("needs root to create network namespaces")
    if shutil.which("ip") is None or ip("netns", "list", check_rc=False).returncode != 0:
        raise Skip("`ip netns` is not available (install iproute2)")
    tag = f"sl{os.getpid() % 100000}"
    ns_a, ns_b = f"{tag}-a", f"{tag}-b"
    veth_a, veth_b = f"{tag}va", f"{tag}vb"
    # Deleting a namespace deletes the veth end inside it, and with it the pair.
    h.cleanups.append(lambda: ip("netns", "del", ns_a, check_rc=False))
    h.cleanups.append(lambda: ip("netns", "del", ns_b, check_rc=False))
    h.cleanups.append(lambda: ip("link", "del", veth_a, check_rc=False))
    try:
        ip("netns", "add", ns_a)
        ip("netns", "add", ns_b)
        ip("link", "add", veth_a, "type", "veth", "peer", "name", veth_b)
    except RuntimeError as e:
        raise Skip(f"cannot create namespaces or veth pairs here: {e}")
    ip("link", "set", veth_a, "netns", ns_a)
    ip("link", "set", veth_b, "netns", ns_b)
    for ns, dev, addr in [(ns_a, veth_a, "10.77.0.1/24"), (ns_b, veth_b, "10.77.0.2/24")]:
        ip("-n", ns, "addr", "add", addr, "dev", dev)
        ip("-n", ns, "link", "set", dev, "up")
        ip("-n", ns, "link", "set", "lo", "up")

    a = h.start("a", listen="10.77.0.1:7700", netns=ns_a)
    b = h.start("b", listen="10.77.0.2:7700", netns=ns_b)
    topo = h.topology("netns.yaml", f"""name: netns
{h.hosts_yaml(a, b)}filters:
  p: {{class: Produce, library: LIB, args: {{size: 16KiB, count: COUNT}}, place: {{a: 1, b: 1}}}}
  c: {{class: Consume, library: LIB, place: {{a: 1, b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 16KiB}}
work: [one, two]
""")
    short = h.topology("short.yaml", open(topo).read().replace("COUNT", "20000"))
    status, out, err, _ = h.run("run", short, "--no-progress", netns=ns_a, timeout=120)
    check(status == 0 and "units of work: 2/2 finished" in err, "a run across two namespaces (streams cross the veth)", err)
    check("verified in order" in a.text() and "verified in order" in b.text(), "both hosts ran their copies")

    long = h.topology("long.yaml", open(topo).read().replace("COUNT", "1000000000"))

    def long_run():
        """The long run, from a's namespace, once it runs on b."""
        before = len(b.app_pids())
        p = subprocess.Popen(["ip", "netns", "exec", ns_a, h.console, "run", long, "--token-file", h.token,
                              "--no-progress"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        h.cleanups.append(lambda: (p.poll() is None and p.kill(), p.wait()))
        h.wait_for(lambda: len(b.app_pids()) > before, 15, "the run to launch on b")
        time.sleep(2.0)
        check(p.poll() is None, "the long run is running")
        return p

    def app_daemons_gone(seconds, what):
        apps = a.app_pids() + b.app_pids()
        deadline = time.time() + seconds
        while time.time() < deadline and any(alive(x) for x in apps):
            time.sleep(0.1)
        check(not any(alive(x) for x in apps), what, b.text()[-1500:])

    # A host at a loopback address beside one that is not: its data plane would listen on
    # loopback, out of the other's reach. validate warns, naming both.
    lo = h.start("lo", listen="127.0.0.1:7701", netns=ns_a)
    mixed = h.topology("mixed.yaml", open(short).read().replace(f"  a: {a.address}\n", f"  a: {lo.address}\n"))
    status, out, err, _ = h.run("validate", mixed, netns=ns_a, timeout=60)
    check(status == 0 and f"sluice: warning: host a ({lo.address}) reached at a loopback address, host b "
          f"({b.address}) not" in err, "validate warns about a loopback host beside a non-loopback one", out, err)
    status, out, err, _ = h.run("validate", short, netns=ns_a, timeout=60)
    check(status == 0 and "warning" not in err, "and not when no host is on loopback", out, err)

    # The data connections go dark while control still flows: a firewall in b's namespace
    # drops every TCP segment that is not to or from the control port (7700). The app
    # daemons' heartbeats on the data connections stop arriving; the run must fail naming
    # both hosts within 5 s, and leave nothing behind.
    nft = shutil.which("nft")
    check(nft is not None, "nft is installed (scripts/install-deps.sh installs nftables)")
    p = long_run()
    # (Accept the control port, then drop the rest of TCP: on some kernels a rule that
    # matches "dport != 7700" drops port 7700 too.)
    ruleset = """table inet sluicetest {
  chain in { type filter hook input priority 0; tcp dport 7700 accept; tcp sport 7700 accept; meta l4proto tcp drop; }
  chain out { type filter hook output priority 0; tcp dport 7700 accept; tcp sport 7700 accept; meta l4proto tcp drop; }
}
"""
    subprocess.run(["ip", "netns", "exec", ns_b, nft, "-f", "-"], input=ruleset, text=True, check=True)
    h.cleanups.append(lambda: subprocess.run(["ip", "netns", "exec", ns_b, nft, "delete", "table", "inet", "sluicetest"],
                                             capture_output=True))
    cut = time.time()
    try:
        _, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    took = time.time() - cut
    check(p.returncode not in (0, None) and took < 5,
          f"data ports dropped: the console exits non-zero within 5 s ({took:.2f} s)", err)
    failure = [l for l in err.splitlines() if l.startswith("sluice: run failed:")]
    check(failure and "host 'a'" in failure[0] and "host 'b'" in failure[0] and "data connection" in failure[0],
          "data ports dropped: reported naming both hosts: " + (failure[0] if failure else ""), err)
    app_daemons_gone(6, "data ports dropped: no app daemon left on either side")
    check(a.serving() and b.serving(), "data ports dropped: both host daemons still serving")

    # With the data ports dropped before the run, the data plane cannot connect at launch:
    # the run fails naming that, not the app daemon that exits after reporting it.
    status, _, err, _ = h.run("run", short, "--no-progress", netns=ns_a, timeout=60)
    failure = [l for l in err.splitlines() if l.startswith("sluice: run failed:")]
    check(status == 1 and failure and "could not connect within" in failure[0] and "exited with status" not in failure[0],
          "data ports dropped at launch: the data plane's failure is the run's: " + (failure[0] if failure else ""), err)
    subprocess.run(["ip", "netns", "exec", ns_b, nft, "delete", "table", "inet", "sluicetest"], check=True)

    # The console's own control connections go dark (all of them, as when its own link
    # fails): a firewall in the console's namespace drops the control port both ways. Every
    # host falls silent at once, and the console says so instead of blaming one host.
    p = long_run()
    dark = """table inet sluicedark {
  chain in { type filter hook input priority 0; tcp dport 7700 drop; tcp sport 7700 drop; }
  chain out { type filter hook output priority 0; tcp dport 7700 drop; tcp sport 7700 drop; }
}
"""
    subprocess.run(["ip", "netns", "exec", ns_a, nft, "-f", "-"], input=dark, text=True, check=True)
    h.cleanups.append(lambda: subprocess.run(["ip", "netns", "exec", ns_a, nft, "delete", "table", "inet", "sluicedark"],
                                             capture_output=True))
    try:
        _, err = p.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    failure = [l for l in err.splitlines() if l.startswith("sluice: run failed:")]
    check(p.returncode == 1 and failure and "no word from any host daemon (host a (10.77.0.1:7700), host b "
          "(10.77.0.2:7700))" in failure[0] and "this console's own link is down" in failure[0],
          "the console's control link dark: reported as the console's own link: " + (failure[0] if failure else ""), err)
    subprocess.run(["ip", "netns", "exec", ns_a, nft, "delete", "table", "inet", "sluicedark"], check=True)
    app_daemons_gone(8, "console link dark: each host daemon stopped its app daemon")

    # Take the link down mid-run.
    p = long_run()
    ip("-n", ns_b, "link", "set", veth_b, "down")
    down = time.time()
    try:
        _, err = p.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        p.kill()
        _, err = p.communicate()
    took = time.time() - down
    check(p.returncode not in (0, None) and took < 5, f"link down: the console exits non-zero within 5 s ({took:.2f} s)", err)
    failure = [l for l in err.splitlines() if l.startswith("sluice: run failed:")]
    check(failure and "host b" in failure[0], "link down: reported naming the host: " + (failure[0] if failure else ""), err)
    # sluiced on b stops hearing the console and kills the app daemon there.
    app_daemons_gone(6, "link down: no app daemon left on either side")
    check(a.serving() and b.serving(), "both host daemons still serving")


if __name__ == "__main__":
    main(test)
