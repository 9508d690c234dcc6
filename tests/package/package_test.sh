#!/usr/bin/env bash
# Proves the installed package works for users: install sluice into a scratch prefix,
# build examples/out-of-tree against it with find_package(Sluice), and run that library
# with the installed console. Cleans up after itself, pass or fail.
#   package_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
cmake -S "$src/examples/out-of-tree" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > "$work/configure.log"
cmake --build "$work/build" > "$work/build.log"

# The example's own topologies, as a user runs them from its directory.
cp "$src/examples/out-of-tree/rot13.yaml" "$src/examples/out-of-tree/rot13_client.yaml" "$work/"

"$work/prefix/bin/sluice" validate "$work/rot13.yaml" > "$work/validate.log"
"$work/prefix/bin/sluice" run "$work/rot13.yaml" > "$work/out.txt" 2> "$work/err.txt"
sort "$work/out.txt" > "$work/sorted.txt"
printf 'uryyb 0\nuryyb 1\nuryyb 2\n' > "$work/expected.txt"
if ! diff -u "$work/expected.txt" "$work/sorted.txt"; then
  echo "package test: unexpected output; stderr was:" >&2
  cat "$work/err.txt" >&2
  exit 1
fi
# A program of the user's own, linked with Sluice::application, drives a deployed topology
# whose last stream goes to: client.
"$work/build/rot13_client" "$work/rot13_client.yaml" first second > "$work/client.txt" 2> "$work/client_err.txt"
printf 'uryyb 0\nuryyb 1\nuryyb 0\nuryyb 1\n' > "$work/client_expected.txt"
if ! diff -u "$work/client_expected.txt" "$work/client.txt"; then
  echo "package test: the Application client printed something else; stderr was:" >&2
  cat "$work/client_err.txt" >&2
  exit 1
fi
echo "package test: installed, built out of tree with find_package(Sluice), ran (sluice run and Sluice::application): ok"
