#!/usr/bin/env bash
# The one run on the GPU machine: build, every test, compute-sanitizer over
# the GPU tests, the benchmark and the pipelining study, each step logged with a
# timestamp. A failed step is recorded and the next one runs anyway.
#
#   OUT=/path/to/out scripts/device-check.sh        (cwd: the repo root)
#
# The machine has no network: what the tests need beyond the toolkit comes
# in .deps/ (scripts/deps.sh, run where there is network: cmocka, and
# cuobjdump/nvdisasm where the toolkit lacks them; .deps is git-ignored, so
# the device call must carry it). Files in $OUT:
#   summary.txt   nvidia-smi, each step's exit status and time
#   build.log     scripts/deps.sh, configure + build, then ctest: every test
#                 (GPU ones included), then test_gpu_threads a thousand
#                 rounds over the forms a rare race once hit
#   train.txt     python/examples/train.py: the training example
#   python.log    the Python package (docs/python.md): its GPU tests
#                 (python/tests/run.py gpu, pytest -v), `pip install ./python`
#                 into a scratch folder (its build backend from the carried
#                 .deps/wheels: `pip download scikit-build-core -d
#                 .deps/wheels` where there is network), and README's torch
#                 check run with it from outside the tree
#   sanitizer.log compute-sanitizer memcheck/racecheck/synccheck/initcheck
#   bench.txt     make run (pipegemm bench --variant all, 4096^3), table, and
#                 the kernels' registers/shared memory (cuobjdump)
#   study.txt     pipegemm study pipelining, twice (run-to-run spread), and
#                 pipegemm study single-warp
#   sweep.csv     pipegemm bench --variant all --stages 1-8 --format csv at
#                 2048^3 and 4096^3 (scripts/plot-stages.sh draws it)
#   sizes.csv     the Hopper size sweep: cublas, cp_async, tma, tma_ws and
#                 auto at their default stages over PG_SIZE_SHAPES
#                 (scripts/report.py draws it)
#   profile.txt   pipegemm profile $PG_PROFILE_ARGS (Nsight Compute), then
#                 everything ncu printed (re-derive tables from it with
#                 scripts/replay-ncu.sh, no GPU needed)
#   headline.csv  pipegemm bench --variant all --format csv at 4096^3, its
#                 commit as a "# commit:" fact (scripts/readme-table.py makes
#                 the README's headline table of it)
#   trace/        pipegemm trace of each run of PG_TRACE_RUNS at
#                 PG_TRACE_SIZE^3: run-trace-NAME.json.gz (Chrome trace-event
#                 JSON, gzipped) and run-trace-NAME.txt (the summary and any
#                 error lines), and run-timeline-NAME.png, which `make
#                 timeline TRACES=$OUT/trace` draws of them
#   emulated-set.csv, emulated-kernels.txt, fp16x3.csv, fp16x3-split.csv, fp16x3-kernels.txt, layout-counters.txt, shapes-before.csv,
#   fp16x3-before.csv, before-after.txt: the steps of PG_BENCH_STEPS and
#                 PG_BEFORE_STEPS that make them (below)
#   device-check.tar.gz  everything above but summary.txt, in one file (the
#                 device machine returns few files)
#
# Environment:
#   PG_SKIP_SANITIZER=1  PG_SKIP_BENCH=1 (bench and study)  PG_SKIP_TESTS=1
#   PG_TEST_REGEX=test_gpu_fp16x3  only the tests CTest's -R picks, in place
#                              of make test and the threads soak
#   PG_SKIP_PROFILE=1  PG_SKIP_STUDIES=1 (studies, stage and size sweeps)
#   PG_SKIP_TRACE=1 (pipeline traces)  PG_SKIP_PYTHON=1 (the Python package)
#   PG_PYTHON_REQUIRE=torch,cupy  frameworks the Python GPU tests fail without
#                              (rather than skip their tests); add jax to
#                              hold JAX's tests to it too
#   PG_CONFIGS="ptx80 no-tma-ws-image"  which of the two other builds to make
#   PG_SKIP_CONFIGS=1          the two other builds (configs.log): PTX only for
#                              compute_80, so every kernel runs its Ampere code
#                              on this GPU through the driver's compiler; and
#                              the sm_90a files (tma_ws) built for sm_80 only
#                              (-DPG_SM90A_ARCHITECTURES=80), so this GPU
#                              cannot load its image, as a GPU after sm_90
#                              cannot: the GPU tests in each, auto included
#   PG_LAYOUT_SET=bench/shapes/layouts.txt  every op(A), op(B) at the large
#                              shapes and the batched set (layouts.csv):
#                              auto, auto_emulated and auto_tf32 beside
#                              cuBLAS with the same ops and batch
#   PG_SHAPE_SET=bench/shapes/set.txt  the committed shape set, timed in
#                              one process (shapes.csv): cublas, the tma_ws
#                              forms and auto, with the geometric means
#   PG_COMMIT=abc1234          the commit the tree is (default: git's HEAD)
#   PG_BEFORE_TREE=dir         a source tree of an earlier version (git
#                              archive into a carried .deps/ folder): built
#                              too, and `bench --variant all` at 4096^3 and
#                              bench/host_cost.c run on it and on this tree,
#                              alternating, twice (before-after.txt)
#   PG_BEFORE_STEPS="bench shapes"  what runs on the earlier tree: that
#                              bench and host cost (bench, the default),
#                              the shape set (shapes-before.csv),
#                              wgmma_fp16x3 (fp16x3, fp16x3-before.csv)
#   PG_BENCH_ARGS="..."        extra arguments for both bench runs
#   PG_BENCH_SIZE=4096         bench problem size
#   PG_SANITIZER_TOOLS="memcheck racecheck synccheck initcheck"
#   PG_BENCH_STEPS="headline shapes layouts fp16x3 emulated products ozaki2 peers"
#                              which of the bench section's runs to make
#                              (default: all of these): the README's table,
#                              the shape set, the layouts, wgmma_fp16x3
#                              beside 3xTF32 and cuBLAS, the emulated
#                              entries on the set (each input kind), the product
#                              prototypes (scripts/products.py, and
#                              scripts/ozaki2.py's), the emulated entries
#                              beside their peers in one process
#                              (scripts/peers-emulated.py); also layout-counters
#                              (only when named): Nsight Compute's shares
#                              for the layouts that miss their targets
#   PG_PRODUCTS_ARGS="--sizes 4096"  scripts/products.py's arguments
#   PG_OZAKI2_ARGS="--moduli 7,8"  scripts/ozaki2.py's arguments
#   PG_FP16X3_PARTS="walkers stages"  which of the fp16x3 step's runs to make
#                              (default: all of squares stages walkers
#                              kernels)
#   PG_PEERS_ARGS="--sizes 4096"  scripts/peers-emulated.py's arguments
#   PG_TRAIN_ARGS="--hidden 8192"  python/examples/train.py's arguments
#   PG_SANITIZER_TESTS="test_gpu_layouts test_gpu_oom"  only these GPU tests
#                              under the sanitizer (default: every one)
#   PG_SANITIZER_VARIANTS=a,b  limit test_gpu_variants under the sanitizer to these
#   PG_SANITIZER_SKIP=cublas   variants test_gpu_variants leaves out under every
#                              tool but memcheck (cuBLAS's own kernels are not
#                              ours to race-check)
#   PG_SYNCCHECK_SKIP=pipeline_block,barrier  also left out under synccheck:
#                              libcu++ attaches copies to a barrier with
#                              cp.async.mbarrier.arrive without .noinc plus an
#                              ordinary arrive, a net-zero pair by the PTX ISA
#                              that synccheck reports as "Missing wait" /
#                              "Barrier overflow" (a bare-PTX kernel with the
#                              same two instructions is reported too; the
#                              .noinc form of 09_mbarrier.cu is not)
#   PG_DEADLINE_S=530          whole-script budget; steps that would pass it
#                              are cut short (timeout) or skipped
#   PG_BENCH_RESERVE_S=200     of which the sanitizer runs leave this much to
#                              the benchmark and study
#   PG_BUILD_DIR=build-dev
#   CMAKE_FLAGS="-DCMAKE_CUDA_ARCHITECTURES=90"  the configure of every make call
#   PG_PROFILE_ARGS="--variant cublas,cp_async,mbarrier,tma,tma_ws --size 4096"
#   PG_TRACE_RUNS="baseline cp_async:2 ..."  the variants to trace, :S for a
#                              stage count (default: the nine runs of
#                              bench/results/timelines/README.md, then
#                              barrier, pipeline_block and cp_async at
#                              5, 6 and 7 stages)
#   PG_TRACE_SIZE=4096  PG_TRACE_BLOCKS=8   their problem size and sample
#   PG_SIZE_SHAPES="--size=1024 --size=2048 ..."  one bench run per word
#                              ('=' joins an option and its value; ':'
#                              separates options within a shape)
set -uo pipefail

