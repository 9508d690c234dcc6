"""The --ui server as a program reads it: GET/HEAD with the status and body, and /metrics
parsed into {name: [(labels, value)]}. Shared by the console's ui_test.py and the serve
tests (tests/serve/serve_test.py)."""
import re
import urllib.error
import urllib.request


def get(url, method="GET"):
    """(HTTP status, body text); 4xx and 5xx are answers too, not exceptions."""
    req = urllib.request.Request(url, method=method)
    try:
        with urllib.request.urlopen(req, timeout=30) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def parse_metrics(text):
    """The Prometheus text exposition as {name: [(labels, value)]}."""
    out = {}
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        m = re.match(r'^(\w+)(\{(.*)\})? (\S+)$', line)
        assert m, line
        labels = dict(re.findall(r'(\w+)="((?:[^"\\]|\\.)*)"', m.group(3) or ""))
        out.setdefault(m.group(1), []).append((labels, float(m.group(4))))
    return out
