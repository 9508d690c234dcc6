#!/usr/bin/env python3
"""Checks the generated API references name the types a filter author needs.
   check_reference.py CPP_HTML_DIR JAVADOC_DIR"""
import html, pathlib, re, sys


def text(path):
    raw = pathlib.Path(path).read_text(encoding="utf-8", errors="replace")
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", raw)))


cpp, javadoc = sys.argv[1], sys.argv[2]
wanted = {
    f"{cpp}/classsluice_1_1Context.html": [
        "const std::string & work ( ) const", "const std::string & topology_dir ( ) const",
        "Logger"],
    f"{cpp}/classsluice_1_1Buffer.html": ["std::byte * data ( )", "std::uint64_t key ( ) const"],
    f"{cpp}/classsluice_1_1Logger.html": ["void info ( std::string_view message ) const"],
    f"{javadoc}/org/sluice/Buffer.html": ["ByteBuffer data()", "long key()"],
    f"{javadoc}/org/sluice/Context.html": ["Path topologyDir()", "String work()"],
}
failed = False
for page, needles in wanted.items():
    try:
        body = text(page)
    except OSError as e:
        print(f"missing reference page {page}: {e}")
        failed = True
        continue
    squashed = body.replace(" ", "")
    for needle in needles:
        if needle.replace(" ", "") not in squashed:
            print(f"{page}: does not show '{needle}'")
            failed = True
sys.exit(1 if failed else 0)
