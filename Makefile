# The README's commands over CMake (and, for Java, Maven).
#   make run    install what is missing, build, run the mixed C++/Java example pipeline embedded
#   make test   install what is missing, build, run every test (the JUnit tests, then ctest)
#   make bench  build and run the benchmarks; results go to bench/out/
# CMake builds the native side first (libsluice, libsluice_jni, the console, jfilter.jar);
# Maven then builds the Java artifacts (jfilter/target/jfilter.jar, examples/java/target/
# examples.jar) and runs the JUnit tests against the native libraries in $(BUILD).
BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release
MVN ?= mvn -B -Dsluice.build.dir=$(abspath $(BUILD))

# make install: installs what the build made into PREFIX (default /usr/local, which needs
# root; e.g. PREFIX=$$HOME/.local for yourself): bin/ (sluice, sluiced, sluice-appd), lib/,
# include/sluice and lib/cmake/Sluice (find_package), share/sluice (jfilter.jar, the Maven
# tree), share/doc/sluice (the API references).
PREFIX ?= /usr/local

.PHONY: all deps build java docs install run test bench clean

all: java

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD)

java: build
	@$(MVN) -q -DskipTests package > $(BUILD)/mvn-package.log 2>&1 || { cat $(BUILD)/mvn-package.log; exit 1; }

# The API references (also part of `make build`): build/docs/api/html (C++, Doxygen) and
# build/jfilter/native/javadoc (Java); installed into share/doc/sluice/{cpp,javadoc}.
docs: deps $(BUILD)/build.ninja
	cmake --build $(BUILD) --target sluice_cpp_reference sluice_jfilter_maven

install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

run: java
	$(BUILD)/console/sluice run examples/mixed.yaml --work first-pass --work second-pass

# Both suites run even when the first fails; the status says whether both passed. Maven goes
# first: `mvn install` (the JUnit tests, then org.sluice:jfilter into ~/.m2) fills the local
# Maven repository that ctest's package.new_projects builds from, offline.
test: build
	status=0; \
	$(MVN) install || status=1; \
	ctest --test-dir $(BUILD) --output-on-failure --timeout 600 || status=1; \
	exit $$status

# Under bash -o pipefail: a benchmark that fails must fail make bench, not vanish into tee.
bench: build
	@mkdir -p bench/out
	bash -o pipefail -c 'bench/run.sh $(BUILD) | tee bench/out/local.md'
	bash -o pipefail -c '/usr/bin/python3 bench/plots.py bench/out/local.md bench/out | tee -a bench/out/local.md'

clean:
	rm -rf $(BUILD) jfilter/target examples/java/target
