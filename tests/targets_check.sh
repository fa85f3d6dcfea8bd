#!/bin/sh
# scripts/targets.py on tests/data/targets_skinny.csv (a bench CSV of one
# skinny shape) and tests/data/targets_layouts.csv (the layouts' three runs)
# reports them; a file that cannot be read, or is no bench CSV,
# is one line on stderr and exit 2, with nothing on stdout (not a Python
# traceback, nor half a report).
#
#   targets_check.sh REPO SCRATCH_DIR
#
# Exits 77 (skipped) without python3.
set -u
repo=$1
dir=$2
command -v python3 >/dev/null 2>&1 || { echo "skipped: python3 is not installed"; exit 77; }
script=$repo/scripts/targets.py
fixture=$repo/tests/data/targets_skinny.csv
mkdir -p "$dir" || exit 1
fail() { echo "targets_check: FAIL: $*"; exit 1; }

out=$(python3 "$script" "$fixture") || fail "targets.py $fixture exited with $?"
printf '%s\n' "$out" | grep -q '^## targets_skinny.csv (skinny.txt)$' ||
  fail "no section for the fixture in:
$out"
printf '%s\n' "$out" | grep -q '^- at least 60 %: 1 of 1$' ||
  fail "no HBM line for 4x8192x8192 in:
$out"

# layouts.txt: three bench runs in one file, each class beside its cuBLAS
# row, problems told apart by op and batch; a ratio under its target bold.
layouts=$repo/tests/data/targets_layouts.csv
out=$(python3 "$script" "$layouts") || fail "targets.py $layouts exited with $?"
for line in '| 4096x4096x4096 NT | 1.034 | 2.308 | **0.800** |' \
    '| 2048x4096x4096 NN batch=16 stride_b=0 | **0.909** | – | – |' \
    '- auto: at least 0.95x at 1 of 2, lowest 0.909x; geometric mean 0.969x (target 0.95x)' \
    '- auto_tf32: at least 1.00x at 0 of 1, lowest 0.800x; geometric mean 0.800x (target 1.00x)'; do
  printf '%s\n' "$out" | grep -qxF -- "$line" || fail "no line '$line' in:
$out"
done

# expect_refusal WHAT LINE_REGEX FILE...: exit 2, one line on stderr
# matching LINE_REGEX, nothing on stdout.
expect_refusal() {
  what=$1
  pattern=$2
  shift 2
  python3 "$script" "$@" >"$dir/out" 2>"$dir/err"
  code=$?
  [ $code -eq 2 ] || fail "$what: exit $code, expected 2; stderr: $(cat "$dir/err")"
  [ ! -s "$dir/out" ] || fail "$what: printed on stdout: $(cat "$dir/out")"
  [ "$(wc -l <"$dir/err")" -eq 1 ] || fail "$what: not one line on stderr: $(cat "$dir/err")"
  grep -Eq "$pattern" "$dir/err" || fail "$what: stderr '$(cat "$dir/err")' does not match $pattern"
  echo "targets_check: $what: $(cat "$dir/err")"
}
expect_refusal "a missing file" \
  '^targets\.py: cannot read .*/no-such-file\.csv: No such file or directory$' \
  "$fixture" "$dir/no-such-file.csv"
expect_refusal "a directory" '^targets\.py: cannot read .*: Is a directory$' "$dir"
expect_refusal "no bench CSV" \
  '^targets\.py: .*/shapes_bad\.txt: no column .*: not a CSV of pipegemm bench$' \
  "$repo/tests/data/shapes_bad.txt"
