#!/usr/bin/env bash
# The flagship's tuning experiments (bench/results/tma-ws/README.md): builds
# the library once per configuration from a copy of this tree with
# bench/results/tma-ws/h200-flagship-experiments.patch applied (compile-time
# switches in 12_tma_ws.cu; the patch applies to the commit named in its
# results page), then times each build's tma_ws against cuBLAS in one
# process per shape, PASSES times, builds taking turns, and profiles each
# build once with ncu when ncu is there.
#
#   OUT=dir scripts/flagship-experiments.sh "name:FLAGS name2:FLAGS2 ..."
#     FLAGS: flags for the CUDA and the C compiler (the registry's shared
#     memory sizes read the same header), '_-' for ' -', e.g.
#       base:-DTWS_PIECE_UNROLL=8 u2:-DTWS_PIECE_UNROLL=2
#       w3:-DTWS_PRODUCER_WAIT=3 o2:-DTWS_FMA_ORDER=2
#   PASSES=2  SHAPES="--size=4096 --size=8192 --m=3072:--n=5632:--k=4096"
#   VARIANTS=cublas,tma_ws  CMOCKA_ROOT=... (only to build the tests too)
# Writes $OUT/bench.csv (build,pass, then bench's CSV columns), build-*.log,
# test-*.log (test_gpu_variants on the tma_ws forms) and ncu-*.csv.
set -uo pipefail
builds=${1:?usage: OUT=dir $0 \"name:FLAGS ...\"}
OUT=${OUT:?set OUT}
root=$(cd "$(dirname "$0")/.." && pwd)
PASSES=${PASSES:-2}
SHAPES=${SHAPES:---size=4096 --size=8192 --m=3072:--n=5632:--k=4096}
VARIANTS=${VARIANTS:-cublas,tma_ws}
mkdir -p "$OUT"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tar -C "$root" --exclude=./build* --exclude=./.deps --exclude=./.git -cf - . | tar -C "$work" -xf -
if ! patch -d "$work" -p1 --dry-run <"$root/bench/results/tma-ws/h200-flagship-experiments.patch" >/dev/null; then
  echo "flagship-experiments: the patch does not apply to this tree; check out the commit" \
       "named in bench/results/tma-ws/README.md" >&2
  exit 2
fi
patch -d "$work" -p1 -s <"$root/bench/results/tma-ws/h200-flagship-experiments.patch"
cmocka=()
[ -n "${CMOCKA_ROOT:-}" ] && cmocka=(-DCMOCKA_ROOT="$CMOCKA_ROOT")
for b in $builds; do
  name=${b%%:*}; flags=${b#*:}; flags=${flags//_-/ -}
  cmake -S "$work" -B "$work/b-$name" -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 "${cmocka[@]}" \
    "-DCMAKE_CUDA_FLAGS=$flags" "-DCMAKE_C_FLAGS=$flags" >"$OUT/build-$name.log" 2>&1 &&
    cmake --build "$work/b-$name" -j"$(nproc)" >>"$OUT/build-$name.log" 2>&1 ||
    { echo "flagship-experiments: build $name failed (see build-$name.log)" >&2; exit 1; }
  if [ -x "$work/b-$name/tests/test_gpu_variants" ]; then
    PG_TEST_VARIANTS=tma_ws,tma_ws_splitk,tma_ws_n64,tma_ws_streamk \
      "$work/b-$name/tests/test_gpu_variants" >"$OUT/test-$name.log" 2>&1 ||
      { echo "flagship-experiments: build $name fails its GPU test" >&2; exit 1; }
  fi
  echo "built $name ($flags)"
done
for pass in $(seq "$PASSES"); do
  for b in $builds; do
    name=${b%%:*}
    for shape in $SHAPES; do
      # shellcheck disable=SC2046 # one word per option
      "$work/b-$name/pipegemm" bench --variant "$VARIANTS" $(echo "$shape" | tr ':' ' ') \
        --iters 20 --format csv --quiet | grep -v '^#' | sed "s/^/$name,$pass,/" >>"$OUT/bench.csv"
    done
  done
  echo "pass $pass done"
done
if command -v ncu >/dev/null; then
  metrics="sm__inst_issued.avg.per_cycle_active,smsp__issue_active.avg.per_cycle_active,smsp__inst_executed.sum,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,gpu__time_duration.sum"
  for b in $builds; do
    name=${b%%:*}
    ncu --clock-control none --csv --page raw --print-units base --metrics "$metrics" \
      --kernel-name-base function --kernel-name 'regex:.*pg_tma_ws_kernel.*' --launch-count 1 \
      "$work/b-$name/pipegemm" bench --variant tma_ws --size 4096 --warmup 0 --iters 1 \
      --check off --flush-l2 off --format csv --quiet >"$OUT/ncu-$name.csv" 2>&1
  done
fi
