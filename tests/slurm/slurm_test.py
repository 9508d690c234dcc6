#!/usr/bin/env python3
"""`sluice run --launcher slurm` against a real Slurm: a throw-away local cluster
(slurm-local.sh: its own munged, a slurmctld and two slurmd as virtual nodes n1 and n2, all
under this test's temporary directory, on ports picked here), torn down by PID however the
test ends (the harness's cleanups, also on SIGTERM/SIGINT from ctest).

Cases, each followed by: squeue shows nothing, and no sluiced or sluice-appd of that job is
left (their environment carries SLURM_JOB_ID):
  - validate prints the node mapping;
  - C++ -> Java -> C++ across the two nodes, outside an allocation (the console asks for one
    and releases it): every buffer arrives, in order per producer, checksums verified;
  - the mixed C++/Java example (examples/slurm/mixed.yaml) across the two nodes prints the
    same word counts as the same graph embedded;
  - inside an sbatch allocation: examples/slurm/mixed.sbatch;
  - a filter that throws: named with its logical host and its Slurm node;
  - one node's sluiced killed mid-run: reported by Slurm node name, every step ended, the
    allocation released (and, while it ran, the run's token file had mode 0600);
  - SIGINT to the console mid-run: status 130, the same clean end; SIGHUP with nobody
    reading its stderr, the same;
  - an allocation Slurm refuses (no such partition): status 4 with Slurm's reason;
  - SIGINT while the allocation is pending: status 130, the request withdrawn;
  - sluice serve --launcher slurm: units from sluice submit, results byte for byte, sluice
    stop ends the steps; an allocation Slurm refuses: status 4, as for run.

  slurm_test.py BUILD_DIR SOURCE_DIR
Needs root and Debian's slurmctld, slurmd, slurm-client and munge (scripts/install-deps.sh).
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "daemons"))
from harness import Failed, alive, check, free_consecutive_ports, main, received  # noqa: E402


def free_ports(n):
    """n TCP ports that were free a moment ago (bound to port 0 together, then released)."""
    socks = []
    try:
        for _ in range(n):
            s = socket.socket()
            s.bind(("127.0.0.1", 0))
            socks.append(s)
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


def raise_on_signal(sig, frame):
    raise Failed(f"stopped by signal {sig}")


class Cluster:
    def __init__(self, h):
        self.h = h
        self.dir = os.path.join(h.dir, "slurm")
        self.script = os.path.join(HERE, "slurm-local.sh")
        ports = free_ports(3)
        self.local_env = dict(os.environ, SLURM_LOCAL_DIR=self.dir, SLURM_LOCAL_CTLD_PORT=str(ports[0]),
                              SLURM_LOCAL_NODE_PORTS=f"{ports[1]} {ports[2]}", SLURM_LOCAL_CPUS="2")
        # The console and the clients: this cluster only, and never "inside" an outer job.
        self.env = {k: v for k, v in os.environ.items() if not k.startswith("SLURM_")}
        self.env["SLURM_CONF"] = os.path.join(self.dir, "slurm.conf")

    def up(self):
        h = self.h
        h.cleanups.append(self.down)  # before up: a half-started cluster is stopped too
        p = subprocess.run([self.script, "up", "2"], env=self.local_env, capture_output=True, text=True, timeout=120)
        check(p.returncode == 0, "a local Slurm with two nodes is up", p.stdout, p.stderr, self.logs())

    def down(self):
        subprocess.run([self.script, "down"], env=self.local_env, capture_output=True, text=True, timeout=60)
        pids = []
        for f in ["run/slurmctld.pid", "run/slurmd-n1.pid", "run/slurmd-n2.pid", "munge/munged.pid"]:
            try:
                with open(os.path.join(self.dir, f)) as fh:
                    pids.append(int(fh.read().strip()))
            except (OSError, ValueError):
                pass
        left = [p for p in pids if alive(p)]
        if left:
            print("slurm daemons still alive after down:", left, file=sys.stderr)

    def logs(self):
        out = ""
        logdir = os.path.join(self.dir, "log")
        if os.path.isdir(logdir):
            for name in sorted(os.listdir(logdir)):
                with open(os.path.join(logdir, name), errors="replace") as f:
                    out += f"--- {name} ---\n" + f.read()[-3000:]
        return out

    def cmd(self, *args, timeout=30):
        return subprocess.run(list(args), env=self.env, capture_output=True, text=True, timeout=timeout)

    def queue(self):
        return self.cmd("squeue", "-h", "-o", "%i %j %T").stdout.strip()

    def job_processes(self, job):
        """Live sluiced / sluice-appd processes whose environment says SLURM_JOB_ID=job."""
        found = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/comm") as f:
                    comm = f.read().strip()
                if comm not in ("sluiced", "sluice-appd"):
                    continue
                with open(f"/proc/{d}/environ", "rb") as f:
                    env = f.read().split(b"\0")
                if f"SLURM_JOB_ID={job}".encode() in env and alive(int(d)):
                    found.append((int(d), comm))
            except OSError:
                pass
        return found

    def nothing_left(self, job, what, wait=5):
        check(job, f"{what}: the job id is known")
        deadline = time.time() + wait
        while time.time() < deadline and (self.queue() or self.job_processes(job)):
            time.sleep(0.1)
        check(self.queue() == "", f"{what}: squeue is empty", self.queue())
        check(not self.job_processes(job), f"{what}: no sluiced or sluice-appd of job {job} is left",
              self.job_processes(job))


class Runs:
    """Console runs with --launcher slurm, each with a run directory of its own."""

    def __init__(self, h, cluster):
        self.h = h
        self.c = cluster
        self.n = 0

    def args(self, *args, run_dir=None):
        self.n += 1
        run_dir = run_dir or os.path.join(self.h.dir, f"run{self.n}")
        return [self.h.console] + list(args) + ["--launcher", "slurm", "--run-dir", run_dir], run_dir

    def run(self, *args, timeout=300, run_dir=None):
        cmd, run_dir = self.args(*args, run_dir=run_dir)
        p = subprocess.run(cmd, env=self.c.env, capture_output=True, text=True, timeout=timeout)
        return p.returncode, p.stdout, p.stderr, run_dir

    def start(self, *args):
        cmd, run_dir = self.args(*args)
        err_path = os.path.join(self.h.dir, f"console{self.n}.err")
        err = open(err_path, "w+")
        p = subprocess.Popen(cmd, env=self.c.env, stdout=subprocess.DEVNULL, stderr=err)
        self.h.cleanups.append(lambda: (p.poll() is None and p.kill(), p.wait(), err.close()))
        return p, err_path, run_dir


def job_of(text):
    m = re.search(r"sluice: slurm job (\d+): ", text)
    return m.group(1) if m else None


def interrupt(p, times):
    """Ctrl-C `times` times, 50 ms apart, then up to 30 s for `p` to end (the caller checks how)."""
    for i in range(times):
        if i:
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
    try:
        p.wait(30)
    except subprocess.TimeoutExpired:
        pass


def read(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def log_of(run_dir, host):
    """The log of `host`'s sluiced in run_dir: sluiced-RUN-HOST.log, RUN the run's 8 hex digits."""
    named = [n for n in (os.listdir(run_dir) if os.path.isdir(run_dir) else [])
             if re.fullmatch(r"sluiced-[0-9a-f]{8}-" + re.escape(host) + r"\.log", n)]
    return os.path.join(run_dir, named[0] if len(named) == 1 else f"no single log of host {host}: {named}")


def logs(run_dir):
    out = ""
    if os.path.isdir(run_dir):
        for name in sorted(os.listdir(run_dir)):
            if name.endswith(".log"):
                out += f"--- {name} ---\n" + read(os.path.join(run_dir, name))[-3000:]
    return out


def absolute_mixed(h, embedded):
    """examples/slurm/mixed.yaml with absolute paths (this build), or its embedded twin."""
    text = read(os.path.join(h.source, "examples", "slurm", "mixed.yaml"))
    text = text.replace("../../build/", h.build + "/").replace("../data/", os.path.join(h.source, "examples", "data") + "/")
    if embedded:
        text = re.sub(r"(?m)^hosts:\n(  \S+: \S+\n)+", "", text)
        text = re.sub(r",\s*place: \{[^}]*\}", "", text)
    name = "mixed-embedded.yaml" if embedded else "mixed-slurm.yaml"
    path = os.path.join(h.dir, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def ready_file_of(pid):
    """The --ready-file argument of process pid ("" if none)."""
    args = read(f"/proc/{pid}/cmdline").split("\0")
    return args[args.index("--ready-file") + 1] if "--ready-file" in args else ""


def top_words(text):
    """TopWords' report: the unit lines and the counts under them."""
    return [l for l in text.splitlines() if re.match(r"(unit \d+ \[.*\]: \d+ words|  \d+\t\S+$)", l)]


