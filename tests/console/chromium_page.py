"""The --ui page as a browser draws it: headless Chromium (Debian's `chromium`) and what
its DOM shows. Shared by the console's ui_test.py (embedded) and the daemons' ui_test.py
(across hosts).

    dom = load(url, work_dir)          # the page after its script ran a few polls
    dom.filters                        # {"read", "upper", ...}: data-filter boxes
    dom.edges                          # {"a.out -> b.in": buffers/s}: data-stream edges
    dom.copies                         # {"upper#1": "b"}: each copy's line, with its host
    dom.hosts                          # {"a", "b"} ("local" embedded): the hosts table's rows
    dom.status                         # "running", "ok", "failed"
    screenshot(url, work_dir, path)    # a PNG of the page

Every Chromium runs in a session of its own and, if it outlives its timeout, is killed with
its whole process group, so no renderer or zygote is left behind.
"""
import html.parser
import itertools
import os
import signal
import subprocess


class Dom(html.parser.HTMLParser):
    def __init__(self, text=""):
        super().__init__()
        self.text = text
        self.filters, self.edges, self.copies, self.hosts, self.status = set(), {}, {}, set(), None
        self.failed_copies, self.failure = set(), None  # copies marked "failed here"; the banner's class and data-since
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "g" and "data-filter" in a:
            self.filters.add(a["data-filter"])
        if tag == "g" and "data-stream" in a:
            self.edges[a["data-stream"]] = float(a.get("data-buffers-per-second", "0"))
        if tag == "text" and "data-copy" in a:
            self.copies[a["data-copy"]] = a.get("data-host")
            if a.get("class") == "failed":
                self.failed_copies.add(a["data-copy"])
        if a.get("id") == "failure":
            self.failure = (a.get("class") or "", a.get("data-since"))
        if tag == "tr" and "data-host" in a:
            self.hosts.add(a["data-host"])
        if "data-status" in a and a["data-status"]:
            self.status = a["data-status"]


_runs = itertools.count()


def chromium(url, work_dir, *extra, timeout=90, tries=2):
    """Runs headless Chromium on url; returns (exit status, stdout, stderr).

    Each run gets a profile directory of its own: a profile an earlier Chromium still holds
    (its processes exiting) can make the next one wait on it. A Chromium that gives no answer
    within `timeout` is killed and, once, started again: on a loaded machine a headless
    Chromium has hung for minutes on a page it draws in seconds otherwise (console.ui in CI,
    2026-12-09); a page that never loads fails both runs."""
    for attempt in range(tries):
        profile = os.path.join(work_dir, "chromium-%d" % next(_runs))
        cmd = ["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
               "--user-data-dir=" + profile, "--virtual-time-budget=3000"] + list(extra) + [url]
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
        try:
            out, err = p.communicate(timeout=timeout)
            return p.returncode, out, err
        except subprocess.TimeoutExpired:
            # Not reaped yet, so the group id is still ours: kill the whole group.
            os.killpg(p.pid, signal.SIGKILL)
            p.communicate()
    return p.returncode, "", "chromium: no answer in %d s, %d times" % (timeout, tries)


def load(url, work_dir):
    """(exit status, Dom, stderr) of the page as Chromium leaves it (--dump-dom)."""
    status, out, err = chromium(url, work_dir, "--dump-dom")
    return status, Dom(out), err


def screenshot(url, work_dir, path):
    """Writes a PNG of the page to path; returns (ok, stderr)."""
    if os.path.exists(path):
        os.remove(path)
    status, _, err = chromium(url, work_dir, "--screenshot=" + path, "--window-size=1900,1000", "--hide-scrollbars")
    if status != 0 or not os.path.exists(path):
        return False, err
    with open(path, "rb") as f:
        return f.read(8) == b"\x89PNG\r\n\x1a\n", err