root=$(pwd)
OUT=${OUT:-$root/device-out}
mkdir -p "$OUT"
build=${PG_BUILD_DIR:-build-dev}
deadline=$(( $(date +%s) + ${PG_DEADLINE_S:-530} ))
summary=$OUT/summary.txt
: >"$summary"
: >"$OUT/build.log"
failed_steps=0
reserve_s=0 # seconds kept free for later steps (the benchmark)

ts() { date -u +%Y-%m-%dT%H:%M:%SZ; }
note() { echo "[$(ts)] $*" | tee -a "$summary"; }

# run_step NAME STDOUT STDERR LIMIT_S CMD...: runs CMD under a time limit
# (never past the deadline), appends its output to the given files and
# records the exit status in the summary. Returns CMD's status.
run_step() {
  local name=$1 out=$2 err=$3 limit=$4
  shift 4
  local left=$(( deadline - reserve_s - $(date +%s) ))
  if (( left < 15 )); then
    note "SKIP  $name: out of time (PG_DEADLINE_S, ${reserve_s}s kept for the benchmark)"
    failed_steps=$((failed_steps + 1))
    return 125
  fi
  (( limit > left - 5 )) && limit=$(( left - 5 ))
  echo "==== [$(ts)] $name: $* (limit ${limit}s)" >>"$err"
  local t0 rc
  t0=$(date +%s)
  timeout --kill-after=10 "$limit" "$@" >>"$out" 2>>"$err"
  rc=$?
  local took=$(( $(date +%s) - t0 ))
  echo "==== [$(ts)] $name: exit $rc after ${took}s" >>"$err"
  if (( rc == 0 )); then
    note "ok    $name (${took}s)"
  elif (( rc == 124 || rc == 137 )); then
    note "FAIL  $name: timed out after ${took}s (limit ${limit}s)"
    failed_steps=$((failed_steps + 1))
  else
    note "FAIL  $name: exit $rc (${took}s)"
    failed_steps=$((failed_steps + 1))
  fi
  return $rc
}

# ---- environment ------------------------------------------------------------
if ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
# Every make call below configures $build the same way (the Makefile
# configures again when CMAKE_FLAGS change).
export CMAKE_FLAGS=${CMAKE_FLAGS:--DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90}

# The commit this tree is: PG_COMMIT where the copy's own history may be
# older than its files (a tree copied over to the GPU machine), else git's.
commit=${PG_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo 'no commit')}
note "device-check in $root, commit $commit, deadline ${PG_DEADLINE_S:-530}s"
{
  echo "---- nvidia-smi"
  timeout 30 nvidia-smi 2>&1 || echo "nvidia-smi failed: exit $?"
  timeout 30 nvidia-smi --query-gpu=name,compute_cap,clocks.max.sm,clocks.sm,power.limit,driver_version --format=csv 2>&1
  echo "---- $(nvcc --version 2>&1 | tail -n 1); $(cmake --version 2>&1 | head -n 1); $(gcc --version 2>&1 | head -n 1)"
  echo "---- status of the working tree"
  git status --short 2>&1 | head -n 40
} >>"$summary"

