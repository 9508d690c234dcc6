# The README's commands over CMake (and, for Java, Maven).
#   make run    install what is missing, build, run the example pipeline embedded
#   make test   install what is missing, build, run every test
#   make bench  build and run the benchmarks; results go to bench/out/
BUILD ?= build
CMAKE_FLAGS ?= -DCMAKE_BUILD_TYPE=Release

.PHONY: all deps build run test bench clean

all: build

deps:
	@scripts/install-deps.sh

$(BUILD)/build.ninja:
	cmake -S . -B $(BUILD) -G Ninja $(CMAKE_FLAGS)

build: deps $(BUILD)/build.ninja
	cmake --build $(BUILD)

run: build
	$(BUILD)/console/sluice run examples/wordcount.yaml --work first-pass --work second-pass

test: build
	ctest --test-dir $(BUILD) --output-on-failure --timeout 600

bench: build
	@mkdir -p bench/out
	bench/run.sh $(BUILD) | tee bench/out/local.md

clean:
	rm -rf $(BUILD)
