#!/bin/sh
# Runs `pipegemm inspect ARGS...` and holds it to an exit code and, when
# given, a line its output (stdout and stderr) must have:
#
#   inspect_check.sh PIPEGEMM EXPECT_CODE LINE_REGEX [ARGS...]
#
# Without a disassembler inspect exits 3: the test is skipped (77), except
# where the environment variable CI is set, where it fails: CI installs
# cuobjdump (.ci/run), and a check that cannot run must not pass there.
set -u

pipegemm=$1
expect=$2
line=$3
shift 3

out=$("$pipegemm" inspect "$@" 2>&1)
code=$?

if [ "$code" -eq 3 ] && [ "$expect" -ne 3 ]; then
  if [ -n "${CI:-}" ]; then
    printf '%s\n' "$out"
    echo "inspect_check: FAIL: no usable cuobjdump with CI set (.ci/run installs the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm wheels)"
    exit 1
  fi
  printf 'skipped: %s\n' "$(printf '%s\n' "$out" | head -n 1)"
  exit 77
fi

printf '%s\n' "$out"
if [ "$code" -ne "$expect" ]; then
  echo "inspect_check: FAIL: pipegemm inspect $* exited with $code, expected $expect"
  exit 1
fi
if [ -n "$line" ] && ! printf '%s\n' "$out" | grep -Eq -- "$line"; then
  echo "inspect_check: FAIL: no line matching '$line' in the output"
  exit 1
fi
exit 0