# ---- what the tests need, configure and build --------------------------------
# cmocka from the carried .deps/ (CMake finds it there), cuobjdump and
# nvdisasm from the toolkit. Without them the build goes on; the tests then
# run without make test's check (below).
have_deps=0
run_step deps "$OUT/build.log" "$OUT/build.log" 60 scripts/deps.sh && have_deps=1
grep '^deps: ' "$OUT/build.log" | tail -n 1 >>"$summary"
configured=0
if run_step configure "$OUT/build.log" "$OUT/build.log" 120 \
    make configure BUILD="$build"; then
  configured=1
fi
built=0
if (( configured )) &&
   run_step build "$OUT/build.log" "$OUT/build.log" 360 \
    make build BUILD="$build" JOBS="$(nproc)"; then
  built=1
elif (( configured )); then
  # The XLA handler compiles against this machine's jaxlib headers, which
  # may differ from the ones it was written for: the rest without it.
  # Every later make call configures the same way (the Makefile configures
  # again when CMAKE_FLAGS change).
  export CMAKE_FLAGS="${CMAKE_FLAGS:-} -DPG_XLA_FFI=OFF"
  run_step "build without the XLA handler" "$OUT/build.log" "$OUT/build.log" 240 \
    make build BUILD="$build" JOBS="$(nproc)" && built=1
fi
# Warnings and errors, short, in the summary; the whole log is in build.log.
grep -E "error|warning" "$OUT/build.log" | head -n 20 >>"$summary"

# ---- tests --------------------------------------------------------------------
if (( built )) && [ "${PG_SKIP_TESTS:-0}" != 1 ]; then
  if [ -n "${PG_TEST_REGEX:-}" ]; then
    # Only the tests named (a short call), on the build configured above.
    run_step "ctest -R $PG_TEST_REGEX" "$OUT/build.log" "$OUT/build.log" ${PG_TEST_LIMIT_S:-320} \
      ctest --test-dir "$build" -R "$PG_TEST_REGEX" --output-on-failure
  elif (( have_deps )); then
    # The README's test command, on the build configured above; the host
    # and cli tests on every core beside the GPU tests, which take the GPU
    # one at a time (their RESOURCE_LOCK, tests/CMakeLists.txt).
    run_step "make test" "$OUT/build.log" "$OUT/build.log" ${PG_TEST_LIMIT_S:-320} \
      env CTEST_PARALLEL_LEVEL="$(nproc)" make test BUILD="$build"
  else
    # make test would stop at scripts/deps.sh: every test that was built.
    run_step "ctest (deps missing)" "$OUT/build.log" "$OUT/build.log" 200 \
      ctest --test-dir "$build" --output-on-failure
  fi
  # A race that shows once in hundreds of calls (a consumer's shared loads
  # against the copy engine's next write, ptx.cuh): the forms that had it
  # or share its release, eight threads, a thousand rounds each.
  [ -z "${PG_TEST_REGEX:-}" ] && run_step "threads soak" "$OUT/build.log" "$OUT/build.log" 120 \
    env PG_TEST_VARIANTS=auto,tma_ws_n32,tma_ws_n64,tma_ws_splitk,tma PG_TEST_ROUNDS=1000 \
    "$build/tests/test_gpu_threads"
  # the per-test lines, for the summary
  grep -E "Test +#|tests passed|Skipped|Failed" "$OUT/build.log" | head -n 40 >>"$summary"
fi

# ---- the Python package (python/, docs/python.md) ---------------------------------
# Its GPU tests on this build's library, verbose (pytest: python3's own or the
# carried .deps/pytest); then the package as README installs it (pip, into a
# scratch folder here) and README's one-line check, run from / with it.
if (( built )) && [ "${PG_SKIP_PYTHON:-0}" != 1 ]; then
  : >"$OUT/python.log"
  pylib=$root/$build/libpipegemm.so
  PG_PYTHON_REQUIRE=${PG_PYTHON_REQUIRE-torch,cupy} \
    run_step "python gpu tests" "$OUT/python.log" "$OUT/python.log" 300 \
    python3 python/tests/run.py gpu --library "$pylib" -v
  grep -E "^(=+ .* in [0-9.]+s.* =+|skipped: .*|run.py: .*)$" "$OUT/python.log" >>"$summary"
  pysite=$(mktemp -d)
  # The CMake binary itself, first on the PATH: a `cmake` that is the PyPI
  # package's launcher fails inside pip's isolated build environment, and
  # scikit-build-core then asks for CMake from PyPI, which is out of reach.
  echo 'message("${CMAKE_COMMAND}")' >"$pysite/where.cmake"
  cmake_dir=$(dirname "$(cmake -P "$pysite/where.cmake" 2>&1 | tail -n 1)")
  if run_step "python install" "$OUT/python.log" "$OUT/python.log" 120 \
       env PATH="$cmake_dir:$PATH" \
       python3 -m pip install --no-index --no-deps --find-links "$root/.deps/wheels" --no-compile \
         --target "$pysite" ./python; then
    run_step "python readme check" "$OUT/python.log" "$OUT/python.log" 120 \
      env -C / PYTHONPATH="$pysite" PIPEGEMM_LIBRARY="$pylib" python3 -c \
      "import torch, pipegemm; a = torch.rand(1000, 700, device='cuda'); b = torch.rand(700, 900, device='cuda'); print((pipegemm.matmul(a, b) - a @ b).abs().max())"
    grep '^tensor(' "$OUT/python.log" | tail -n 1 | sed 's/^/python readme check: /' >>"$summary"
    # A model's layer routed through pipegemm, forward and backward, from
    # the installed package (docs/python.md, "one line routes a model").
    run_step "python routing check" "$OUT/python.log" "$OUT/python.log" 120 \
      env -C / PYTHONPATH="$pysite" python3 -c \
      "import torch, pipegemm; layer = torch.nn.Linear(700, 900).cuda(); x = torch.rand(1000, 700, device='cuda', requires_grad=True)
