#!/usr/bin/env bash
# Plots a stage sweep: TFLOP/s against the number of pipeline stages, one
# line per variant, from the CSV that `pipegemm bench --format csv` writes.
#
#   build/pipegemm bench --variant baseline,cp_async,pipeline_block \
#       --stages 1-8 --size 4096 --format csv > sweep.csv
#   scripts/plot-stages.sh sweep.csv sweep.png ["title"]
#
# CSV may be - for standard input. Columns are found by their names in the
# header line (variant, stages, tflops, shape), so columns added to bench
# later do not matter; `# gpu:` supplies the default title. A variant
# measured at a single stage count (cublas, baseline, pingpong, ...) is drawn
# as a level across the plot at its TFLOP/s, marked at the stage count it ran
# at. Rows without a TFLOP/s figure (SKIP, FAIL, ERROR) are left out, so a
# line ends where a stage count stopped fitting or failed. The TFLOP/s axis
# is scaled to the data, not from zero: a sweep is about the differences.
#
# The plot is scripts/report.py's stage chart (`report.py --stage-plot`), so
# each variant has the colour, dash and marker it has on every page
# report.py draws.
#
# Needs Python 3 and matplotlib (python3's own, else the copy `make deps`
# fetches into .deps/python; scripts/drawing.py finds it). Exit codes: 0 ok,
# 1 the CSV has nothing to plot or the PNG could not be written, 2 bad
# usage, 3 python3 or matplotlib is missing.
set -euo pipefail

me=$(basename "$0")
usage() {
  echo "usage: $me CSV OUT.png [title]   (CSV from 'pipegemm bench --format csv'; - for stdin)" >&2
  exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
if [ "$1" != - ] && [ ! -r "$1" ]; then
  echo "$me: cannot read $1" >&2
  exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
  echo "$me: python3 is not installed, so there is no plot; install it" \
    "(Debian/Ubuntu: apt-get install python3) and run again" >&2
  exit 3
fi
exec python3 "$(dirname "$0")/report.py" --stage-plot "$@"
