# Front door. Everything goes through CMake in $(BUILD).
BUILD ?= build
CMAKE_FLAGS ?=
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
GENERATOR := $(shell command -v ninja >/dev/null 2>&1 && echo "-G Ninja")

.PHONY: all build configure deps run test test-gpu test-sanitize clean help profile report timeline

all: build

# Configures when $(BUILD) holds no finished configure (none yet, or one that
# failed: the stamp is written only after success), when CMAKE_FLAGS or the
# generator changed since (then from a fresh cache, so that a flag left out
# goes back to its default; compiled objects are kept), or when scripts/deps.sh
# fetched something since (then on the same cache, to find it).
STAMP := $(BUILD)/pipegemm-configure.stamp
export PG_CONFIGURE_KEY := $(GENERATOR) $(CMAKE_FLAGS)
configure:
	@if [ ! -f $(STAMP) ] || [ "$$(cat $(STAMP))" != "$$PG_CONFIGURE_KEY" ]; then \
	  rm -f $(STAMP) $(BUILD)/CMakeCache.txt; \
	elif [ ! -f .deps/stamp ] || [ ! .deps/stamp -nt $(STAMP) ]; then \
	  exit 0; \
	fi; \
	echo "cmake -S . -B $(BUILD) $$PG_CONFIGURE_KEY"; \
	cmake -S . -B $(BUILD) $(GENERATOR) $(CMAKE_FLAGS) && \
	printf '%s\n' "$$PG_CONFIGURE_KEY" >$(STAMP)

build: configure
	cmake --build $(BUILD) -j $(JOBS)

# The main job: every variant, verified and timed on GPU 0.
run: build
	$(BUILD)/pipegemm bench --variant all

# What the tests need beyond the build (cmocka, cuobjdump, nvdisasm,
# matplotlib for the plots, pytest for the Python package's tests), fetched
# into .deps/ where missing (scripts/deps.sh).
deps:
	@scripts/deps.sh

# ctest, then what it leaves unsaid (scripts/ctest-skips.sh): the reason
# each skipped test gave, and how many were skipped, or that all were and
# none ran; after a failed run too, keeping its exit status. $(1): the build
# folder; $(2): ctest's options; $(3): what the tests are called.
define run_ctest
	@echo "ctest --test-dir $(1) --output-on-failure$(if $(2), $(2))"
	@rm -f $(1)/Testing/Temporary/LastOutput.log; \
	  ctest --test-dir $(1) --output-on-failure $(2) -O $(1)/Testing/Temporary/LastOutput.log; \
	  status=$$?; scripts/ctest-skips.sh $(1)/Testing/Temporary/LastOutput.log \
	    $(1)/Testing/Temporary/LastTest.log "$(3)"; exit $$status
endef

# Every test but the fuzz of the parsers (label fuzz), which make
# test-sanitize runs under the sanitizers; GPU tests report "skipped" on a
# machine without a GPU, and the reason each skipped test gave is printed
# after the summary.
test: deps
	@$(MAKE) --no-print-directory build
	$(call run_ctest,$(BUILD),-LE fuzz,tests)

# The tests labelled host and cli, and the fuzz of the parsers
# (tests/fuzz/), in a build of its own whose host C code has ASan and
# UBSan (-DPG_SANITIZE=ON); its CUDA code is for sm_90 alone, half the
# compile of the default. tests/CMakeLists.txt sets the options that make
# any report fail its test, and says which tests are left out and why.
SANITIZE_BUILD ?= build-sanitize
SANITIZE_FLAGS ?= -DPG_SANITIZE=ON -DCMAKE_CUDA_ARCHITECTURES=90
test-sanitize: deps
	@$(MAKE) --no-print-directory build BUILD=$(SANITIZE_BUILD) CMAKE_FLAGS='$(SANITIZE_FLAGS)'
	$(call run_ctest,$(SANITIZE_BUILD),-L 'host|cli|fuzz',sanitized tests)

# Only the GPU-labelled tests; without a GPU, each is skipped, and the
# summary's "100% tests passed" is followed by the reason and by a line
# that says that none of them ran.
test-gpu: build
	$(call run_ctest,$(BUILD),-L gpu,GPU tests)

# Nsight Compute counters of the write-up's three kernels, side by side
# (needs ncu and access to the GPU's counters); ncu's raw output is kept.
RESULTS ?= $(BUILD)/results
profile: build
	@mkdir -p $(RESULTS)
	$(BUILD)/pipegemm profile --variant baseline,pingpong,cp_async --size 2048 --raw $(RESULTS)/profile-ncu.txt