with pipegemm.torch.use(precision='emulated'):
    y = layer(x)
y.sum().backward(); print('routed:', y.shape, x.grad.shape)"
    grep '^routed:' "$OUT/python.log" | tail -n 1 >>"$summary"
    # The training example (docs/python.md): torch FP32, torch TF32 and
    # pipegemm emulated in one process, beside an FP64 run (train.txt).
    run_step "python training example" "$OUT/train.txt" "$OUT/train.txt" 150 \
      env PYTHONPATH="$pysite" PIPEGEMM_LIBRARY="$pylib" python3 python/examples/train.py \
      ${PG_TRAIN_ARGS:-}
    grep -E "^(torch|pipegemm) " "$OUT/train.txt" >>"$summary"
  fi
  rm -rf "$pysite"
fi

# ---- compute-sanitizer over the GPU tests ----------------------------------------
if (( built )) && [ "${PG_SKIP_SANITIZER:-0}" != 1 ]; then
  : >"$OUT/sanitizer.log"
  sanitizer=$(command -v compute-sanitizer || true)
  [ -z "$sanitizer" ] && [ -x /usr/local/cuda/bin/compute-sanitizer ] && sanitizer=/usr/local/cuda/bin/compute-sanitizer
  [ -z "$sanitizer" ] && [ -x /usr/local/cuda/compute-sanitizer/compute-sanitizer ] &&
    sanitizer=/usr/local/cuda/compute-sanitizer/compute-sanitizer
  gpu_tests=$(find "$build/tests" -maxdepth 1 -type f -name 'test_gpu_*' -perm -u+x | sort)
  if [ -n "${PG_SANITIZER_TESTS:-}" ]; then
    gpu_tests=$(for t in $gpu_tests; do
      case " $PG_SANITIZER_TESTS " in *" $(basename "$t") "*) echo "$t" ;; esac
    done)
  fi
  if [ -z "$sanitizer" ]; then
    note "FAIL  sanitizer: compute-sanitizer not found"
    failed_steps=$((failed_steps + 1))
  elif [ -z "$gpu_tests" ]; then
    note "FAIL  sanitizer: no test_gpu_* executables in $build/tests"
    failed_steps=$((failed_steps + 1))
  else
    # The sanitizer runs stop early enough to leave the benchmark its time.
    [ "${PG_SKIP_BENCH:-0}" != 1 ] && reserve_s=${PG_BENCH_RESERVE_S:-200}
    for tool in ${PG_SANITIZER_TOOLS:-memcheck racecheck synccheck initcheck}; do
      skip=${PG_SANITIZER_SKIP-cublas}
      [ "$tool" = synccheck ] && skip=$skip,${PG_SYNCCHECK_SKIP-pipeline_block,barrier}
      [ "$tool" = memcheck ] && skip=
      for t in $gpu_tests; do
        # racecheck is the slow tool: over the whole registry one run outlasts
        # any sensible limit, so it takes test_gpu_variants one variant at a
        # time (the names come from the registry, via pipegemm list).
        if [ "$tool" = racecheck ] && [ "$(basename "$t")" = test_gpu_variants ] &&
           [ -z "${PG_SANITIZER_VARIANTS:-}" ]; then
          for v in $("$build/pipegemm" list --format csv | grep -v '^#' | tail -n +2 | cut -d, -f1); do
            case ",$skip," in *",$v,"*) continue ;; esac
            PG_TEST_QUICK=1 PG_TEST_VARIANTS=$v \
              run_step "sanitizer $tool $(basename "$t") $v" "$OUT/sanitizer.log" "$OUT/sanitizer.log" 75 \
              "$sanitizer" --tool "$tool" --error-exitcode 1 --print-limit 20 "$t"
          done
          continue
        fi
        # Tests about the library's promises rather than its kernels run
        # under memcheck only: their kernels are the ones test_gpu_variants
        # races. test_gpu_threads (eight threads outlast racecheck's limit),
        # test_gpu_blas (alpha = 0, Inf and NaN) and test_gpu_oom (the GPU
        # full: each entry's first use, one process each).
        case "$(basename "$t")" in
          test_gpu_threads | test_gpu_blas | test_gpu_oom)
            [ "$tool" != memcheck ] && continue ;;
        esac
        # test_gpu_state makes failed runtime calls on purpose (an error the
        # caller left pending): those are not the library's.
        # test_gpu_oom fills the GPU on purpose: its refused allocations are
        # not the library's either, and it starts a process per entry.
        # test_gpu_layouts under racecheck: the whole file outlasts any
        # sensible limit, so an entry at a time, each that takes more than
        # op N, N (the study entries only refuse them), without the
        # 65537-GEMM cases; then those cases too (a block walking several
        # GEMMs past grid z's 65535 reuses its shared memory between them)
        # for the kernels that walk the batch.
        if [ "$tool" = racecheck ] && [ "$(basename "$t")" = test_gpu_layouts ] &&
           [ -z "${PG_SANITIZER_VARIANTS:-}" ]; then
          for v in $("$build/pipegemm" list --format csv | python3 -c '
import csv, sys
for r in csv.DictReader(l for l in sys.stdin if not l.startswith("#")):
    if r["layouts"] != "NN": print(r["name"])'); do
            case ",$skip," in *",$v,"*) continue ;; esac
            PG_TEST_QUICK=1 PG_TEST_MAX_BATCH=7 PG_TEST_VARIANTS=$v \
              run_step "sanitizer racecheck test_gpu_layouts $v" "$OUT/sanitizer.log" \
              "$OUT/sanitizer.log" 60 \
              "$sanitizer" --tool racecheck --error-exitcode 1 --print-limit 20 "$t"
          done
          PG_TEST_QUICK=1 PG_TEST_VARIANTS=cp_async_any,mma_cp_async_any,skinny_ffma \
            run_step "sanitizer racecheck test_gpu_layouts batch walkers" "$OUT/sanitizer.log" \
            "$OUT/sanitizer.log" 150 \
            "$sanitizer" --tool racecheck --error-exitcode 1 --print-limit 20 "$t"
          continue
        fi
        api_errors=()
        limit=75
        max_batch=
        case "$(basename "$t")" in
          test_gpu_state) api_errors=(--report-api-errors no) ;;
          test_gpu_oom) api_errors=(--report-api-errors no) limit=200 ;;
          test_gpu_layouts) [ "$tool" = racecheck ] && limit=180 max_batch=7 ;; # PG_SANITIZER_VARIANTS
        esac
        PG_TEST_QUICK=1 PG_TEST_MAX_BATCH=$max_batch \
          PG_TEST_VARIANTS=${PG_SANITIZER_VARIANTS:-} PG_TEST_SKIP_VARIANTS=$skip \
          run_step "sanitizer $tool $(basename "$t")" "$OUT/sanitizer.log" "$OUT/sanitizer.log" "$limit" \
          "$sanitizer" --tool "$tool" "${api_errors[@]}" --error-exitcode 1 --print-limit 20 "$t"
      done
    done
    # The single-warp study's kernels are not in the registry: sanitize the
    # study itself, small K (synccheck: see PG_SYNCCHECK_SKIP).
    for tool in memcheck racecheck; do
      run_step "sanitizer $tool study single-warp" "$OUT/sanitizer.log" "$OUT/sanitizer.log" 60 \
        "$sanitizer" --tool "$tool" --error-exitcode 1 --print-limit 20 \
        "$build/pipegemm" study single-warp --k 512 --warmup 1 --iters 2 --quiet
    done
    reserve_s=0
    grep -E "ERROR SUMMARY|Hazard|RACECHECK SUMMARY" "$OUT/sanitizer.log" | sort | uniq -c | head -n 20 >>"$summary"
  fi
