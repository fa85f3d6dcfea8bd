#!/usr/bin/env bash
# Sweeps tma_ws's tuned knobs on this GPU: stage count x tile-row group of the
# rasterised order x resident blocks per SM of the persistent grid (0: one
# block per tile). One CSV on stdout, one row per configuration, best first;
# the winner goes into src/tuning.c (group, blocks/SM) and the registry's
# default stage count.
#
#   scripts/tune-tma-ws.sh [path/to/pipegemm] > tune.csv
#
# Environment: PG_TUNE_SIZES (default "4096"), PG_TUNE_STAGES (default "2-8":
# counts that do not fit are skipped), PG_TUNE_GROUPS (default "1 4 8 16"),
# PG_TUNE_BLOCKS (default "0 1 2"), PG_TUNE_ITERS (default 10).
set -euo pipefail
cli=${1:-build/pipegemm}
[ -x "$cli" ] || { echo "tune-tma-ws: no pipegemm at $cli (build first)" >&2; exit 2; }
tmp=$(mktemp)
trap 'rm -f "$tmp"' EXIT
header=""
for size in ${PG_TUNE_SIZES:-4096}; do
  for group in ${PG_TUNE_GROUPS:-1 4 8 16}; do
    for blocks in ${PG_TUNE_BLOCKS:-0 1 2}; do
      echo "tune-tma-ws: ${size}^3 group_m=$group blocks_per_sm=$blocks" >&2
      out=$(PIPEGEMM_TMA_WS_GROUP_M=$group PIPEGEMM_TMA_WS_BLOCKS_PER_SM=$blocks \
        "$cli" bench --variant tma_ws --stages "${PG_TUNE_STAGES:-2-8}" --size "$size" \
        --warmup 3 --iters "${PG_TUNE_ITERS:-10}" --format csv --quiet) || true
      rows=$(printf '%s\n' "$out" | grep -v '^#')
      [ -z "$header" ] && header="group_m,grid_blocks_per_sm,$(printf '%s\n' "$rows" | head -n 1)"
      printf "%s\n" "$rows" | tail -n +2 | { grep -v "^$" || true; } | sed "s/^/$group,$blocks,/" >>"$tmp"
    done
  done
done
echo "$header"
# Best first: the column named tflops.
col=$(echo "$header" | tr ',' '\n' | grep -n '^tflops$' | cut -d: -f1)
sort -t, -k"${col:-1}","${col:-1}" -g -r "$tmp"
