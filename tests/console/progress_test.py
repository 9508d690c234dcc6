#!/usr/bin/env python3
"""The live progress line under a pseudo-terminal of 80 columns, as a user sees it.

Runs a topology where one source logs a line and prints one to stdout every 100 ms
(tick.out -> sink.in, nothing held back) while another stream is held back by a slow consumer
(pump.out -> slow.in, listed second), stdout and stderr on the same terminal, and checks what
the terminal shows: no log text and no printed text glued onto the progress line, no progress
line over 80 columns, the held-back stream shown first, rates labelled as recent.
    progress_test.py SLUICE FILTER_LIBRARY
"""
import fcntl
import os
import re
import struct
import subprocess
import sys
import tempfile
import termios

sluice, library = sys.argv[1], sys.argv[2]
COLUMNS = 80

topology = f"""name: progress
filters:
  tick: {{class: Ticker, library: {library}, args: {{every_ms: 100, count: 20, print: true}}}}
  sink: {{class: Sink,   library: {library}}}
  pump: {{class: Pump,   library: {library}, args: {{count: 60}}}}
  slow: {{class: Sink,   library: {library}, args: {{sleep_ms: 50}}}}
streams:
  - {{from: tick.out, to: sink.in, buffer_size: 64B}}
  - {{from: pump.out, to: slow.in, buffer_size: 64KiB, depth: 2}}
"""

with tempfile.TemporaryDirectory() as work:
    path = os.path.join(work, "progress.yaml")
    with open(path, "w") as f:
        f.write(topology)
    master, slave = os.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, COLUMNS, 0, 0))
    proc = subprocess.Popen([sluice, "run", path, "--work", "first"], stdin=subprocess.DEVNULL,
                            stdout=slave, stderr=slave, close_fds=True)
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
    status = proc.wait(timeout=120)

text = raw.decode("utf-8", "replace")
failures = []
if status != 0:
    failures.append(f"sluice run exited {status}")


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


# Every drawing of the progress line: the text after an erase, up to the next \r or \n.
frames = [f for f in re.findall(r"\x1b\[K([^\r\n\x1b]*)", text) if f.startswith("unit 1/1 [first]")]
if len(frames) < 3:
    failures.append(f"only {len(frames)} progress lines drawn in a run of ~3 s")
for frame in frames:
    if len(frame) > COLUMNS:
        failures.append(f"progress line of {len(frame)} columns (over {COLUMNS}): {frame!r}")
    m = re.search(r"last [0-9.]+s: (\S+ -> \S+) ", frame)
    if not m:
        failures.append(f"progress line without 'last Ns:' before its first stream: {frame!r}")
    elif m.group(1) != "pump.out -> slow.in":
        failures.append(f"first stream shown is {m.group(1)}, not the held-back pump.out -> slow.in: {frame!r}")
if frames and "+1 more" not in frames[-1]:
    failures.append(f"the stream that does not fit in {COLUMNS} columns is not counted: {frames[-1]!r}")

shown = visible_lines(text)
ticks = [line for line in shown if "info: tick" in line]
if len(ticks) != 20:
    failures.append(f"{len(ticks)} tick log lines on the terminal, want 20")
for line in ticks:
    if not line.startswith("[tick#0") or "buf/s" in line:
        failures.append(f"log text glued to other text: {line!r}")
for line in shown:
    if "buf/s" in line and "info:" in line:
        failures.append(f"log text glued to the progress line: {line!r}")
printed = [line for line in shown if "printed" in line]
if printed != [f"printed {i}" for i in range(20)]:
    failures.append(f"the lines the filter printed are not each on a line of their own, in order: {printed!r}")
if shown and not any("units of work: 1/1 finished" in line for line in shown[-3:]):
    failures.append(f"the summary does not come last: {shown[-3:]!r}")

if failures:
    print("\n".join("FAIL: " + f for f in failures), file=sys.stderr)
    print("terminal output was:\n" + repr(text[:4000]), file=sys.stderr)
    sys.exit(1)
print(f"progress test: {len(frames)} progress lines, all within {COLUMNS} columns, held-back stream first; "
      f"{len(ticks)} log lines and {len(printed)} printed lines each on its own line")
