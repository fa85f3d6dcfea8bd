#!/bin/sh
# What ctest leaves unsaid after a run: the reason each skipped test gave,
# and how many were skipped, so that "100% tests passed" where every test
# was skipped (make test-gpu without a GPU) reads as what it is: none ran.
# make test and make test-gpu run it after ctest:
#
#   scripts/ctest-skips.sh OUTPUT_LOG LAST_TEST_LOG WHAT
#
# OUTPUT_LOG is what ctest printed (ctest -O FILE); LAST_TEST_LOG is its own
# log of the run (BUILD/Testing/Temporary/LastTest.log), where a skipped
# test's output holds its "skipped: <reason>" line (the tests print one
# before they exit 77); WHAT names the tests in the last line ("tests",
# "GPU tests"). Prints nothing for a run that ctest did not finish.
set -u

output=$1
last=$2
what=$3

[ -r "$output" ] || exit 0
total=$(sed -n 's/.* tests failed out of \([0-9][0-9]*\)$/\1/p' "$output" | tail -n 1)
[ -n "$total" ] || exit 0
grep -h '^skipped:' "$last" 2>/dev/null | sort -u | sed 's/^/ctest: /'
# ctest lists each under "The following tests did not run:" as
# "<tab>NN - name (Skipped)".
skipped=$(grep -c '^[[:space:]]*[0-9][0-9]* - .* (Skipped)$' "$output")
if [ "$total" -gt 0 ] && [ "$skipped" -eq "$total" ]; then
  echo "ctest: all $total $what were skipped: none of them ran"
elif [ "$skipped" -gt 0 ]; then
  echo "ctest: $skipped of $total $what were skipped"
fi
exit 0
