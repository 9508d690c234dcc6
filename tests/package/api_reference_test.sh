#!/usr/bin/env bash
# `make docs` (the docs target) generates the C++ API reference from include/sluice with the
# types a user needs (what Context::work() and Buffer::key() return, Logger::info's
# parameter), and `cmake --install` puts it into share/doc/sluice/api.
#   api_reference_test.sh BUILD_DIR
set -euo pipefail
build=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cmake --build "$build" --target docs > "$work/docs.log" 2>&1 || fail "the docs target failed: $(tail -20 "$work/docs.log")"
html="$build/api/html"
[ -f "$html/index.html" ] || fail "no $html/index.html"
page() { grep -l "$1" "$html"/class*.html | head -1; }
context=$(page "Context Class Reference") || true
buffer=$(page "Buffer Class Reference") || true
logger=$(page "Logger Class Reference") || true
[ -n "$context" ] && [ -n "$buffer" ] && [ -n "$logger" ] || fail "no page for Context, Buffer or Logger in $html"
# The pages as text (tags and entities undone), in files: grep -q on a pipe would end it early.
text() { sed 's/<[^>]*>//g; s/&amp;/\&/g; s/&lt;/</g; s/&gt;/>/g; s/&#160;/ /g' "$1" > "$2"; }
text "$context" "$work/context.txt"
text "$buffer" "$work/buffer.txt"
text "$logger" "$work/logger.txt"
grep -qF "virtual const std::string & work () const" "$work/context.txt" || fail "Context::work()'s type is not in $context"
grep -qF "std::uint64_t key () const" "$work/buffer.txt" || fail "Buffer::key()'s type is not in $buffer"
grep -qF "void info (std::string_view message) const" "$work/logger.txt" || fail "Logger::info's signature is not in $logger"
cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
[ -f "$work/prefix/share/doc/sluice/api/index.html" ] || fail "the reference is not installed in share/doc/sluice/api"
echo "api reference test: Context, Buffer, Logger documented with their types; installed"