# One Markdown page with plots (scripts/report.py: python3 and matplotlib,
# python3's own or the one make deps fetches; no build) from the CSVs in
# $(RESULTS) that pipegemm wrote with --format csv: bench.csv, sweep*.csv,
# profile.csv, inspect.csv. Without any, the H200 page of
# bench/results/report/ from the committed runs named below, each in the
# folder of the question it answers: the stage sweep, the flagship's size
# sweep and the committed set's latest run, every profile, the SASS census;
# its stage, size, profiler and SASS sections, not the bars (one plot a
# shape), into $(H200_OUT)/h200-report.md.
REPORT_BENCH := $(wildcard $(RESULTS)/bench.csv)
REPORT_SWEEP := $(sort $(wildcard $(RESULTS)/sweep*.csv))
REPORT_PROFILE := $(wildcard $(RESULTS)/profile.csv)
REPORT_INSPECT := $(wildcard $(RESULTS)/inspect.csv)
H200 := bench/results
H200_OUT ?= bench/results/report
H200_BENCH := $(H200)/tma-ws/h200-tma-sizes.csv $(H200)/shape-set/h200-set.csv
H200_SWEEP := $(H200)/stages/h200-stage-sweep.csv
H200_PROFILE := $(H200)/write-ups/h200-profile.csv $(H200)/tma-ws/h200-tma-profile.csv \
  $(H200)/tensor-cores/h200-tensorcore-profile.csv \
  $(H200)/tensor-cores/h200-tensorcore-pingpong-multicast-profile.csv \
  $(H200)/emulated/h200-emulated-profile.csv \
  $(H200)/partial-waves/h200-streamk-partial-wave-profile.csv
H200_INSPECT := $(H200)/mechanisms/h200-inspect.csv
report:
ifneq ($(strip $(REPORT_BENCH) $(REPORT_SWEEP) $(REPORT_PROFILE) $(REPORT_INSPECT)),)
	python3 scripts/report.py $(addprefix --bench ,$(REPORT_BENCH)) \
	  $(addprefix --sweep ,$(REPORT_SWEEP)) $(addprefix --profile ,$(REPORT_PROFILE)) \
	  $(addprefix --inspect ,$(REPORT_INSPECT)) --out $(RESULTS) --name report
else
	python3 scripts/report.py $(addprefix --bench ,$(H200_BENCH)) \
	  $(addprefix --sweep ,$(H200_SWEEP)) $(addprefix --profile ,$(H200_PROFILE)) \
	  $(addprefix --inspect ,$(H200_INSPECT)) --sections stages,sizes,profile,inspect \
	  --out $(H200_OUT) --name h200-report
endif

# The pipeline timelines of the traces committed in bench/results/timelines/, or of
# those in TRACES=dir (*-trace-*.json.gz, as scripts/device-check.sh writes them with pipegemm
# trace): *-timeline-*.png beside them (scripts/timeline.py: python3 and
# matplotlib, as for make report; no build).
TRACES ?= bench/results/timelines
timeline:
	python3 scripts/timeline.py --dir $(TRACES)

# PTX and SASS, one file per kernel and architecture, in $(BUILD)/artifacts/
# (scripts/artifacts.sh; cuobjdump as for pipegemm inspect).
.PHONY: ptx sass
ptx: build
	scripts/artifacts.sh ptx $(BUILD)

sass: build
	scripts/artifacts.sh sass $(BUILD)

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)

help:
	@echo "make          build the library, the pipegemm tool and the tests"
	@echo "make run      pipegemm bench --variant all (needs a GPU)"
	@echo "make deps     fetch what the tests need into .deps/ (cmocka, cuobjdump, nvdisasm, matplotlib, pytest)"
	@echo "make test     make deps, then every test but the fuzz (GPU tests skip without a GPU)"
	@echo "make test-gpu run only the GPU tests (says so when all were skipped: no GPU)"
	@echo "make test-sanitize  the host and cli tests and the parsers' fuzz under ASan and UBSan, in $(SANITIZE_BUILD)/"
	@echo "make ptx      PTX of every kernel, per architecture, in $(BUILD)/artifacts/"
	@echo "make sass     SASS of every kernel, per architecture, in $(BUILD)/artifacts/"
	@echo "make profile  Nsight Compute table of baseline, pingpong, cp_async at 2048^3"
	@echo "make report   Markdown page with plots from $(RESULTS)/*.csv, else bench/results/report/"
	@echo "make timeline PNG timelines of the traces in bench/results/timelines/ (*-trace-*.json.gz; TRACES=dir for others)"
	@echo "make clean    remove $(BUILD) and $(SANITIZE_BUILD)"
	@echo "variables: BUILD=dir CMAKE_FLAGS='-DCMAKE_CUDA_ARCHITECTURES=90'"
