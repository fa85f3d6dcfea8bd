#!/bin/sh
# Stands in for ncu by replaying what a real ncu printed, as saved by
# `pipegemm profile --raw FILE` (or `study pipelining --profile --raw FILE`),
# so the profiler table can be derived again without a GPU, after a fix to
# the parser or for another output format:
#
#   PG_NCU_REPLAY=FILE pipegemm profile --variant baseline,pingpong,cp_async \
#       --size 2048 --ncu scripts/replay-ncu.sh
#
# For each run pipegemm asks for, it prints the saved output of the run with
# the same variant and stage count (the first, if there were several tries).
set -u
raw=${PG_NCU_REPLAY:?set PG_NCU_REPLAY to a file written by pipegemm --raw}
[ -r "$raw" ] || { echo "replay-ncu: cannot read $raw"; exit 2; }

if [ "${1:-}" = "--version" ]; then
  sed -n 's/^# ncu: [^(]*(\(.*\))$/\1 (replayed from a saved run)/p' "$raw" | head -n 1
  exit 0
fi

variant="" stages=""
while [ $# -gt 0 ]; do
  case $1 in
    --variant) variant=$2; shift 2 ;;
    --stages) stages=$2; shift 2 ;;
    *) shift ;;
  esac
done
[ -n "$variant" ] && [ -n "$stages" ] || { echo "replay-ncu: no --variant/--stages in the command"; exit 2; }

awk -v want="# pipegemm profile: variant $variant, stages $stages, filter 0" '
  /^# pipegemm profile: / { if (on) exit; on = ($0 == want); next }
  on && /^# command: / { next }
  on { print; found = 1 }
  END { if (!found) { print "replay-ncu: no saved run for this variant and stage count"; exit 3 } }
' "$raw"
