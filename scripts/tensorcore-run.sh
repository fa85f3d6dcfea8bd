#!/usr/bin/env bash
# The tensor-core study on a GPU machine (bench/results/tensor-cores/README.md):
# build, then the TF32 family's stage sweeps, its Nsight Compute rows, the
# B^T kernel's own time, and (PG_TC_CHECK=1) every test and compute-sanitizer
# over the TF32 entries. A failed step is logged and the next one runs.
#
#   OUT=/path/to/out scripts/tensorcore-run.sh        (cwd: the repo root)
#
# Files in $OUT:
#   tensorcore-stage-sweep-{1,...,6}.csv  pipegemm bench --shapes
#       bench/shapes/tensorcore.txt --rounds 3 --format csv, each run with
#       cublas and cublas_tf32 beside its members (every ratio within one
#       process, the runs of a shape timed in three rounds in turn; member 1,
#       wgmma_sync, in each): 1 the members that take 1 stage, --stages 1-6;
#       2 the 128x128 TMA members, --stages 2-6; 3 the 48 KB-stage members and
#       auto_tf32, --stages 2-4; 4 wgmma_tma_rs beside its persistent form,
#       --stages 2-3; 5 member 5's two forms, cooperative and ping-pong,
#       --stages 3-6, over bench/shapes/tensorcore-epilogue.txt (the squares
#       and two with K = 512); 6 wgmma_tma_rs beside its cluster form
#       (member 7), --stages 2-4
#   tensorcore-profile.csv  pipegemm profile --size 4096 of cublas_tf32 and
#       each member at its default stages, --format csv
#   trace/         pipegemm trace at 4096^3 of each traced member at its
#       default stages (run-trace-NAME.json.gz, run-trace-NAME.txt) and
#       run-timeline-NAME.png, which `make timeline TRACES=...` draws
#   transpose.txt  ncu's duration and DRAM figures of the B^T kernel
#       (src/kernels/transpose_b.cu) in one call of wgmma_tma at each square
#   check.log      (PG_TC_CHECK=1) ctest, then (PG_TEST_QUICK) memcheck of
#       test_gpu_trace and test_gpu_variants on the TF32 entries, racecheck
#       and synccheck of test_gpu_variants on those that share shared
#       memory through stores or barriers
#   run.log        every step's command, exit status and time
# Environment: PG_BUILD (default build-tc), PG_COMMIT (recorded in run.log),
# CMOCKA_ROOT (default .deps/cmocka/usr where it exists), PG_TC_MEASURE=0
# (no sweeps, profile or transpose: the checks alone), PG_TC_SWEEPS (the
# sweeps to run, default "1 2 3 4 5 6"; with fewer, the profile, transpose
# and traces are left out too).
set -u
OUT=${OUT:?set OUT to a folder for the results}
build=${PG_BUILD:-build-tc}
. scripts/study-run.sh # run.log, step, the build
cli="$build/pipegemm"
shapes=bench/shapes/tensorcore.txt
refs=cublas,cublas_tf32

# sweep NUMBER VARIANTS STAGES [SHAPES]: one sweep's members beside the
# references.
sweep() {
  case " ${PG_TC_SWEEPS:-1 2 3 4 5 6} " in *" $1 "*) ;; *) return 0 ;; esac
  step "sweep $1" "$OUT/tensorcore-stage-sweep-$1.csv" 400 "$cli" bench --shapes "${4:-$shapes}" \
    --variant "$refs,$2" --stages "$3" --rounds 3 --format csv --quiet
}