fi

# ---- the code paths of other GPUs, on this one ----------------------------------
if (( built )) && [ "${PG_SKIP_CONFIGS:-0}" != 1 ]; then
  : >"$OUT/configs.log"
  for config in "ptx80:-DCMAKE_CUDA_ARCHITECTURES=80-virtual" \
                "no-tma-ws-image:-DCMAKE_CUDA_ARCHITECTURES=90 -DPG_SM90A_ARCHITECTURES=80"; do
    name=${config%%:*}
    flags=${config#*:}
    case " ${PG_CONFIGS:-ptx80 no-tma-ws-image} " in *" $name "*) ;; *) continue ;; esac
    if run_step "configure $name" "$OUT/configs.log" "$OUT/configs.log" 120 \
         make configure BUILD="build-$name" CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release $flags" &&
       run_step "build $name" "$OUT/configs.log" "$OUT/configs.log" 300 \
         make build BUILD="build-$name" CMAKE_FLAGS="-DCMAKE_BUILD_TYPE=Release $flags" \
         JOBS="$(nproc)"; then
      run_step "gpu tests $name" "$OUT/configs.log" "$OUT/configs.log" 200 \
        ctest --test-dir "build-$name" --output-on-failure -L gpu
      run_step "list $name" "$OUT/configs.log" "$OUT/configs.log" 30 \
        "build-$name/pipegemm" list
      run_step "bench auto $name" "$OUT/configs.log" "$OUT/configs.log" 60 \
        "build-$name/pipegemm" bench --variant mbarrier,tma,tma_ws,auto --size 2048
    fi
  done
  grep -E "tests passed|runs checked|captures replayed|checks, " "$OUT/configs.log" >>"$summary"
fi

# ---- before and after: the same benchmark and the host's cost of a call -----------
if (( built )) && [ -n "${PG_BEFORE_TREE:-}" ]; then
  : >"$OUT/before-after.txt"
  before=build-before
  if run_step "configure before" "$OUT/before-after.txt" "$OUT/before-after.txt" 120 \
       cmake -S "$PG_BEFORE_TREE" -B "$before" -G Ninja -DCMAKE_BUILD_TYPE=Release \
       -DCMAKE_CUDA_ARCHITECTURES=90 -DBUILD_TESTING=OFF \
       -DCMOCKA_ROOT="$root/.deps/cmocka/usr" &&
     run_step "build before" "$OUT/before-after.txt" "$OUT/before-after.txt" 300 \
       cmake --build "$before" -j "$(nproc)" --target pipegemm_cli &&
     run_step "host cost before (build)" "$OUT/before-after.txt" "$OUT/before-after.txt" 60 \
       gcc -std=c11 -O2 -D_POSIX_C_SOURCE=200809L bench/host_cost.c -I"$PG_BEFORE_TREE/include" \
       -I/usr/local/cuda/include "$before/libpipegemm.a" -L/usr/local/cuda/lib64 -lcudart \
       -lcublas -lstdc++ -lpthread -lm -ldl -o "$before/pg_host_cost"; then
    # The committed shape set on the earlier tree too (shapes-before.csv:
    # cublas and auto, each ratio in its own process as the set's own run).
    if [[ " ${PG_BEFORE_STEPS:-bench} " == *" shapes "* ]]; then
      run_step "shape set before" "$OUT/shapes-before.csv" "$OUT/before-after.txt" 240 \
        "$before/pipegemm" bench --shapes "${PG_SHAPE_SET:-bench/shapes/set.txt}" \
        --variant cublas,auto --format csv --quiet
      grep "geometric mean" "$OUT/shapes-before.csv" | sed 's/^/before: /' >>"$summary"
    fi
    # wgmma_fp16x3 on the earlier tree, beside cuBLAS strict
    # (fp16x3-before.csv), at the sizes the fp16x3 step times.
    if [[ " ${PG_BEFORE_STEPS:-bench} " == *" fp16x3 "* ]]; then
      : >"$OUT/fp16x3-before.csv"
      for fp16x3_size in 2048 4096 8192 16384; do
        run_step "fp16x3 before $fp16x3_size" "$OUT/fp16x3-before.csv" "$OUT/before-after.txt" 90 \
          "$before/pipegemm" bench --variant cublas,wgmma_fp16x3 --size "$fp16x3_size" \
          --format csv --quiet
      done
    fi
    for pass in 1 2; do
      [[ " ${PG_BEFORE_STEPS:-bench} " == *" bench "* ]] || break
      for side in before after; do
        tool=$before/pipegemm cost=$before/pg_host_cost
        [ "$side" = after ] && tool=$build/pipegemm cost=$build/pg_host_cost
        echo "==== $side, pass $pass" >>"$OUT/before-after.txt"
        run_step "bench $side ($pass)" "$OUT/before-after.txt" "$OUT/before-after.txt" 120 \
          "$tool" bench --variant all --size 4096 --quiet
        run_step "host cost $side ($pass)" "$OUT/before-after.txt" "$OUT/before-after.txt" 60 \
          "$cost"
      done
    done
  fi
