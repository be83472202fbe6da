# The two set-up commands of the README: `make demo` and `make test`.
# Each installs missing Debian packages, configures, builds and runs.

BUILD      ?= build
BUILD_ASAN ?= build-asan
BUILD_FUZZ ?= build-fuzz
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps deps-build build build-asan build-fuzz test test-release test-asan test-fuzz demo install clean

all: build

# The build's packages (all the demo needs) and the test suite's (PyTorch,
# ONNX's Python package, clang and libFuzzer on top: several hundred MB).
deps-build:
	@sh scripts/setup-deps.sh build

deps:
	@sh scripts/setup-deps.sh test

build: deps-build
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps-build
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DSMELT_SANITIZE=ON
	cmake --build $(BUILD_ASAN) -j $(JOBS)

# The libFuzzer harnesses (clang; docs/FUZZING.md).
build-fuzz: deps
	CC=clang cmake -S . -B $(BUILD_FUZZ) -DCMAKE_BUILD_TYPE=Debug \
	    -DCMAKE_C_FLAGS=-O1 -DSMELT_FUZZ=ON -DSMELT_BUILD_TESTS=OFF
	cmake --build $(BUILD_FUZZ) -j $(JOBS) --target fuzz_onnx fuzz_ir \
	    fuzz_script fuzz_npy

# The whole suite, in release mode and under ASan+UBSan, and each fuzzer
# for a fixed number of inputs over its seeds.
test: test-release test-asan test-fuzz

test-release: deps build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: deps build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS)

test-fuzz: build-fuzz
	cd $(BUILD_FUZZ) && ctest --output-on-failure -j $(JOBS)

# The library, the CLI, smelt.h, the CMake and pkg-config files and the
# Python package (docs/PYTHON.md) under PREFIX (default CMake's:
# /usr/local).
install: build
	cmake --install $(BUILD) $(if $(PREFIX),--prefix $(PREFIX))

demo: build
	sh examples/demo.sh $(BUILD)/smelt

clean:
	rm -rf $(BUILD) $(BUILD_ASAN) $(BUILD_FUZZ)
