# The two set-up commands of the README: `make demo` and `make test`.
# Each installs missing Debian packages, configures, builds and runs.

BUILD      ?= build
BUILD_ASAN ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)

.PHONY: all deps build build-asan test test-release test-asan demo clean

all: build

deps:
	@sh scripts/setup-deps.sh

build: deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release
	cmake --build $(BUILD) -j $(JOBS)

build-asan: deps
	cmake -S . -B $(BUILD_ASAN) -DCMAKE_BUILD_TYPE=Debug -DSMELT_SANITIZE=ON
	cmake --build $(BUILD_ASAN) -j $(JOBS)

# The whole suite, in release mode and under ASan+UBSan.
test: test-release test-asan

test-release: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-asan: build-asan
	cd $(BUILD_ASAN) && ASAN_OPTIONS=detect_leaks=1 \
	    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	    ctest --output-on-failure -j $(JOBS)

demo: build
	sh examples/demo.sh $(BUILD)/smelt

clean:
	rm -rf $(BUILD) $(BUILD_ASAN)
