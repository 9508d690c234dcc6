#!/usr/bin/env bash
# Proves the installed package works for Java users: install sluice into a scratch prefix,
# copy its Maven tree (share/sluice/maven) into a scratch local repository as docs/java.md
# says, build examples/java-out-of-tree with Maven OFFLINE (-o) against it, run its JUnit
# test and its topology with the installed console; then a plain Java program (the client
# example) drives a topology through org.sluice.Application with the installed jar and library.
# Cleans up after itself, pass or fail.
#   package_java_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
maven="$work/prefix/share/sluice/maven/org/sluice/jfilter/0.1.0"
for f in jfilter-0.1.0.jar jfilter-0.1.0.pom jfilter-0.1.0-sources.jar jfilter-0.1.0-javadoc.jar; do
  [[ -s "$maven/$f" ]] || { echo "package java test: $maven/$f was not installed" >&2; exit 1; }
done
for page in share/doc/sluice/cpp/index.html share/doc/sluice/javadoc/index.html; do
  [[ -s "$work/prefix/$page" ]] || { echo "package java test: the API reference $page was not installed" >&2; exit 1; }
done
if grep -q '<parent>' "$maven/jfilter-0.1.0.pom"; then
  echo "package java test: the installed pom names a parent the local repository lacks" >&2; exit 1
fi

# The local repository: a copy of the plugins and JUnit the user's Maven already has (a copy,
# not hard links: Maven rewrites some files in place, and ~/.m2 must not change), then
# sluice's artifacts copied in as docs/java.md says.
repo="$work/m2"
mkdir -p "$repo"
if [[ -d "$HOME/.m2/repository" ]]; then
  cp -a "$HOME/.m2/repository/." "$repo/"
fi
rm -rf "$repo/org/sluice"
cp -r "$work/prefix/share/sluice/maven/." "$repo/"

# On a fresh machine the pinned plugins are not cached yet: fetch them once (online, into the
# scratch repository) with a throw-away copy of the project. Nothing is fetched when cached.
cp -r "$src/examples/java-out-of-tree" "$work/prefetch"
(cd "$work/prefetch" && mvn -B -q -Dmaven.repo.local="$repo" package) > "$work/prefetch.log" 2>&1 \
  || { cat "$work/prefetch.log" >&2; exit 1; }

# The build that counts: offline, in a fresh copy.
cp -r "$src/examples/java-out-of-tree" "$work/project"
if ! (cd "$work/project" && mvn -B -o -Dmaven.repo.local="$repo" package) > "$work/mvn.log" 2>&1; then
  echo "package java test: the offline Maven build failed:" >&2; cat "$work/mvn.log" >&2; exit 1
fi
grep -q "Tests run: 1, Failures: 0, Errors: 0" "$work/mvn.log" \
  || { echo "package java test: the JUnit test did not run:" >&2; cat "$work/mvn.log" >&2; exit 1; }

cd "$work/project"
"$work/prefix/bin/sluice" validate shout.yaml > "$work/validate.log"
"$work/prefix/bin/sluice" run shout.yaml > "$work/out.txt" 2> "$work/err.txt"
printf 'HELLO 0\nHELLO 1\nHELLO 2\n' > "$work/expected.txt"
if ! diff -u "$work/expected.txt" "$work/out.txt"; then
  echo "package java test: unexpected output; stderr was:" >&2
  cat "$work/err.txt" >&2
  exit 1
fi
# A plain Java program drives a deployed topology through org.sluice.Application, with nothing
# but the installed jfilter jar (and the example classes) on its class path: the native library
# must be found from the installed package (PREFIX/lib), without -Dsluice.application.library.
lib="$work/prefix/lib/libsluice_application_jni.so"
[[ -s "$lib" ]] || { echo "package java test: $lib was not installed" >&2; exit 1; }
sed -e "s|\.\./build/|$build/|" -e "s|java/target/examples.jar|$build/examples/sluice-examples.jar|" \
  "$src/examples/client.yaml" > "$work/client.yaml"
if ! env -u SLUICE_APPLICATION_LIBRARY java -cp "$work/prefix/share/sluice/jfilter.jar:$build/examples/sluice-examples.jar" \
    org.sluice.examples.QueryClient "$work/client.yaml" "from the package" > "$work/client.txt" 2>&1; then
  echo "package java test: the Java client failed against the installed package:" >&2; cat "$work/client.txt" >&2; exit 1
fi
grep -qx "  FROM THE PACKAGE" "$work/client.txt" \
  || { echo "package java test: unexpected client output:" >&2; cat "$work/client.txt" >&2; exit 1; }
echo "package java test: installed, built offline with Maven from the local repository, ran; a Java program drove the installed library: ok"
