#!/bin/sh
# Replays the ncu output of a real H200 run (bench/results/write-ups/h200-profile-ncu.txt)
# through `pipegemm profile` and checks a value whose unit ncu prints in its
# short form: the baseline kernel's duration is 505,088 "ns", which must read
# 0.505 ms (bench timed the same kernel at 0.507 ms).
# Usage: profile_replay.sh PIPEGEMM SOURCE_DIR
set -u
pipegemm=$1 src=$2
out=$(PG_NCU_REPLAY="$src/bench/results/write-ups/h200-profile-ncu.txt" "$pipegemm" profile \
  --variant baseline,pingpong,cp_async --size 2048 --ncu "$src/scripts/replay-ncu.sh" \
  --format csv --quiet) || { echo "profile failed"; exit 1; }
duration=$(printf '%s\n' "$out" | awk -F, '
  /^#/ { next }
  !col { for (i = 1; i <= NF; ++i) if ($i == "duration_ms") col = i; next }
  $2 == "baseline" { print $col }')
echo "baseline duration: ${duration:-none} ms"
case $duration in
  0.505*) exit 0 ;;
  *) echo "expected the baseline duration 0.505 ms"; exit 1 ;;
esac