def test(h):
    signal.signal(signal.SIGTERM, raise_on_signal)
    signal.signal(signal.SIGINT, raise_on_signal)
    c = Cluster(h)
    c.up()
    runs = Runs(h, c)
    jar = os.path.join(h.build, "examples", "sluice-examples.jar")
    check(os.path.exists(jar), "the Java examples are built (build/examples/sluice-examples.jar)")

    # validate: the mapping, nothing started.
    mixed = absolute_mixed(h, embedded=False)
    status, out, err, _ = runs.run("validate", mixed)
    check(status == 0 and "a -> node 1 of the allocation" in out and "b -> node 2 of the allocation" in out
          and "salloc --nodes 2" in out, "validate --launcher slurm prints the node mapping", out, err)
    check(c.queue() == "", "validate started no job")
    check("Slurm's estimate: " in out, "validate shows Slurm's own check of the request (sbatch --test-only)", out)
    status, out, err, _ = runs.run("validate", mixed, "--partition", "nosuch")
    check(status == 4 and "Slurm would refuse what a run asks for" in err and "invalid partition" in err.lower(),
          "validate --launcher slurm with a partition Slurm does not have: status 4 with Slurm's reason", status, err)
    check(c.queue() == "", "validate with a bad partition started no job")

    # C++ -> Java -> C++ across the nodes: counts, order per producer, checksums.
    per_producer = 100000
    chain = h.topology("chain.yaml", f"""name: chain
hosts: {{a: first:7700, b: second:7700}}
filters:
  p: {{class: Produce, library: LIB, args: {{size: 256B, count: {per_producer}}}, place: {{a: 1, b: 1}}}}
  j: {{lang: java, class: org.sluice.examples.Forward, classpath: [{jar}], place: {{b: 1}}}}
  c: {{class: Consume, library: LIB, place: {{a: 1}}}}
streams:
  - {{from: p.out, to: j.in, buffer_size: 256B, depth: 64}}
  - {{from: j.out, to: c.in, buffer_size: 256B, depth: 64}}
work: [one, two]
""")
    first = free_consecutive_ports(10)  # --data-ports: each node's daemon takes its data port from it
    ports = (first, first + 9)
    status, out, err, run_dir = runs.run("run", chain, "--no-progress", "--data-ports", "%d-%d" % ports)
    job = job_of(err)
    want = 2 * per_producer * 2
    got, verified = received(read(log_of(run_dir, "a")))
    check(status == 0 and "units of work: 2/2 finished" in err and re.search(r"a -> n1 \(127\.0\.0\.1:\d+\), b -> n2", err),
          f"C++ -> Java -> C++ across two Slurm nodes finishes (job {job})", err, logs(run_dir))
    check(got == want and verified == want,
          f"every buffer arrives in order with its checksum through Java across nodes ({verified}/{want})", logs(run_dir))
    mapped = re.search(r"a -> n1 \((\S+)\)", err)
    logged = re.search(r"listening on (\S+?);", read(log_of(run_dir, "a")))
    check(mapped and logged and mapped.group(1) == logged.group(1) and not logged.group(1).endswith(":0"),
          f"sluiced --ready-file gave the address it listens on ({mapped and mapped.group(1)})", err, logs(run_dir))
    data_ports = [int(p) for host in ("a", "b")
                  for p in re.findall(r"data plane on \S+:(\d+)", read(log_of(run_dir, host)))]
    check(len(data_ports) == 2 and all(ports[0] <= p <= ports[1] for p in data_ports),
          f"--data-ports reaches the daemons the launcher starts: their data ports are in {ports}", data_ports,
          logs(run_dir))
    check(not [f for f in os.listdir(run_dir) if f.startswith(("token", "ready"))],
          "the run's token and ready files are removed", os.listdir(run_dir))
    c.nothing_left(job, "after a run outside an allocation")
    # After a good run the steps end by sluiced's own exit, not killed: nothing reads as a
    # cancelled step (srun answers a SIGTERM of its own by killing the step).
    step_logs = read(log_of(run_dir, "a")) + read(log_of(run_dir, "b"))
    slurmd_logs = "".join(read(os.path.join(c.dir, "log", n)) for n in os.listdir(os.path.join(c.dir, "log")))
    check(step_logs.count("received SIGUSR2; killing every app daemon and exiting") == 2
          and "CANCELLED" not in step_logs and "Killed" not in step_logs
          and not re.search(rf"STEP {job}\.\d+ ON \S+ CANCELLED", slurmd_logs),
          f"after a good run, each step's sluiced exits by itself and no step of job {job} is cancelled",
          step_logs, c.logs())

    # The mixed example across the nodes counts what it counts embedded, and prints it on the
    # console's stdout as embedded (its filters' stdout comes back from the nodes).
    status, out, err, run_dir = runs.run("run", mixed, "--no-progress")
    job = job_of(err)
    across = top_words(out)
    p = subprocess.run([h.console, "run", absolute_mixed(h, embedded=True), "--no-progress"],
                       capture_output=True, text=True, timeout=120)
    embedded = top_words(p.stdout)
    check(status == 0 and p.returncode == 0 and len(embedded) == 18 and across == embedded,
          f"the mixed C++/Java example on two Slurm nodes counts what it counts embedded ({embedded[:1]})",
          err, "\n".join(across), "\n".join(embedded), p.stderr)
    c.nothing_left(job, "after the mixed example")

    # Inside an sbatch allocation: the example's script.
    out_file = os.path.join(h.dir, "sbatch.out")
    run_dir = os.path.join(h.dir, "run-sbatch")
    env_list = f"ALL,SLUICE={h.console},TOPOLOGY={mixed}"
    r = c.cmd("sbatch", "--parsable", f"--output={out_file}", f"--chdir={h.source}", f"--export={env_list}",
              os.path.join(h.source, "examples", "slurm", "mixed.sbatch"), "--run-dir", run_dir, "--time", "5")
    check(r.returncode == 0, "sbatch accepts examples/slurm/mixed.sbatch", r.stderr)
    job = r.stdout.strip().split(";")[0]
    state = ""
    deadline = time.time() + 120
    while time.time() < deadline:
        info = c.cmd("scontrol", "show", "job", "-o", job).stdout
        m = re.search(r"JobState=(\S+)", info)
        state = m.group(1) if m else ""
        if state in ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL"):
            break
        time.sleep(0.2)
    text = read(out_file)
    check(state == "COMPLETED" and f"sluice: slurm job {job}: a -> n1" in text and "units of work: 2/2 finished" in text,
          f"inside an sbatch allocation: the steps run in job {job}, which completes", state, text, logs(run_dir))
    check(top_words(text) == embedded, "inside sbatch: the same word counts, on the job's output", text, logs(run_dir))
    check(f"sluice: slurm: warning: inside job {job}, --time does not apply: the job's own settings hold" in text,
          "inside sbatch: --time, which only an allocation the console asks for takes, is said to be ignored", text)
    check(oct(os.stat(run_dir).st_mode & 0o777) == "0o700",
          "the --run-dir the console made is the user's alone (0700: its logs carry what filters log)",
          oct(os.stat(run_dir).st_mode & 0o777))
    c.nothing_left(job, "after the sbatch job", wait=15)

    # A filter that throws: named with its logical host and its Slurm node.
    throw = h.topology("throw.yaml", """name: throw
hosts: {a: first:7700, b: second:7700}
filters:
  p: {class: Produce, library: LIB, args: {size: 1KiB, count: 1000}, place: {a: 1}}
  c: {class: Consume, library: LIB, place: {b: 1}}
  q: {class: Produce, library: LIB, args: {size: 2KiB}, place: {b: 1}}
  d: {class: Consume, library: LIB, place: {a: 1}}
streams:
  - {from: p.out, to: c.in, buffer_size: 1KiB}
  - {from: q.out, to: d.in, buffer_size: 1KiB}
""")
    status, out, err, run_dir = runs.run("run", throw, "--no-progress")
    job = job_of(err)
    check(status == 1 and f"run failed: filter 'q' copy 0 on host b (Slurm node n2, job {job}) failed in process "
          "(unit of work 0): args.size 2048" in err, "a filter that throws is named with its host and Slurm node", err)
    check(f"the host daemons' logs are in {run_dir}/sluiced-" in err, "after a failure, the console says where the logs are", err)
    c.nothing_left(job, "after a filter threw")
    # The same --run-dir again (a shared directory, as slurm.md suggests): each run keeps its logs.
    status, out, err, _ = runs.run("run", throw, "--no-progress", run_dir=run_dir)
    kept = sorted(n for n in os.listdir(run_dir) if re.fullmatch(r"sluiced-[0-9a-f]{8}-b\.log", n))
    check(status == 1 and len(kept) == 2 and all("args.size 2048" in read(os.path.join(run_dir, n)) for n in kept),
          "two runs in one --run-dir: the second does not overwrite the first one's host logs", kept, err)
    c.nothing_left(job_of(err), "after the second run in the same --run-dir")

    # --nodes fewer than the logical hosts: a bad command line (status 2), said before anything
    # is asked of Slurm.
    status, out, err, run_dir = runs.run("run", chain, "--no-progress", "--nodes", "1")
    check(status == 2 and "--nodes 1 is fewer than the topology's 2 logical hosts" in err and c.queue() == ""
          and not os.path.exists(run_dir), "--nodes 1 for two logical hosts: status 2, nothing asked of Slurm",
          status, err)

    # Inside an allocation of fewer nodes than logical hosts: refused, status 4, and the run
    # directory it made under ~/.cache is not left behind empty (an outside review found one).
    home = os.path.join(h.dir, "home")
    os.makedirs(home)
    cmd = [h.console, "run", chain, "--no-progress", "--launcher", "slurm"]
    r = subprocess.run(cmd, env=dict(c.env, HOME=home, SLURM_JOB_ID="99", SLURM_JOB_NODELIST="n1"),
                       capture_output=True, text=True, timeout=60)
    runs_dir = os.path.join(home, ".cache", "sluice", "runs")
    left = os.listdir(runs_dir) if os.path.isdir(runs_dir) else []
    check(r.returncode == 4 and "Slurm job 99 has 1 node(s), the topology has 2 logical hosts" in r.stderr and not left,
          "an allocation smaller than the topology: status 4, no empty run directory left", r.stderr, left)

    # Slurm refuses the request: said before anything starts, status 4.
    status, out, err, run_dir = runs.run("run", chain, "--no-progress", "--partition", "nosuch")
    check(status == 4 and "salloc exited with status 1 without an allocation of 2 node(s)" in err
          and "invalid partition" in err.lower(), "an allocation Slurm refuses: status 4 with Slurm's reason", err)
    check("the host daemons' logs are in" not in err and "Slurm's answer is in" in err,
          "... and points at salloc's answer, not at host daemon logs no daemon wrote", err)
    check(c.queue() == "", "after a refused allocation: squeue is empty", c.queue())

    # No Slurm client commands in PATH, outside an allocation: said as such (it was salloc's
    # "status 127"), status 4.
    cmd, run_dir = runs.args("run", chain, "--no-progress")
    r = subprocess.run(cmd, env=dict(c.env, PATH="/nonexistent"), capture_output=True, text=True, timeout=60)
    check(r.returncode == 4 and "salloc: the Slurm client commands are not installed or not in PATH" in r.stderr,
          "without salloc in PATH: the missing Slurm commands are named, status 4", r.returncode, r.stderr)

    # A request Slurm queues but can never grant (2 nodes from a partition of MaxNodes=1): it
    # used to wait for ever in silence; now said with Slurm's reason, withdrawn, status 4.
    status, out, err, run_dir = runs.run("run", chain, "--no-progress", "--partition", "one", timeout=60)
    check(status == 4 and re.search(r"can never start: Slurm says Partition(NodeLimit|Config) \(", err),
          "a request no wait can grant ends with Slurm's reason, status 4", status, err)
    check("(it asked for 2 node(s), one per logical host of the topology;" in err,
          "... and says how many nodes it asked for, and why", err)
    check(c.queue() == "", "after a request that can never start: squeue is empty", c.queue())

    # Ctrl-C while the request waits (another job holds both nodes): withdrawn, status 130.
    r = c.cmd("sbatch", "--parsable", "--nodes", "2", "--exclusive", "--output", "/dev/null", "--wrap", "sleep 300")
    blocker = r.stdout.strip().split(";")[0]
    check(r.returncode == 0 and blocker, "a job that holds both nodes is submitted", r.stderr)
    h.cleanups.append(lambda: c.cmd("scancel", blocker))
    h.wait_for(lambda: c.cmd("squeue", "-h", "-j", blocker, "-o", "%T").stdout.strip() == "RUNNING", 30,
               "the blocking job to run")
    p, err_path, run_dir = runs.start("run", chain, "--no-progress")
    h.wait_for(lambda: "is waiting for 2 node(s)" in read(err_path), 30, "the console to say it waits")
    h.wait_for(lambda: "(Slurm's reason: Resources)" in read(err_path) or "(Slurm's reason: Priority)" in read(err_path),
               10, "the console to say why it waits")
    pending = re.search(r"slurm: job (\d+) is waiting", read(err_path)).group(1)
    p.send_signal(signal.SIGINT)
    p.wait(30)
    text = read(err_path)
    check(p.returncode == 130 and "interrupted by SIGINT while waiting for a Slurm allocation" in text,
          "Ctrl-C while the allocation is pending: status 130", text)
    left = c.cmd("squeue", "-h", "-o", "%i").stdout.split()
    check(pending not in left, f"the pending request (job {pending}) is withdrawn", c.queue())
    c.cmd("scancel", blocker)
    h.wait_for(lambda: c.queue() == "", 30, "the blocking job to end")

    # One node's sluiced killed mid-run.
    long = h.topology("long.yaml", """name: long
hosts: {a: first:7700, b: second:7700}
filters:
  p: {class: Produce, library: LIB, args: {size: 1KiB, count: 1000000000}, place: {a: 1, b: 1}}
  c: {class: Consume, library: LIB, place: {a: 1, b: 1}}
streams:
  - {from: p.out, to: c.in, buffer_size: 1KiB}
""")
    for how in ("kill", "sigint", "scancel", "scancel-step"):
        p, err_path, run_dir = runs.start("run", long, "--no-progress")
        h.wait_for(lambda: "launched application" in read(log_of(run_dir, "b"))
                   and "launched application" in read(log_of(run_dir, "a")), 30,
                   f"the long run to launch on both nodes ({how})")
        time.sleep(1.0)
        job = job_of(read(err_path))
        check(p.poll() is None and job, f"{how}: the long run is running in job {job}", read(err_path))
        tokens = [f for f in os.listdir(run_dir) if f.startswith("token-")]
        modes = [oct(os.stat(os.path.join(run_dir, f)).st_mode & 0o777) for f in tokens]
        check(len(tokens) == 1 and modes == ["0o600"], f"{how}: the run's token file is private ({tokens} {modes})")
        if how == "kill":
            victims = [pid for pid, comm in c.job_processes(job)
                       if comm == "sluiced" and ready_file_of(pid).endswith("-b")]
            check(len(victims) == 1, "the sluiced of host b is found", c.job_processes(job))
            os.kill(victims[0], signal.SIGKILL)
        elif how == "scancel":
            c.cmd("scancel", job)
        elif how == "scancel-step":
            steps = c.cmd("squeue", "-h", "--steps", "-j", job, "-o", "%i %j").stdout.split("\n")
            step_b = [line.split()[0] for line in steps if line.strip().endswith("-b")]
            check(len(step_b) == 1, "host b's step is found", steps)
            c.cmd("scancel", step_b[0])
        else:
            p.send_signal(signal.SIGINT)
        p.wait(60)
        text = read(err_path)
        if how == "kill":
            check(p.returncode == 1 and f"(host b is Slurm node n2, job {job})" in text
                  and "lost the connection to the host daemon" in text,
                  "a node's sluiced killed mid-run is reported by its Slurm node name", text)
            check("the host daemon's step for host b on Slurm node n2" in text,
                  "... and the step that ended is named (its job still runs)", text)
        elif how == "scancel":
            check(p.returncode == 1 and f"Slurm job {job} ended: CANCELLED" in text,
                  "a job cancelled mid-run is named as such, not as a daemon that died", text)
        elif how == "scancel-step":
            check(p.returncode == 1 and re.search(rf"run failed: Slurm ended step {job}\.\d+ on node n2 at \S+: it was "
                                                  r"cancelled \(scancel, by its user or an administrator\) \(the host "
                                                  r"daemon's step for host b\)", text),
                  "one step cancelled mid-run is named as such (it used to read as srun's status 137)", text)
        else:
            check(p.returncode == 130 and "interrupted by SIGINT" in text, "SIGINT mid-run: status 130", text)
        c.nothing_left(job, f"after {how}")

    # Inside sbatch, the job cancelled mid-run (scancel; the time limit takes the same path):
    # Slurm sends the console SIGTERM with its steps and kills it KillWait (5 s here) later.
    # The console waited 5 s for the job's final state, and was killed before it said a word,
    # leaving the run's token on disk (an outside review).
    out_file = os.path.join(h.dir, "sbatch-cancel.out")
    run_dir = os.path.join(h.dir, "run-sbatch-cancel")
    r = c.cmd("sbatch", "--parsable", f"--output={out_file}", f"--chdir={h.source}",
              f"--export=ALL,SLUICE={h.console},TOPOLOGY={long}",
              os.path.join(h.source, "examples", "slurm", "mixed.sbatch"), "--run-dir", run_dir)
    job = r.stdout.strip().split(";")[0]
    check(r.returncode == 0 and job, "sbatch accepts the long run", r.stderr)
    h.wait_for(lambda: "launched application" in read(log_of(run_dir, "b"))
               and "launched application" in read(log_of(run_dir, "a")), 60, "the long run in sbatch to launch")
    time.sleep(1.0)
    c.cmd("scancel", job)
    h.wait_for(lambda: re.search(r"JobState=(CANCELLED|COMPLETED|FAILED|TIMEOUT)",
                                 c.cmd("scontrol", "show", "job", "-o", job).stdout), 60, "the cancelled job to end")
    text = read(out_file)
    check(re.search(rf"sluice: run failed: Slurm job {job} (ended: CANCELLED|is ending: Slurm ended (job|step) {job}\S* "
                    r"on node n\d at \S+: it was cancelled)", text),
          "inside sbatch, a job cancelled mid-run is named before Slurm kills the console", text, logs(run_dir))
    left = [f for f in os.listdir(run_dir) if f.startswith("token-") or f.startswith("ready-")]
    check(not left, "... and the run's token and ready files are gone", left)
    c.nothing_left(job, "after the sbatch job was cancelled", wait=15)

    # stderr a pipe whose reader goes away (`sluice run ... 2>&1 | head -1`), then SIGHUP (the
    # terminal closed): the console's last words fail with EPIPE instead of killing it (it
    # used to die of SIGPIPE, or of SIGHUP, leaving the allocation and its steps in squeue).
    cmd, run_dir = runs.args("run", long, "--no-progress")
    p = subprocess.Popen(cmd, env=c.env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    h.cleanups.append(lambda: (p.poll() is None and p.kill(), p.wait()))
    job = None
    for line in p.stderr:
        job = job_of(line)
        if job:
            break
    check(job, "the run with a piped stderr got its allocation")
    h.wait_for(lambda: "launched application" in read(log_of(run_dir, "b")), 30,
               "the run with a piped stderr to launch")
    p.stderr.close()
    p.send_signal(signal.SIGHUP)
    p.wait(60)
    check(p.returncode == 130, "SIGHUP with nobody reading stderr: status 130, not a death by signal", p.returncode)
    c.nothing_left(job, "after SIGHUP with nobody reading stderr")

    # sluice serve --launcher slurm: the daemons start once for the deployment, units come
    # from sluice submit, and sluice stop ends the steps and releases the allocation.
    app_lib = os.path.join(h.build, "application", "libsluice_app_filters.so")
    served = h.topology("served.yaml", f"""name: served
hosts: {{a: first:7700, b: second:7700}}
filters:
  src:   {{class: AppSource, library: {app_lib}, place: {{a: 1, b: 1}}}}
  stage: {{class: AppStage, library: {app_lib}, place: {{b: 1}}}}
streams:
  - {{from: src.out, to: stage.in}}
  - {{from: stage.out, to: client}}
""")
    env = dict(c.env, HOME=h.dir)  # the run directory (daemon logs) under the test's directory

    def start_serve(name):
        """sluice serve of `served` on Slurm, started: (process, its stderr's path)."""
        err_path = os.path.join(h.dir, f"{name}.err")
        err = open(err_path, "w+")
        p = subprocess.Popen([h.console, "serve", served, "--listen", "127.0.0.1:0", "--launcher", "slurm",
                              "--token-file", h.token], env=env, stdout=subprocess.DEVNULL, stderr=err)
        h.cleanups.append(lambda: (p.poll() is None and p.kill(), p.wait(), err.close()))
        h.wait_for(lambda: "serving 'served' at" in read(err_path) or p.poll() is not None, 120, "serve to start")
        return p, err_path

    p, err_path = start_serve("serve")
    m = re.search(r"serving 'served' at (\S+) \(", read(err_path))
    job = job_of(read(err_path))
    check(m and job, f"sluice serve --launcher slurm starts its daemons in job {job}", read(err_path))
    address = m.group(1)
    results = os.path.join(h.dir, "served.results")
    for count in (200, 30):
        r = subprocess.run([h.console, "submit", address, "--work", f"count={count} size=500", "--results", results,
                            "--token-file", h.token], capture_output=True, text=True, timeout=120)
        unit = re.search(r"accepted unit (\d+)", r.stderr)
        check(r.returncode == 0 and unit, f"a unit of {count} submitted to serve on Slurm finishes", r.stderr)
        q = subprocess.run([os.path.join(h.build, "tests", "serve", "serve_results_check"), results, unit.group(1),
                            "2", str(count), "500"], capture_output=True, text=True)
        check(q.returncode == 0, "its results come back from the nodes byte for byte", q.stdout, q.stderr)
    check(c.queue() != "", "between units the allocation stays", c.queue())
    r = subprocess.run([h.console, "stop", address, "--token-file", h.token], capture_output=True, text=True,
                       timeout=120)
    check(r.returncode == 0 and "stopped" in r.stderr, "sluice stop ends it", r.stderr)
    p.wait(60)
    check(p.returncode == 0, "serve exits 0", read(err_path))
    c.nothing_left(job, "after sluice serve --launcher slurm and sluice stop")
    runs_dir = os.path.join(h.dir, ".cache", "sluice", "runs")
    check(not os.listdir(runs_dir) and "logs are in" not in read(err_path),
          "serve whose units all finished removes its default run directory", os.listdir(runs_dir), read(err_path))

    # A unit that fails under serve: after sluice stop, the default run directory (the daemons'
    # logs, with the failure) is kept and serve says where, as a failed sluice run does.
    p, err_path = start_serve("serve-failed-unit")
    address = re.search(r"serving 'served' at (\S+) \(", read(err_path)).group(1)
    job = job_of(read(err_path))
    r = subprocess.run([h.console, "submit", address, "--work", "count=50 size=100 fail=stage",
                        "--token-file", h.token], capture_output=True, text=True, timeout=120)
    check(r.returncode == 1 and "AppStage was told to fail" in r.stderr, "a unit that throws under serve fails", r.stderr)
    r = subprocess.run([h.console, "stop", address, "--token-file", h.token], capture_output=True, text=True,
                       timeout=120)
    p.wait(60)
    kept = re.search(r"the host daemons' logs are in (\S+)/sluiced-([0-9a-f]{8})-HOST\.log", read(err_path))
    check(p.returncode == 0 and kept and "AppStage was told to fail" in read(os.path.join(kept.group(1), f"sluiced-{kept.group(2)}-b.log")),
          "after a failed unit, serve keeps its default run directory with the daemons' logs and says where",
          p.returncode, read(err_path), os.listdir(runs_dir))
    if kept:
        shutil.rmtree(kept.group(1), ignore_errors=True)
    c.nothing_left(job, "after serve with a failed unit")

    # The job under sluice serve ends (scancel here; TIMEOUT and NODE_FAIL alike): serve ends
    # too, with status 4, naming the job's state, instead of failing every later unit.
    p, err_path = start_serve("serve-cancelled")
    job = job_of(read(err_path))
    check(job and p.poll() is None, f"sluice serve runs in job {job}", read(err_path))
    c.cmd("scancel", job)
    try:
        p.wait(60)
    except subprocess.TimeoutExpired:
        pass
    text = read(err_path)
    check(p.returncode == 4 and f"Slurm job {job} ended: CANCELLED" in text
          and "cannot be deployed again" in text,
          "serve whose Slurm job was cancelled ends with status 4, naming the job's state", p.returncode, text)
    c.nothing_left(job, "after serve's job was cancelled")

    # Ctrl-C on serve while its request waits (another job holds both nodes): withdrawn,
    # status 130. It used to do nothing until the allocation came, and then tear it down.
    r = c.cmd("sbatch", "--parsable", "--nodes", "2", "--exclusive", "--output", "/dev/null", "--wrap", "sleep 300")
    blocker = r.stdout.strip().split(";")[0]
    h.cleanups.append(lambda: c.cmd("scancel", blocker))
    h.wait_for(lambda: c.cmd("squeue", "-h", "-j", blocker, "-o", "%T").stdout.strip() == "RUNNING", 30,
               "the blocking job to run")
    err_path = os.path.join(h.dir, "serve-pending.err")
    with open(err_path, "w+") as err:
        p = subprocess.Popen([h.console, "serve", served, "--listen", "127.0.0.1:0", "--launcher", "slurm",
                              "--token-file", h.token], env=env, stdout=subprocess.DEVNULL, stderr=err)
        h.cleanups.append(lambda: (p.poll() is None and p.kill(), p.wait()))
        h.wait_for(lambda: "is waiting for 2 node(s)" in read(err_path), 30, "serve to say it waits")
        pending = re.search(r"slurm: job (\d+) is waiting", read(err_path)).group(1)
        interrupt(p, 1)
    text = read(err_path)
    check(p.returncode == 130 and "interrupted by SIGINT while waiting for a Slurm allocation" in text,
          "Ctrl-C on serve while its allocation is pending: status 130", p.returncode, text)
    check(pending not in c.cmd("squeue", "-h", "-o", "%i").stdout.split(), f"serve's pending request (job {pending}) is "
          "withdrawn", c.queue())
    c.cmd("scancel", blocker)
    h.wait_for(lambda: c.queue() == "", 30, "the blocking job to end")

    # A second Ctrl-C exits at once, and still ends the steps and the allocation serve made
    # (they used to run on until someone ran scancel).
    p, err_path = start_serve("serve-twice-interrupted")
    job = job_of(read(err_path))
    interrupt(p, 2)
    text = read(err_path)
    check(p.returncode == 130, "serve interrupted twice exits 130", p.returncode, text)
    c.nothing_left(job, "after a second Ctrl-C on serve", wait=15)

    # Slurm refuses serve's request: status 4, as for sluice run (it was 1, "run failed").
    r = subprocess.run([h.console, "serve", served, "--listen", "127.0.0.1:0", "--launcher", "slurm", "--partition",
                        "nosuch", "--token-file", h.token], env=env, capture_output=True, text=True, timeout=120)
    check(r.returncode == 4 and "invalid partition" in r.stderr.lower(),
          "sluice serve on an allocation Slurm refuses: status 4 with Slurm's reason", r.returncode, r.stderr)
    check(c.queue() == "", "after serve's refused allocation: squeue is empty", c.queue())


if __name__ == "__main__":
    main(test)
