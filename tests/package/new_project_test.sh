#!/usr/bin/env bash
# `sluice new cpp|java|topology NAME` as a new user meets it: install sluice into a scratch prefix,
# scaffold the projects with the installed console, build each against the installed package
# (CMake: find_package(Sluice) from the prefix; Maven: the installed jfilter.jar put into a
# scratch local repository, offline), run their tests, run their topologies with
# `sluice run`, and check that `sluice new` refuses to overwrite. Cleans up, pass or fail.
#   new_project_test.sh BUILD_DIR VERSION
# Maven runs offline (-o): the plugins and JUnit come from ~/.m2, where the project's own
# Maven build (make java / make test) put them.
set -euo pipefail
build=$1
version=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
sluice="$work/prefix/bin/sluice"
cd "$work"

# --- C++ ------------------------------------------------------------------------------
"$sluice" new cpp hello-cpp > new-cpp.log || fail "sluice new cpp: $(cat new-cpp.log)"
grep -q "find_package(Sluice $version REQUIRED)" hello-cpp/CMakeLists.txt || fail "no find_package(Sluice) in CMakeLists.txt"
# The next steps it prints must work as printed from a prefix CMake does not search itself.
grep -qF "cmake -S . -B build -DCMAKE_PREFIX_PATH=$work/prefix &&" new-cpp.log \
  || fail "sluice new's next steps do not point CMake at its prefix: $(cat new-cpp.log)"
(cd hello-cpp && cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > configure.log \
   && cmake --build build > build.log && ctest --test-dir build --output-on-failure > ctest.log) \
  || fail "the C++ project does not build or pass its test: $(cat hello-cpp/*.log)"
grep -q "100% tests passed, 0 tests failed out of 1" hello-cpp/ctest.log || fail "the C++ project's test did not run: $(cat hello-cpp/ctest.log)"
(cd hello-cpp && "$sluice" run hello-cpp.yaml > out.txt 2> err.txt) || fail "sluice run hello-cpp.yaml: $(cat hello-cpp/err.txt)"
[ "$(cat hello-cpp/out.txt)" = "HELLO FROM HELLO-CPP" ] || fail "hello-cpp printed '$(cat hello-cpp/out.txt)'"

# --- refuses to overwrite ---------------------------------------------------------------
before=$(find hello-cpp -type f | sort | xargs md5sum)
if "$sluice" new java hello-cpp > again.log 2>&1; then fail "sluice new wrote into an existing directory"; fi
grep -q "'hello-cpp' already exists; nothing was written" again.log || fail "refusal message: $(cat again.log)"
[ "$before" = "$(find hello-cpp -type f | sort | xargs md5sum)" ] || fail "sluice new changed an existing directory"

