#!/usr/bin/env python3
"""Filter log lines across hosts: a copy on host b logs, the console prints the line on its
stderr with the same prefix as an embedded run ("[talk#0@b] info: ..."), b's sluiced log keeps
it too (a Java copy's as well); under a terminal the line is not glued onto the progress line; a filter that logs in
a tight loop gets a bounded number of lines to the console and a count of the rest, while
every line stays in its host's log.

  logs_test.py BUILD_DIR SOURCE_DIR
"""
import fcntl
import os
import signal
import re
import struct
import subprocess
import termios
import threading
import time

from harness import check, main
from throttled_proxy import ThrottledProxy


def visible_lines(text):
    """What a terminal shows, line by line: \\r returns to column 0, ESC[K erases to the end."""
    lines = []
    for segment in text.replace("\r\n", "\n").split("\n"):
        screen, col = [], 0
        for token in re.split(r"(\r|\x1b\[K)", segment):
            if token == "\r":
                col = 0
            elif token == "\x1b[K":
                del screen[col:]
            else:
                for ch in token:
                    if col < len(screen):
                        screen[col] = ch
                    else:
                        screen.append(ch)
                    col += 1
        lines.append("".join(screen))
    return lines


def test(h):
    lib = os.path.join(h.build, "tests", "daemons", "libsluice_daemon_filters.so")
    a = h.start("a")
    b = h.start("b")

    # One line from init, one from finalize, on host b; a stream crosses from a to b.
    hello = h.topology("hello.yaml", f"""name: hello
{h.hosts_yaml(a, b)}filters:
  p:    {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000}}, place: {{a: 1}}}}
  c:    {{class: Consume, library: LIB, place: {{b: 1}}}}
  talk: {{class: Chatter, library: {lib}, args: {{line: "hello from b, unit started", last: "bye from b"}},
          place: {{b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
work: [one, two]
""")
    mark = len(b.text())
    status, out, err, _ = h.run("run", hello, "--no-progress", timeout=120)
    check(status == 0 and "units of work: 2/2 finished" in err, "the run with a logging filter on b finishes", err)
    check(err.count("[talk#0@b] info: hello from b, unit started\n") == 2,
          "the filter's line on b reaches the console's stderr with its prefix, once per unit", err)
    check(err.count("[talk#0@b] warn: bye from b\n") == 2, "so does its line from finalize, with its level", err)
    check(err.index("[talk#0@b] warn: bye from b") < err.index("units of work: 2/2 finished"),
          "the unit's lines come before the summary", err)
    mine = b.text()[mark:]
    check(mine.count("[talk#0@b] info: hello from b, unit started") == 2, "b's sluiced log keeps the lines too", mine)

    # What a copy on b prints goes to the console's stdout, as an embedded run's does, each
    # unit's lines before the summary; not into b's log.
    printing = h.topology("print.yaml", open(hello).read().replace(
        'args: {line: "hello from b, unit started", last: "bye from b"}', 'args: {print: "result from b", print_count: 3}'))
    mark = len(b.text())
    status, out, err, _ = h.run("run", printing, "--no-progress", timeout=120)
    check(status == 0 and out == "result from b 0\nresult from b 1\nresult from b 2\n" * 2,
          "a copy's stdout on b reaches the console's stdout, whole, once per unit", repr(out), err)
    check("result from b" not in b.text()[mark:] and "result from b" not in err,
          "and neither b's log nor the console's stderr", b.text()[mark:][-2000:])
    check("[talk#0@b]" not in a.text(), "a's log has none of b's lines")
    # A stdout that refuses that output (a full disk) is said, and the run is not a success:
    # it used to end in status 0 with the output lost (an outside review).
    with open("/dev/full", "w") as full:
        p = subprocess.run([h.console, "run", printing, "--no-progress", "--token-file", h.token],
                           stdout=full, stderr=subprocess.PIPE, text=True, timeout=120)
    check(p.returncode == 1 and "units of work: 2/2 finished" in p.stderr
          and "bytes of the filters' output were not written: stdout refused them (No space left on device)" in p.stderr,
          "stdout on a full disk: the run says the filters' output is lost and exits 1", p.returncode, p.stderr)

    # A Java copy's line (ctx.log() in Java goes through the same logger).
    jar = os.path.join(h.build, "jfilter", "native", "tests", "java_test_filters.jar")
    if os.path.exists(jar):
        java = h.topology("java.yaml", f"""name: java-hello
{h.hosts_yaml(a, b)}filters:
  p:     {{class: Produce, library: LIB, args: {{size: 1KiB, count: 100}}, place: {{a: 1}}}}
  c:     {{class: Consume, library: LIB, place: {{b: 1}}}}
  jtalk: {{lang: java, class: org.sluice.nativetest.Chatter, classpath: [{jar}], args: {{line: "hello from Java"}},
           place: {{b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
""")
        status, out, err, _ = h.run("run", java, "--no-progress", timeout=120)
        check(status == 0 and "[jtalk#0@b] info: hello from Java\n" in err,
              "a Java filter's line on b reaches the console's stderr with its prefix", err)
    else:
        print("note: no Java test filters built; the Java case is skipped")

    # Under a terminal, with the progress line drawn: each log line starts a line of its own.
    slow = h.topology("slow.yaml", f"""name: slow
{h.hosts_yaml(a, b)}filters:
  p:    {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000}}, place: {{a: 1}}}}
  c:    {{class: Consume, library: LIB, place: {{b: 1}}}}
  talk: {{class: Chatter, library: {lib}, args: {{count: 15, every_ms: 100, last: "finalize on b says hi"}},
          place: {{b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
""")
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    proc = subprocess.Popen([h.console, "run", slow, "--token-file", h.token], stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=slave, close_fds=True)
    h.cleanups.append(lambda: (proc.poll() is None and proc.kill(), proc.wait()))
    os.close(slave)
    raw = b""
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: every writer closed the terminal
            break
        if not chunk:
            break
        raw += chunk
    os.close(master)
    proc.communicate(timeout=120)
    text = raw.decode("utf-8", "replace")
    shown = visible_lines(text)
    check(proc.returncode == 0, f"the run under a terminal finishes (status {proc.returncode})", text[-3000:])
    check(re.search(r"\r\x1b\[Kunit 1/1", text), "the progress line was drawn", text[-3000:])
    talk = [l for l in shown if "chatter" in l or "finalize on b" in l]
    check(talk == [f"[talk#0@b] info: chatter {i}" for i in range(15)] + ["[talk#0@b] warn: finalize on b says hi"],
          "under a terminal each forwarded line stands on a line of its own (the progress line cleared first)",
          "\n".join(talk))

    # A tight loop of log lines on b: the console gets the burst and the rate, and a count of
    # the rest; b's log has every line.
    lines = 100000
    flood = h.topology("flood.yaml", f"""name: flood
{h.hosts_yaml(a, b)}filters:
  p:    {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000}}, place: {{a: 1}}}}
  c:    {{class: Consume, library: LIB, place: {{b: 1}}}}
  talk: {{class: Chatter, library: {lib}, args: {{count: {lines}, last: "done chattering"}}, place: {{b: 1}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
""")
    mark = len(b.text())
    status, out, err, secs = h.run("run", flood, "--no-progress", timeout=300)
    check(status == 0 and "units of work: 1/1 finished" in err, "the flooding run finishes", err[-3000:])
    shown = err.count("[talk#0@b] info: chatter ")
    held = sum(int(n) for n in re.findall(r"sluice: host b: (\d+) filter log lines? not shown here", err))
    check(0 < shown <= 200 + 50 * (secs + 1), f"the console printed {shown} of {lines} lines ({secs:.1f} s): "
          "a burst of 200, then at most 50 a second", err[-2000:])
    mine = b.text()[mark:]
    check(mine.count("[talk#0@b] info: chatter ") == lines and f"chatter {lines - 1}\n" in mine,
          f"b's sluiced log has all {lines} lines")
    # Every copy's lines on b (the consumer's report too) are shown or counted, none twice.
    logged = len(re.findall(r"^\[\S+@b\] ", mine, re.M))
    forwarded = len(re.findall(r"^\[\S+@b\] ", err, re.M))
    check(forwarded + held == logged,
          f"the console says how many it did not show ({held}): shown and held back make the {logged} on b",
          err[-2000:])
    check("every line is in that host's sluiced log" in err, "and where they are", err[-2000:])

    # A console that stops reading (Ctrl-Z for a moment) while a copy on c prints hard: c's
    # sluiced holds a bounded amount for it and stops taking more from the app daemon, whose
    # copy then waits on stdout, as on a paused terminal; once the console reads again every
    # line arrives. (sluiced queued all of it: 470 MB in 2 s.)
    c = h.start("c")
    prints = 3000000
    loud = h.topology("loud.yaml", f"""name: loud
hosts: {{c: {c.address}}}
filters:
  talk: {{class: Chatter, library: {lib}, args: {{print: "line from c, padded to fill the pipe faster", print_count: {prints}}}}}
""")

    def high_water_kib(pid):
        with open(f"/proc/{pid}/status") as f:
            return int(re.search(r"VmHWM:\s+(\d+) kB", f.read()).group(1))

    before = high_water_kib(c.pid)
    p, out, err = h.start_console("run", loud)
    h.wait_for(lambda: os.path.getsize(out.name) > 1000000 or p.poll() is not None, 60, "the loud copy's first MB")
    p.send_signal(signal.SIGSTOP)
    try:
        time.sleep(1.5)
    finally:
        p.send_signal(signal.SIGCONT)
    check(p.wait(timeout=300) == 0, "the loud run finishes after its console paused", open(err.name).read()[-3000:])
    grown = high_water_kib(c.pid) - before
    check(grown < 32 * 1024, f"c's sluiced held a bounded amount for the paused console: its peak memory grew by "
          f"{grown // 1024} MiB", c.text()[-2000:])
    with open(out.name, "rb") as f:
        lines = f.read().split(b"\n")
    check(len(lines) == prints + 1 and lines[-2] == b"line from c, padded to fill the pipe faster %d" % (prints - 1),
          f"every printed line reached the console's stdout ({len(lines) - 1} of {prints})", lines[-3:])

    # The same across a slow link (500 KB/s from sluiced to the console, through a proxy):
    # sluiced holds the app daemon back for seconds at a time, and the app daemon, blocked
    # sending, waits as long as sluiced is heard from. (It took that for a dead sluiced after
    # 4 s and exited: "the peer took nothing for 4000 ms".)
    proxy = ThrottledProxy(c.port, down=500000, target_window=32768)
    h.cleanups.append(proxy.close)
    prints = 200000
    slow_link = h.topology("slow_link.yaml", open(loud).read().replace(c.address, f"127.0.0.1:{proxy.port}")
                           .replace("print_count: 3000000", f"print_count: {prints}"))
    status, out, err, secs = h.run("run", slow_link, "--no-progress", timeout=300)
    check(status == 0, f"a run whose console is behind a slow link finishes ({secs:.1f} s)", err[-3000:],
          c.text()[-3000:])
    lines = out.split("\n")
    check(len(lines) == prints + 1 and lines[-2] == f"line from c, padded to fill the pipe faster {prints - 1}",
          f"every printed line crossed the slow link ({len(lines) - 1} of {prints})", lines[-3:])

    # A log pipe whose reader went (a `| tee` that died): sluiced and its app daemons go on,
    # their lines lost (EPIPE); the app daemon used to die by SIGPIPE at its first line.
    r, w = os.pipe()
    orphan = subprocess.Popen([h.sluiced, "--listen", "127.0.0.1:0", "--token-file", h.token], stdout=w,
                              stderr=subprocess.STDOUT)
    h.cleanups.append(lambda: (orphan.poll() is None and orphan.kill(), orphan.wait()))
    os.close(w)
    seen = b""
    with os.fdopen(r, "rb") as reader:
        while not re.search(rb"listening on (\S+?);", seen):
            chunk = reader.read1(4096)
            check(chunk, "the orphaned sluiced says where it listens", seen)
            seen += chunk
    address = re.search(rb"listening on (\S+?);", seen).group(1).decode()
    lonely = h.topology("lonely.yaml", f"""name: lonely
hosts: {{a: {address}}}
filters:
  p:    {{class: Produce, library: LIB, args: {{size: 1KiB, count: 1000}}}}
  c:    {{class: Consume, library: LIB}}
  talk: {{class: Chatter, library: {lib}, args: {{line: "nobody reads this", last: "nor this"}}}}
streams:
  - {{from: p.out, to: c.in, buffer_size: 1KiB}}
work: [one, two]
""")
    status, out, err, _ = h.run("run", lonely, "--no-progress", timeout=120)
    check(status == 0 and "units of work: 2/2 finished" in err and "SIGPIPE" not in err,
          "a run on a sluiced whose log pipe has no reader finishes (no SIGPIPE)", err)
    check(orphan.poll() is None, "that sluiced is still running")

    # A log reader that stops reading (a paused `| less`): sluiced and its app daemons go on,
    # the lines wait (1 MiB), then are dropped and counted; once the reader reads again, a line
    # says how many. Here the pipe holds 4 KiB, and a copy logs 100000 lines (3 MB) at once.
    r, w = os.pipe()
    fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ
    stuck = subprocess.Popen([h.sluiced, "--listen", "127.0.0.1:0", "--token-file", h.token, "--verbose"],
                             stdout=w, stderr=subprocess.STDOUT)
    h.cleanups.append(lambda: (stuck.poll() is None and stuck.kill(), stuck.wait()))
    os.close(w)
    reader = os.fdopen(r, "rb")
    seen = b""
    while not re.search(rb"listening on (\S+?);", seen):
        chunk = reader.read1(4096)
        check(chunk, "the sluiced with a stuck log reader says where it listens", seen)
        seen += chunk
    address = re.search(rb"listening on (\S+?);", seen).group(1).decode()
    flood = 100000
    unread = h.topology("unread.yaml", f"""name: unread
hosts: {{d: {address}}}
filters:
  flood: {{class: Chatter, library: {lib}, args: {{count: {flood}}}}}
  slow:  {{class: Chatter, library: {lib}, args: {{count: 50, every_ms: 100, last: "slow one done"}}}}
""")
    p, out, err = h.start_console("run", unread)
    time.sleep(2)  # nobody reads the log meanwhile: after 1 s stuck, most of the flood is dropped
    status, vout, verr, _ = h.run("validate", unread, timeout=60)
    check(status == 0 and "ok, sluiced on" in vout,
          "while nobody reads its log, sluiced still answers another console", vout + verr)
    check(p.poll() is None, "and the run goes on", open(err.name).read()[-2000:])
    got = []
    drain = threading.Thread(target=lambda: got.append(reader.read()))  # until every writer is gone
    drain.start()
    check(p.wait(timeout=120) == 0, "the run whose host's log was not read finishes", open(err.name).read()[-3000:])
    status, _, rerr, _ = h.run("run", unread, "--no-progress", timeout=120)
    check(status == 0, "and the next run on that sluiced too", rerr[-2000:])
    stuck.terminate()
    stuck.wait(timeout=10)
    drain.join(timeout=30)
    log = (seen + b"".join(got)).decode("utf-8", "replace")
    notes = re.findall(r"sluice-appd\(d\)\[\d+\] \[warn\] (\d+) log lines? not written: stderr took nothing for "
                       r"a while or refused them \(a stuck or paused log reader, a full disk\); sluice-appd\(d\) went on "
                       r"without waiting\n", log)
    # The note counts every line the app daemon did not write: the filters' and its own few.
    logged = 2 * (flood + 50 + 1)
    written = len(re.findall(r"^\[(?:flood|slow)#0@d\] (?:info|warn): ", log, re.M))
    dropped = sum(int(n) for n in notes)
    check(notes and logged <= written + dropped <= logged + 50,
          f"the app daemons' lines not written are counted: {written} written and {notes} dropped make the "
          f"{logged} its filters logged (and a few of its own)", log[-3000:])
    check(log.count("[slow#0@d] warn: slow one done") == 2 and "exited with status 0" in log,
          "the lines logged after the reader came back are all there", log[-3000:])
    check(re.search(r"sluiced\[\d+\] \[debug\] console #\d+ \(.*\): console -> app daemon: start_unit", log) and
          re.search(r"\[debug\] console #\d+ \(.*\): app daemon -> unit_done", log) and
          re.search(r"sluice-appd\(d\)\[\d+\] \[debug\] ", log) and "-> heartbeat" not in log,
          "--verbose logs the control messages but heartbeats, and the app daemons' debug lines too", log[-3000:])


if __name__ == "__main__":
    main(test)
