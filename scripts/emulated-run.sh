#!/usr/bin/env bash
# The FP32-accurate tensor-core entries on a GPU machine
# (bench/results/emulated/README.md): build, check, then speed and accuracy
# beside cuBLAS strict FP32, cuBLAS TF32 and auto. A failed step is logged
# and the next one runs.
#
#   OUT=/path/to/out scripts/emulated-run.sh        (cwd: the repo root)
#
# Files in $OUT (committed as bench/results/emulated/h200-emulated-*.csv,
# without the -sizes):
#   emulated-set-sizes.csv       pipegemm bench --shapes bench/shapes/set.txt (the
#       committed set) of cublas, cublas_tf32, auto, wgmma_3xtf32 and
#       auto_emulated, --rounds 3, --format csv
#   emulated-k-sweep-sizes.csv   the same entries at M = N = 1024, K = 64 .. 131072
#   emulated-sum-steps-S-sizes.csv  wgmma_3xtf32 with PIPEGEMM_EMULATED_SUM_STEPS=S
#       (K steps summed on the tensor cores before FP32; 0: all of K) over
#       bench/shapes/emulated-accuracy.txt
#   emulated-inputs-I-sizes.csv  the entries over bench/shapes/emulated-accuracy.txt
#       with --inputs I (uniform, wide, tiny)
#   emulated-split-S-sizes.csv   cublas, auto and wgmma_3xtf32 over
#       bench/shapes/emulated-split.txt with PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES=S
#       (the fewest K steps of a split of K)
#   emulated-profile.csv   pipegemm profile --size 4096 of cublas, cublas_tf32
#       and wgmma_3xtf32
#   check.log              (PG_EMU_CHECK=1) the GPU tests of the emulated
#       entries (PG_EMU_TESTS: their variants, `all` for every one), then
#       compute-sanitizer memcheck, racecheck and synccheck over
#       test_gpu_variants (PG_EMU_SANITIZE: its variants)
#   run.log                every step's command, exit status and time
#   emulated.tgz           all of the above
# Environment: PG_BUILD (default build-emu), PG_COMMIT (recorded in run.log),
# CMOCKA_ROOT (default .deps/cmocka/usr where it exists), PG_EMU_CHECK=1 (the
# checks), PG_EMU_MEASURE=0 (no measurement), PG_EMU_ONLY="set split" (of
# the measurements only these: set k-sweep sum-steps split inputs profile).
set -u
OUT=${OUT:?set OUT to a folder for the results}
build=${PG_BUILD:-build-emu}
. scripts/study-run.sh # run.log, step, the build
cli="$build/pipegemm"
entries=cublas,cublas_tf32,auto,wgmma_3xtf32,auto_emulated
accuracy=bench/shapes/emulated-accuracy.txt

if [ "${PG_EMU_CHECK:-0}" = 1 ]; then
  tests=${PG_EMU_TESTS:-wgmma_3xtf32,auto_emulated}
  [ "$tests" = all ] && tests=
  step "gpu tests" "$OUT/check.log" 420 env PG_TEST_VARIANTS=$tests \
    ctest --test-dir "$build" -L gpu --output-on-failure
  for tool in memcheck racecheck synccheck; do
    step "sanitizer $tool" "$OUT/check.log" 200 env PG_TEST_QUICK=1 \
      PG_TEST_VARIANTS=${PG_EMU_SANITIZE:-wgmma_3xtf32,auto_emulated} \
      compute-sanitizer --tool "$tool" --error-exitcode 1 "$build/tests/test_gpu_variants"
  done
fi

# A measurement PG_EMU_ONLY asks for (all where it is empty).
wanted() { [ -z "${PG_EMU_ONLY:-}" ] || [[ " $PG_EMU_ONLY " == *" $1 "* ]]; }

if [ "${PG_EMU_MEASURE:-1}" = 1 ]; then
  wanted set && step "shape set" "$OUT/emulated-set-sizes.csv" 500 "$cli" bench \
    --shapes bench/shapes/set.txt --variant "$entries" --rounds 3 --format csv --quiet
  if wanted k-sweep; then
    for k in 64 256 1024 4096 16384 65536 131072; do
      step "k $k" "$OUT/emulated-k-sweep-sizes.csv" 120 "$cli" bench --m 1024 --n 1024 --k "$k" \
        --variant "$entries" --iters 5 --format csv --quiet
    done
  fi
  if wanted sum-steps; then
    for s in 1 2 4 8 0; do
      step "sum steps $s" "$OUT/emulated-sum-steps-$s-sizes.csv" 200 \
        env PIPEGEMM_EMULATED_SUM_STEPS=$s "$cli" bench --shapes "$accuracy" \
        --variant wgmma_3xtf32 --iters 5 --format csv --quiet
    done
  fi
  if wanted split; then
    for s in ${PG_EMU_SPLIT_MIN:-4 8 16}; do
      step "split min $s" "$OUT/emulated-split-$s-sizes.csv" 200 \
        env PIPEGEMM_EMULATED_SPLIT_MIN_K_TILES=$s "$cli" bench \
        --shapes bench/shapes/emulated-split.txt --variant cublas,auto,wgmma_3xtf32 --rounds 2 \
        --format csv --quiet
    done
  fi
  if wanted inputs; then
    for inputs in uniform wide tiny; do
      step "inputs $inputs" "$OUT/emulated-inputs-$inputs-sizes.csv" 200 "$cli" bench \
        --shapes "$accuracy" --variant "$entries" --inputs "$inputs" --iters 5 --format csv --quiet
    done
  fi
  wanted profile && step profile "$OUT/emulated-profile.csv" 300 "$cli" profile --size 4096 \
    --format csv --quiet --variant cublas,cublas_tf32,wgmma_3xtf32
fi
tar -czf "$OUT/emulated.tgz" -C "$OUT" --exclude emulated.tgz --exclude "$(basename "$build")" . 2>>"$log"
cat "$log"