# --- refuses names whose project would not build ----------------------------------------
for bad in "java class:Java keyword" "java java:is the JDK's" "cpp test:CMake reserves" "topology all:CMake reserves"; do
  kind=${bad%% *}; rest=${bad#* }; name=${rest%%:*}; why=${rest#*:}
  if "$sluice" new "$kind" "$name" > bad.log 2>&1; then fail "sluice new $kind $name was accepted"; fi
  grep -q "$why" bad.log || fail "sluice new $kind $name: $(cat bad.log)"
  [ ! -e "$name" ] || fail "sluice new $kind $name wrote $name/"
done
# ... and only for the kind of project they break: a C++ project has no Java package.
"$sluice" new cpp class > ok.log 2>&1 || fail "sluice new cpp class was refused: $(cat ok.log)"
rm -rf class

# --- Java -------------------------------------------------------------------------------
# A scratch local repository: what ~/.m2 holds (plugins, JUnit), without any org.sluice
# artifact, so that jfilter can only come from the installed package.
m2="${MAVEN_LOCAL_REPO:-$HOME/.m2/repository}"
[ -d "$m2/org/apache/maven/plugins/maven-install-plugin/3.1.2" ] && [ -d "$m2/org/apache/maven/surefire/surefire-junit-platform" ] \
  || fail "$m2 lacks the Maven plugins the scaffolded pom pins; run the project's Maven build once online first (make test runs it)"
mkdir -p home/.m2
cp -r "$m2" home/.m2/repository
rm -rf home/.m2/repository/org/sluice
mvn=(mvn -B -o -Dmaven.repo.local="$work/home/.m2/repository")
# With jfilter missing from ~/.m2, `sluice new java` says how to put it there, with this
# install's prefix; the test does exactly that, as a user would paste it.
HOME="$work/home" "$sluice" new java hello-java > new-java.log || fail "sluice new java: $(cat new-java.log)"
setup=$(grep -F "cp -r '$work/prefix/share/sluice/maven/.' ~/.m2/repository/" new-java.log) \
  || fail "sluice new java did not say how to install org.sluice:jfilter: $(cat new-java.log)"
HOME="$work/home" bash -c "$setup" || fail "the printed command failed: $setup"
[ -f "home/.m2/repository/org/sluice/jfilter/$version/jfilter-$version.jar" ] || fail "'$setup' did not install jfilter $version"
for plugin in compiler jar resources surefire install; do
  grep -A1 "<artifactId>maven-$plugin-plugin</artifactId>" hello-java/pom.xml | grep -q "<version>" \
    || fail "pom.xml does not pin maven-$plugin-plugin"
done
(cd hello-java && "${mvn[@]}" package > mvn.log) || fail "the Java project does not build offline: $(tail -40 hello-java/mvn.log)"
grep -q "Tests run: 1, Failures: 0, Errors: 0" hello-java/mvn.log || fail "the Java project's JUnit test did not run: $(tail -40 hello-java/mvn.log)"
(cd hello-java && "$sluice" run hello-java.yaml > out.txt 2> err.txt) || fail "sluice run hello-java.yaml: $(cat hello-java/err.txt)"
[ "$(cat hello-java/out.txt)" = "HELLO FROM HELLO-JAVA" ] || fail "hello-java printed '$(cat hello-java/out.txt)'"

# --- a topology over both: C++ emit -> Java upper -> C++ print ------------------------
"$sluice" new topology mixed > new-topology.log || fail "sluice new topology: $(cat new-topology.log)"
grep -qF "(cd cpp && cmake -S . -B build -DCMAKE_PREFIX_PATH=$work/prefix && cmake --build build)" mixed/mixed.yaml \
  || fail "mixed.yaml's build line does not point CMake at this install: $(head -5 mixed/mixed.yaml)"
(cd mixed/cpp && cmake -S . -B build -G Ninja -DCMAKE_PREFIX_PATH="$work/prefix" > configure.log && cmake --build build > build.log) \
  || fail "mixed/cpp does not build: $(cat mixed/cpp/*.log)"
(cd mixed/java && "${mvn[@]}" package > mvn.log) || fail "mixed/java does not build offline: $(tail -40 mixed/java/mvn.log)"
(cd mixed && "$sluice" run mixed.yaml --work "C++ and Java" > out.txt 2> err.txt) || fail "sluice run mixed.yaml: $(cat mixed/err.txt)"
[ "$(cat mixed/out.txt)" = "C++ AND JAVA" ] || fail "mixed printed '$(cat mixed/out.txt)'"
# A payload larger than a buffer is refused, not cut (the streams' buffer_size is the default 64KiB).
long=$(head -c 70000 /dev/zero | tr '\0' x)
if (cd mixed && "$sluice" run mixed.yaml --work "$long" > long-out.txt 2> long-err.txt); then
  fail "a 70000-byte payload ran through Emit: $(wc -c < mixed/long-out.txt) bytes printed"
fi
grep -qF "the payload (70000 bytes) does not fit in one buffer (65536 bytes): give the stream from emit.out a larger buffer_size in the topology" mixed/long-err.txt \
  || fail "Emit did not say the payload does not fit, and which stream to change: $(tail -5 mixed/long-err.txt)"

echo "new project test: sluice new cpp and java scaffolded, built against the installed package (offline), tested, ran"
