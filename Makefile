# Front door. Everything goes through CMake in $(BUILD).
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all build configure run test test-gpu clean help

all: build

$(BUILD)/CMakeCache.txt:
	cmake -S . -B $(BUILD) $(GENERATOR) $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The main job: every variant, verified and timed on GPU 0.
run: build
	$(BUILD)/pipegemm bench --variant all

# Every test; GPU tests report "skipped" on a machine without a GPU, and the
# reason each skipped test gave is printed after the summary.
test: build
	ctest --test-dir $(BUILD) --output-on-failure
	@grep -h "^skipped:" $(BUILD)/Testing/Temporary/LastTest.log 2>/dev/null | sort -u | sed 's/^/ctest: /' || true

# Only the GPU-labelled tests.
test-gpu: build
	ctest --test-dir $(BUILD) --output-on-failure -L gpu

clean:
	rm -rf $(BUILD)

help:
	@echo "make          build the library, the pipegemm tool and the tests"
	@echo "make run      pipegemm bench --variant all (needs a GPU)"
	@echo "make test     run every test (GPU tests skip without a GPU)"
	@echo "make test-gpu run only the GPU tests"
	@echo "make clean    remove $(BUILD)"
	@echo "variables: BUILD=dir CMAKE_FLAGS='-DCMAKE_CUDA_ARCHITECTURES=90'"
