#!/bin/sh
# scripts/ctest-skips.sh on logs in ctest's form: the reasons the skipped
# tests gave, once each, and a line that says plainly when every test of a
# run was skipped (make test-gpu without a GPU), or how many were.
#
#   ctest_skips_check.sh SCRIPT SCRATCH_DIR
set -u

script=$1
dir=$2
mkdir -p "$dir" || exit 1
failed=0

# A run of `count` tests, the first `skipped` of them skipped with a reason,
# and `failing` of the rest failed: what ctest -O writes, and LastTest.log.
make_run() {
  count=$1 skipped=$2 failing=$3
  out=$dir/output.log last=$dir/LastTest.log
  : >"$out"
  : >"$last"
  echo "Test project /build" >>"$out"
  i=1
  while [ "$i" -le "$count" ]; do
    status="   Passed"
    [ "$i" -le "$skipped" ] && status="***Skipped"
    [ "$i" -gt "$skipped" ] && [ "$i" -le $((skipped + failing)) ] && status="***Failed "
    printf '%d/%d Test #%d: test_%d ............%s   0.10 sec\n' "$i" "$count" "$i" "$i" \
      "$status" >>"$out"
    printf '%d/%d Test: test_%d\nOutput:\n' "$i" "$count" "$i" >>"$last"
    if [ "$i" -le "$skipped" ]; then
      echo "skipped: no CUDA device (no NVIDIA driver is installed)" >>"$last"
    fi
    printf '<end of output>\nTest Passed.\n' >>"$last"
    i=$((i + 1))
  done
  printf '\n%d%% tests passed, %d tests failed out of %d\n\n' \
    $(((count - failing) * 100 / count)) "$failing" "$count" >>"$out"
  if [ "$skipped" -gt 0 ]; then
    echo "The following tests did not run:" >>"$out"
    i=1
    while [ "$i" -le "$skipped" ]; do
      printf '\t %d - test_%d (Skipped)\n' "$i" "$i" >>"$out"
      i=$((i + 1))
    done
  fi
}

# The script's output must be exactly `expected`.
expect() {
  got=$(sh "$script" "$dir/output.log" "$dir/LastTest.log" "$1")
  if [ "$got" != "$2" ]; then
    printf 'ctest_skips_check: FAIL (%s)\n--- expected:\n%s\n--- got:\n%s\n' "$3" "$2" "$got"
    failed=1
  fi
}

reason="ctest: skipped: no CUDA device (no NVIDIA driver is installed)"
make_run 11 11 0
expect "GPU tests" "$reason
ctest: all 11 GPU tests were skipped: none of them ran" "every GPU test skipped"
make_run 90 11 0
expect "tests" "$reason
ctest: 11 of 90 tests were skipped" "some skipped"
make_run 4 1 2
expect "tests" "$reason
ctest: 1 of 4 tests were skipped" "some skipped, some failed"
make_run 5 0 0
expect "tests" "" "none skipped"
# A run ctest did not finish says nothing.
rm -f "$dir/output.log"
expect "tests" "" "no output log"

[ "$failed" -eq 0 ] && echo "ctest_skips_check: ok"
exit "$failed"
