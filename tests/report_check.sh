#!/bin/sh
# CTest's check of scripts/report.py: from tests/stage_sweep.csv and a
# profile that `pipegemm profile` writes through tests/fake-ncu.sh, it must
# write the Markdown page with its sections and every PNG the page names.
#
#   tests/report_check.sh REPORT.PY STAGE_SWEEP.CSV OUT_DIR PIPEGEMM FAKE_NCU
#
# Exit 77 (skipped) without python3, or where report.py finds no matplotlib
# (its exit 3), except where the environment variable CI is set: there it
# fails, for `make deps` fetches matplotlib and a check that cannot run must
# not pass.
set -u
report=$1 sweep=$2 out=$3 pipegemm=$4 fake_ncu=$5

command -v python3 >/dev/null 2>&1 || {
  echo "skipped: python3 is not installed"
  exit 77
}
fail() {
  echo "report_check: $*"
  exit 1
}

rm -rf "$out" && mkdir -p "$out" || fail "cannot make $out"
"$pipegemm" profile --variant baseline,cp_async --size 256 --ncu "$fake_ncu" \
  --quiet --format csv >"$out/profile.csv" || fail "pipegemm profile failed"
python3 "$report" --sweep "$sweep" --profile "$out/profile.csv" --out "$out" \
  --name report 2>"$out/report.err"
code=$?
cat "$out/report.err"
if [ "$code" -eq 3 ]; then
  [ -n "${CI:-}" ] && fail "report.py found no matplotlib, with CI set"
  echo "skipped: $(head -n 1 "$out/report.err")"
  exit 77
fi
[ "$code" -eq 0 ] || fail "report.py failed (exit $code)"

page=$out/report.md
[ -s "$page" ] || fail "no $page"
for heading in "## TFLOP/s per variant" "## Stage sweep" "## Size sweep" \
  "## Nsight Compute" "Stall Long Scoreboard"; do
  grep -q "$heading" "$page" || fail "$page lacks '$heading'"
done
pngs=$(grep -o 'report-[a-z0-9x_-]*[.]png' "$page" | sort -u)
[ "$(echo "$pngs" | wc -w)" -ge 3 ] || fail "$page names fewer than 3 plots: $pngs"
for png in $pngs; do
  head -c 8 "$out/$png" | od -An -tx1 | grep -q '89 50 4e 47 0d 0a 1a 0a' ||
    fail "$out/$png is not a PNG"
done
echo "report_check: $page and $(echo "$pngs" | wc -w) plots"
