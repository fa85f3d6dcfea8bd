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
# as a dashed horizontal line at its TFLOP/s, the level the sweep is compared
# with. Rows without a TFLOP/s figure (SKIP, FAIL, ERROR) are left out, so a
# line ends where a stage count stopped fitting or failed. The TFLOP/s axis
# is scaled to the data, not from zero: a sweep is about the differences.
#
# Needs gnuplot 5 (Debian/Ubuntu: apt-get install gnuplot-nox).
# Exit codes: 0 ok, 1 the CSV has nothing to plot or gnuplot failed,
# 2 bad usage, 3 gnuplot is not installed.
set -euo pipefail

me=$(basename "$0")
usage() {
  echo "usage: $me CSV OUT.png [title]   (CSV from 'pipegemm bench --format csv'; - for stdin)" >&2
  exit 2
}
[ $# -ge 2 ] && [ $# -le 3 ] || usage
csv=$1
png=$2
title=${3:-}
if [ "$csv" != - ] && [ ! -r "$csv" ]; then
  echo "$me: cannot read $csv" >&2
  exit 2
fi
if ! command -v gnuplot >/dev/null 2>&1; then
  echo "$me: gnuplot is not installed, so there is no plot; install it" \
    "(Debian/Ubuntu: apt-get install gnuplot-nox) and run again" >&2
  exit 3
fi

# The CSV becomes a gnuplot script: one inline data block per variant, then
# one plot command. awk here is POSIX awk (mawk on Debian): the CSV fields
# are split by hand, honouring RFC 4180 quotes (the verdict may hold commas).
script=$(awk -v title="$title" -v png="$png" -v me="$me" '
function csv_split(line, out,    n, i, c, field, quoted) {
  n = 0; field = ""; quoted = 0
  for (i = 1; i <= length(line); i++) {
    c = substr(line, i, 1)
    if (quoted) {
      if (c == "\"") {
        if (substr(line, i + 1, 1) == "\"") { field = field c; i++ }
        else quoted = 0
      } else field = field c
    } else if (c == "\"") quoted = 1
    else if (c == ",") { out[++n] = field; field = "" }
    else field = field c
  }
  out[++n] = field
  return n
}
function fail(message) { print me ": " message > "/dev/stderr"; failed = 1; exit 1 }
# A string safe inside a gnuplot double-quoted string.
function quote(text) { gsub(/\\/, "\\\\", text); gsub(/"/, "\\\"", text); return "\"" text "\"" }
BEGIN { header = ""; rows = 0; nvariants = 0 }
{ sub(/\r$/, "") }
/^# gpu: / { gpu = substr($0, 8); next }
/^#/ || /^[ \t]*$/ { next }
header == "" {
  header = $0
  n = csv_split($0, names)
  for (i = 1; i <= n; i++) column[names[i]] = i
  if (!("variant" in column) || !("stages" in column) || !("tflops" in column))
    fail("no variant, stages and tflops columns: is this pipegemm bench --format csv?")
  next
}
$0 == header { next } # the header again, from CSVs joined together
{
  csv_split($0, f)
  v = f[column["variant"]]; s = f[column["stages"]]; t = f[column["tflops"]]
  sh = ("shape" in column) ? f[column["shape"]] : ""
  if (shape == "") shape = sh
  else if (sh != shape) fail("rows of two shapes (" shape ", " sh "); plot one shape at a time")
  if (s == "" || t == "") next # not measured: SKIP, FAIL, ERROR
  if (!(v in count)) { order[++nvariants] = v; count[v] = 0 }
  for (j = 1; j <= count[v]; j++)
    if (stage[v, j] == s + 0) fail(v " at " s " stages appears twice")
  count[v]++; stage[v, count[v]] = s + 0; tflops[v, count[v]] = t + 0
  if (rows == 0 || s + 0 < xmin) xmin = s + 0
  if (rows == 0 || s + 0 > xmax) xmax = s + 0
  rows++
}
END {
  if (failed) exit 1
  if (header == "") fail("no CSV header line (variant,stages,...)")
  if (rows == 0) fail("no row has a TFLOP/s figure to plot")
  if (title == "") {
    title = "TFLOP/s by pipeline stages"
    if (gpu != "") title = title ", " gpu
    if (shape != "") title = title ", " shape
  }
  lo = xmin - 0.5; hi = xmax + 0.5
  for (i = 1; i <= nvariants; i++) {
    v = order[i]
    for (a = 2; a <= count[v]; a++) # insertion sort by stage count
      for (b = a; b > 1 && stage[v, b - 1] > stage[v, b]; b--) {
        x = stage[v, b]; stage[v, b] = stage[v, b - 1]; stage[v, b - 1] = x
        x = tflops[v, b]; tflops[v, b] = tflops[v, b - 1]; tflops[v, b - 1] = x
      }
    print "$v" i " << EOD"
    if (count[v] == 1) { # one stage count: a level across the plot
      print lo, tflops[v, 1]
      print hi, tflops[v, 1]
    } else
      for (j = 1; j <= count[v]; j++) print stage[v, j], tflops[v, j]
    print "EOD"
  }
  print "set output " quote(png)
  print "set title " quote(title)
  print "set xlabel \"pipeline stages\""
  print "set ylabel \"TFLOP/s (median)\""
  print "set xrange [" lo ":" hi "]"
  print "set xtics 1"
  print "set offsets 0, 0, graph 0.08, graph 0.08"
  print "set grid ytics xtics lc rgb \"#dddddd\""
  print "set key outside right top box opaque"
  # Ten colours that stay apart on white (matplotlib tab10), cycling.
  ncolors = split("#1f77b4 #ff7f0e #2ca02c #d62728 #9467bd #8c564b #e377c2 #7f7f7f #bcbd22 #17becf", colors, " ")
  for (i = 1; i <= ncolors; i++) print "set linetype " i " lc rgb \"" colors[i] "\""
  print "set linetype cycle " ncolors
  plot = "plot"
  for (i = 1; i <= nvariants; i++) {
    v = order[i]
    if (count[v] == 1 && v == "cublas")
      style = "with lines dt 2 lw 2 title " quote(v " (reference)")
    else if (count[v] == 1)
      style = "with lines dt 2 lw 2 title " quote(v " (fixed at " stage[v, 1] " stage" (stage[v, 1] == 1 ? "" : "s") ")")
    else
      style = "with linespoints lw 2 pt 7 ps 1.2 title " quote(v)
    plot = plot (i > 1 ? ", \\\n     " : " ") "$v" i " using 1:2 " style
  }
  print plot
}
' "$csv")

# pngcairo draws anti-aliased lines and UTF-8 text; plain png is the fallback.
terminal="pngcairo size 1100,620 font \"sans,11\" noenhanced"
if ! gnuplot -e "set terminal" 2>&1 | grep -qw pngcairo; then
  terminal="png size 1100,620 noenhanced"
fi
if ! printf 'set terminal %s\n%s\n' "$terminal" "$script" | gnuplot; then
  echo "$me: gnuplot failed to draw $png" >&2
  exit 1
fi
echo "$me: wrote $png"
