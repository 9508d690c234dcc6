#!/usr/bin/env bash
# `--version` on the three programs prints "PROGRAM VERSION" with the version CMake's
# project(sluice VERSION ...) declares, and exits 0.
#   version_test.sh BUILD_DIR VERSION
set -uo pipefail
build=$1
want=$2
failures=0
for prog in console/sluice daemons/sluiced daemons/sluice-appd; do
  name=$(basename "$prog")
  out=$("$build/$prog" --version 2>&1)
  status=$?
  if [ "$status" -ne 0 ] || [ "$out" != "$name $want" ]; then
    echo "FAIL: $name --version: exit $status, printed '$out', want '$name $want'" >&2
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] && echo "version test: sluice, sluiced, sluice-appd all say $want"
exit "$failures"