if [ "${PG_TC_MEASURE:-1}" = 1 ]; then
sweep 1 mma_cp_async,wgmma_sync,wgmma_cp_async 1-6
sweep 2 wgmma_sync,wgmma_tma,wgmma_tma_ws,wgmma_tma_ws_wait0,wgmma_tma_coop 2-6
sweep 3 wgmma_sync,wgmma_tma_coop_n256,wgmma_tma_rs,auto_tf32 2-4
sweep 4 wgmma_sync,wgmma_tma_rs,wgmma_tma_rs_persistent 2-3
sweep 5 wgmma_sync,wgmma_tma_coop,wgmma_tma_pingpong 3-6 bench/shapes/tensorcore-epilogue.txt
sweep 6 wgmma_sync,wgmma_tma_rs,wgmma_tma_rs_multicast 2-4
fi
if [ "${PG_TC_MEASURE:-1}" = 1 ] && [ "${PG_TC_SWEEPS:-all}" = all ]; then
step profile "$OUT/tensorcore-profile.csv" 400 "$cli" profile --size 4096 --format csv --quiet \
  --variant cublas_tf32,mma_cp_async,wgmma_sync,wgmma_cp_async,wgmma_tma,wgmma_tma_ws,wgmma_tma_ws_wait0,wgmma_tma_coop,wgmma_tma_coop_n256,wgmma_tma_rs,wgmma_tma_pingpong,wgmma_tma_rs_persistent,wgmma_tma_rs_multicast
for size in 4096 6144 8192; do
  echo "# ${size}^3: the B^T kernel of one wgmma_tma call" >>"$OUT/transpose.txt"
  step "transpose $size" "$OUT/transpose.txt" 120 ncu --kernel-name regex:pg_transpose_b \
    --metrics gpu__time_duration.sum,dram__bytes.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed \
    "$cli" bench --size "$size" --variant wgmma_tma --stages 2 --warmup 0 --iters 1 --check off --quiet
done
  mkdir -p "$OUT/trace"
  for variant in wgmma_cp_async wgmma_tma wgmma_tma_ws wgmma_tma_ws_wait0 wgmma_tma_coop \
    wgmma_tma_coop_n256; do
    json=$OUT/trace/run-trace-$variant.json
    step "trace $variant" "$OUT/trace/run-trace-$variant.txt" 120 "$cli" trace \
      --variant "$variant" --size 4096 --blocks 8 --out "$json" --quiet
    [ -f "$json" ] && gzip -9 -n -f "$json"
  done
  step "make timeline" "$OUT/trace/timeline.txt" 120 make timeline TRACES="$OUT/trace"
fi

if [ "${PG_TC_CHECK:-0}" = 1 ]; then
  step ctest "$OUT/check.log" 200 ctest --test-dir "$build" --output-on-failure
  tf32=mma_cp_async,wgmma_sync,wgmma_cp_async,wgmma_tma,wgmma_tma_ws,wgmma_tma_ws_wait0,wgmma_tma_coop,wgmma_tma_coop_n256,wgmma_tma_rs,wgmma_tma_rs_persistent,wgmma_tma_pingpong,wgmma_tma_rs_multicast,auto_tf32
  # racecheck where threads share shared memory through stores and barriers
  # (st.shared, cp.async, the staged epilogue); synccheck where barriers are.
  race=wgmma_sync,wgmma_cp_async,wgmma_tma_rs,wgmma_tma_rs_persistent,wgmma_tma_rs_multicast
  sync=wgmma_cp_async,wgmma_tma,wgmma_tma_coop,wgmma_tma_rs,wgmma_tma_rs_persistent,wgmma_tma_pingpong,wgmma_tma_rs_multicast
  step "sanitizer memcheck (traces)" "$OUT/check.log" 60 env PG_TEST_QUICK=1 \
    PG_TEST_VARIANTS=$tf32 compute-sanitizer --tool memcheck --error-exitcode 1 \
    "$build/tests/test_gpu_trace"
  for run in memcheck:$tf32:120 racecheck:$race:120 synccheck:$sync:90; do
    IFS=: read -r tool variants limit <<<"$run"
    step "sanitizer $tool" "$OUT/check.log" "$limit" env PG_TEST_QUICK=1 \
      PG_TEST_VARIANTS="$variants" compute-sanitizer --tool "$tool" --error-exitcode 1 \
      "$build/tests/test_gpu_variants"
  done
fi
tar -czf "$OUT/tensorcore.tgz" -C "$OUT" --exclude tensorcore.tgz . 2>>"$log"
cat "$log"