fi

# ---- benchmark and study ---------------------------------------------------------
cli=$build/pipegemm
if (( built )) && [ -x "$cli" ] && [ "${PG_SKIP_BENCH:-0}" != 1 ]; then
  : >"$OUT/bench.txt"
  : >"$OUT/study.txt"
  : >"$OUT/sweep.csv"
  size=${PG_BENCH_SIZE:-4096}
  bench_steps=" ${PG_BENCH_STEPS:-headline shapes layouts fp16x3 emulated products ozaki2 peers} "
  wants() { case "$bench_steps" in *" $1 "*) return 0 ;; esac; return 1; }
  if ! wants headline; then
    :
  elif [ -z "${PG_BENCH_SIZE:-}${PG_BENCH_ARGS:-}" ]; then
    # The README's main command, as a user runs it.
    run_step "make run" "$OUT/bench.txt" "$OUT/bench.txt" 150 make run BUILD="$build"
    # The same as CSV, for the README's headline table (scripts/readme-table.py).
    echo "# commit: $commit" >"$OUT/headline.csv"
    run_step "headline table" "$OUT/headline.csv" "$OUT/bench.txt" 150 \
      "$cli" bench --variant all --format csv --quiet
  else
    # shellcheck disable=SC2086 # PG_BENCH_ARGS is a list of words
    run_step "bench table" "$OUT/bench.txt" "$OUT/bench.txt" 150 \
      "$cli" bench --variant all --size "$size" ${PG_BENCH_ARGS:-}
  fi
  [ "${PG_SKIP_STUDIES:-0}" = 1 ] && PG_SIZE_SHAPES=${PG_SIZE_SHAPES:-none}
  for pass in 1 2; do
    [ "${PG_SKIP_STUDIES:-0}" = 1 ] && break
    run_step "study pipelining ($pass)" "$OUT/study.txt" "$OUT/study.txt" 120 \
      "$cli" study pipelining
  done
  [ "${PG_SKIP_STUDIES:-0}" != 1 ] &&
    run_step "study single-warp" "$OUT/study.txt" "$OUT/study.txt" 120 "$cli" study single-warp
  for sweep_size in 2048 4096; do
    [ "${PG_SKIP_STUDIES:-0}" = 1 ] && break
    run_step "stage sweep $sweep_size" "$OUT/sweep.csv" "$OUT/summary.txt" 150 \
      "$cli" bench --variant all --stages 1-8 --size "$sweep_size" --format csv --quiet
  done
  : >"$OUT/sizes.csv"
  for shape in ${PG_SIZE_SHAPES:---size=1024 --size=2048 --size=4096 --size=8192 --m=4096:--n=8192:--k=2048 --m=3000:--n=5000:--k=1000}; do
    [ "$shape" = none ] && break
    # shellcheck disable=SC2046 # one word per option of the shape
    run_step "size sweep $shape" "$OUT/sizes.csv" "$OUT/summary.txt" 120 \
      "$cli" bench --variant cublas,cp_async,tma,tma_ws,auto $(echo "$shape" | tr ':' ' ') \
      --format csv --quiet
  done
  if wants shapes && [ -f "${PG_SHAPE_SET:-bench/shapes/set.txt}" ]; then
    run_step "shape set" "$OUT/shapes.csv" "$OUT/summary.txt" 240 \
      "$cli" bench --shapes "${PG_SHAPE_SET:-bench/shapes/set.txt}" \
      --variant cublas,tma_ws,tma_ws_splitk,tma_ws_m256,tma_ws_n64,tma_ws_streamk,auto --format csv --quiet
    grep "geometric mean" "$OUT/shapes.csv" >>"$summary"
  fi
  # Every layout and the batched set (bench/shapes/layouts.txt), each class
  # beside its cuBLAS row with the same ops and batch (layouts.csv).
  if wants layouts && [ -f "${PG_LAYOUT_SET:-bench/shapes/layouts.txt}" ]; then
    : >"$OUT/layouts.csv"
    for variants in cublas,auto cublas,auto_emulated cublas_tf32,auto_tf32; do
      run_step "layouts $variants" "$OUT/layouts.csv" "$OUT/summary.txt" 240 \
        "$cli" bench --shapes "${PG_LAYOUT_SET:-bench/shapes/layouts.txt}" \
        --variant "$variants" --format csv --quiet
    done
    grep "geometric mean" "$OUT/layouts.csv" >>"$summary"
  fi
  # What limits the layouts that miss their targets: each kernel of one
  # launch of the entry and of cuBLAS beside it, by Nsight Compute at the
  # GPU's own clocks (layout-counters.txt): its speed-of-light section (time,
  # SM, L1, L2 and DRAM shares), the FMA pipe and the warps resident; the
  # library's and cuBLAS's kernels only (not the bench's input fills and
  # clock probe, pgh_*).
  if wants layout-counters; then
    ncu_tool=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for run in "cublas,auto:--size 6144 --op NT" "cublas_tf32,auto_tf32:--size 4096 --op TT" \
               "cublas,auto:--size 64 --batch 1024"; do
      run_step "layout counters ${run%%:*} ${run#*:}" "$OUT/layout-counters.txt" "$OUT/summary.txt" 90 \
        "$ncu_tool" --clock-control none --section SpeedOfLight --metrics sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active,sm__warps_active.avg.pct_of_peak_sustained_active \
        --kernel-name regex:'pg_|gemm|nvjet' \
        "$cli" bench --variant "${run%%:*}" ${run#*:} --warmup 0 --iters 1 --check off --quiet
    done
  fi
  # The FP32-accurate entries on the committed set, beside cuBLAS strict and
  # auto, on each kind of input (emulated-set.csv): the uniform and the wide
  # inputs at every shape, the tiny ones at the accuracy shapes.
  if wants emulated; then
    : >"$OUT/emulated-set.csv"
    for inputs in uniform:set wide:set tiny:emulated-accuracy; do
      run_step "emulated ${inputs%%:*}" "$OUT/emulated-set.csv" "$OUT/summary.txt" 200 \
        "$cli" bench --shapes "bench/shapes/${inputs#*:}.txt" --inputs "${inputs%%:*}" \
        --variant cublas,auto,wgmma_3xtf32,wgmma_fp16x3,auto_emulated --format csv --quiet
    done
    grep "geometric mean" "$OUT/emulated-set.csv" >>"$summary"
    # Where 3xTF32's time goes at small squares (a call's fixed time in
    # auto's model): each launch's own duration (emulated-kernels.txt),
    # beside the call's time in emulated-set.csv.
    ncu_tool=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for emulated_size in 512 1024; do
      run_step "emulated kernels $emulated_size" "$OUT/emulated-kernels.txt" "$OUT/summary.txt" 60 \
        "$ncu_tool" --clock-control none --metrics gpu__time_duration.sum \
        --kernel-name regex:'3xtf32|reduce|split' \
        "$cli" bench --variant wgmma_3xtf32 --size "$emulated_size" --warmup 0 --iters 1 \
        --check off --quiet
    done
  fi
  # The scaled FP16 form's build beside 3xTF32 and cuBLAS strict, at the
  # issue's squares on uniform inputs, at two on rows spanning 2^+-60 (wide:
  # its tiles fall back to 3xTF32 there), each checked against FP64; then its
  # stage counts (fp16x3.csv).
  fp16x3_parts=" ${PG_FP16X3_PARTS:-squares stages walkers kernels} "
  part() { wants fp16x3 && [[ "$fp16x3_parts" == *" $1 "* ]]; }
  if wants fp16x3; then : >"$OUT/fp16x3.csv"; fi
  if part squares; then
    for run in uniform:2048 uniform:4096 uniform:8192 uniform:16384 wide:2048 wide:4096; do
      run_step "fp16x3 ${run/:/ }" "$OUT/fp16x3.csv" "$OUT/summary.txt" 120 \
        "$cli" bench --variant cublas,wgmma_3xtf32,wgmma_fp16x3 --size "${run#*:}" \
        --inputs "${run%%:*}" --format csv --quiet
    done
  fi
  if part stages; then
    for fp16x3_size in 2048 4096 8192 16384; do
      run_step "fp16x3 stages $fp16x3_size" "$OUT/fp16x3.csv" "$OUT/summary.txt" 90 \
        "$cli" bench --variant cublas,wgmma_fp16x3 --stages 2,3 --size "$fp16x3_size" \
        --format csv --quiet
    done
  fi
  if part walkers; then
    # The split walked by 1, 2 or 3 blocks an SM (3: what its launch bounds
    # promise fit) against a block a unit of lines (0), in one process
    # each (fp16x3_split_blocks_per_sm): fewer lines in flight, so that its
    # second read of a line may hit L2 (fp16x3-split.csv; the split's DRAM
    # bytes at 2, in fp16x3-kernels.txt).
    : >"$OUT/fp16x3-split.csv"
    for walkers in 0 1 2 3; do
      for fp16x3_size in 4096 8192; do
        run_step "fp16x3 split walkers $walkers $fp16x3_size" "$OUT/fp16x3-split.csv" "$OUT/summary.txt" 90 \
          env PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM="$walkers" \
          "$cli" bench --variant cublas,wgmma_fp16x3 --size "$fp16x3_size" --format csv --quiet
      done
    done
  fi
  if part kernels; then
    # Each of its three kernels' time (the split, the products, and
    # wgmma_3xtf32's for the tiles past the span rule: on these inputs none,
    # its blocks only looking), which pipegemm profile does not separate,
    # and what each moves through DRAM (fp16x3-kernels.txt), at the GPU's
    # own clocks.
    ncu_tool=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
    for fp16x3_size in 4096 8192; do
      run_step "fp16x3 kernels $fp16x3_size" "$OUT/fp16x3-kernels.txt" "$OUT/summary.txt" 90 \
        "$ncu_tool" --clock-control none --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,sm__throughput.avg.pct_of_peak_sustained_elapsed,sm__warps_active.avg.pct_of_peak_sustained_active \
        --kernel-name regex:'fp16x3|3xtf32' --launch-count 3 \
        "$cli" bench --variant wgmma_fp16x3 --size "$fp16x3_size" --warmup 0 --iters 1 --check off \
        --quiet
    done
    run_step "fp16x3 split kernel, 2 walkers, 8192" "$OUT/fp16x3-kernels.txt" "$OUT/summary.txt" 60 \
      env PIPEGEMM_FP16X3_SPLIT_BLOCKS_PER_SM=2 "$ncu_tool" --clock-control none \
      --metrics gpu__time_duration.sum,dram__bytes_read.sum,dram__bytes_write.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
      --kernel-name regex:'fp16x3_first' --launch-count 1 \
      "$cli" bench --variant wgmma_fp16x3 --size 8192 --warmup 0 --iters 1 --check off --quiet
  fi
  # Cheaper exact products as prototypes on XLA's GEMMs (products.csv,
  # bench/results/products/): FP16x3 scaled, the JAX presets; and Ozaki II
  # on cuBLAS's INT8 GEMM through torch (ozaki2.csv).
  if wants products; then
    # shellcheck disable=SC2086 # PG_PRODUCTS_ARGS is a list of words
    run_step "products" "$OUT/products.csv" "$OUT/summary.txt" 180 \
      python3 scripts/products.py ${PG_PRODUCTS_ARGS:---sizes 2048,4096,8192}
  fi
  if wants ozaki2; then
    # shellcheck disable=SC2086 # PG_OZAKI2_ARGS is a list of words
    run_step "ozaki2" "$OUT/ozaki2.csv" "$OUT/summary.txt" 240 \
      python3 scripts/ozaki2.py ${PG_OZAKI2_ARGS:---sizes 2048,4096,8192 --moduli 7,8 --compile 8}
  fi
  # pipegemm's emulated entries (this build's library, through the Python
  # package) beside Triton's tf32x3, JAX's presets and torch's cuBLAS in one
  # process (peers.csv; bench/results/emulated/).
  if wants peers; then
    # shellcheck disable=SC2086 # PG_PEERS_ARGS is a list of words
    run_step "peers" "$OUT/peers.csv" "$OUT/summary.txt" 300 \
      env PYTHONPATH="$root/python" PIPEGEMM_LIBRARY="$root/$build/libpipegemm.so" \
      python3 scripts/peers-emulated.py ${PG_PEERS_ARGS:---sizes 2048,4096,8192}
  fi
  if [ "${PG_SKIP_PROFILE:-0}" != 1 ]; then
    : >"$OUT/profile.txt"
    # shellcheck disable=SC2086 # PG_PROFILE_ARGS is a list of words
    run_step "profile" "$OUT/profile.txt" "$OUT/profile.txt" 200 \
      "$cli" profile ${PG_PROFILE_ARGS:---variant cublas,cp_async,mbarrier,tma,tma_ws --size 4096} \
      --quiet --raw /tmp/pg-ncu-raw.txt
    { echo "==== what ncu printed"; cat /tmp/pg-ncu-raw.txt 2>/dev/null; } >>"$OUT/profile.txt"
  fi
  objdump_tool=$(command -v cuobjdump || echo /usr/local/cuda/bin/cuobjdump)
  run_step "resource usage" "$OUT/bench.txt" "$OUT/bench.txt" 60 \
    "$objdump_tool" --dump-resource-usage "$build/libpipegemm.a"
elif [ "${PG_SKIP_BENCH:-0}" != 1 ]; then
  note "SKIP  bench and study: no $cli"
fi

# ---- the pipelines in time (bench/results/timelines/README.md) ----------------------
if (( built )) && [ -x "$cli" ] && [ "${PG_SKIP_TRACE:-0}" != 1 ]; then
  mkdir -p "$OUT/trace"
  default_trace_runs="baseline pingpong cp_async:2 cp_async:4 pipeline_thread mbarrier
    warp_specialized tma tma_ws barrier pipeline_block cp_async:5 cp_async:6 cp_async:7"
  for run in ${PG_TRACE_RUNS:-$default_trace_runs}; do
    variant=${run%%:*}
    name=$variant
    stage_args=()
    if [ "$run" != "$variant" ]; then
      name=$variant-${run#*:}
      stage_args=(--stages "${run#*:}")
    fi
    json=$OUT/trace/run-trace-$name.json
    run_step "trace $name" "$OUT/trace/run-trace-$name.txt" "$OUT/trace/run-trace-$name.txt" 90 \
      "$cli" trace --variant "$variant" ${stage_args[@]+"${stage_args[@]}"} \
      --size "${PG_TRACE_SIZE:-4096}" --blocks "${PG_TRACE_BLOCKS:-8}" --out "$json" --quiet
    # Several MB of JSON each; gzip -n writes the same bytes for the same trace.
    [ -f "$json" ] && gzip -9 -n -f "$json"
  done
  grep -H -E "^(tracing costs|copies in flight|bubble|time per K tile|invariants):" \
    "$OUT"/trace/run-trace-*.txt >>"$summary"
  run_step "make timeline" "$OUT/trace/timeline.txt" "$OUT/trace/timeline.txt" 90 \
    make timeline TRACES="$OUT/trace"
fi

# One file for all but the summary: the device machine returns few files.
(cd "$OUT" && find . -mindepth 1 -maxdepth 1 ! -name summary.txt ! -name device-check.tar.gz \
   -printf '%P\n' | tar -czf device-check.tar.gz -T - && find . -mindepth 1 -maxdepth 1 \
   ! -name summary.txt ! -name device-check.tar.gz -exec rm -rf {} +)

if (( failed_steps == 0 )); then
  note "device-check: every step passed"
  exit 0
fi
note "device-check: $failed_steps step(s) failed or were skipped for time"
exit 1
