#!/bin/sh
# A stand-in for cuobjdump, so that `pipegemm inspect` runs its whole path
# (finding the tool, its PATH, running it, reading its output, telling its
# failures) on a machine without one. It answers --version, -res-usage and
# -sass with the fixtures of tests/data, whatever the binary. It checks
# that its PATH starts with the directory of $PG_NVDISASM, if set, then its
# own: where pipegemm inspect tells cuobjdump to find nvdisasm.
#
# PG_FAKE_CUOBJDUMP_MODE picks what it plays:
#   ok (default)  -sass prints tests/data/inspect_sass.txt
#   nonvdisasm    -sass fails as cuobjdump does when no nvdisasm is on its
#                 PATH: warnings, then the fatal line, exit 1
set -u

fail() {
  echo "fake-cuobjdump: $*" >&2
  exit 2
}

here=$(dirname "$0")
expected=$here
[ -n "${PG_NVDISASM:-}" ] && expected="$(dirname "$PG_NVDISASM"):$here"
case "$PATH:" in
  "$expected":*) ;;
  *) fail "PATH does not start with $expected: $PATH" ;;
esac

data=$here/data
case ${1:-} in
  --version)
    echo "cuobjdump: NVIDIA (R) fat binary listing tool"
    echo "Cuda compilation tools, release 0.0, V0.0.0 (fake cuobjdump of pipegemm's tests)"
    exit 0 ;;
  -res-usage)
    [ $# -eq 2 ] || fail "expected -res-usage BINARY, got $*"
    cat "$data/inspect_res_usage.txt"
    exit 0 ;;
  -sass)
    [ $# -eq 4 ] && [ "$2" = -fun ] || fail "expected -sass -fun NAMES BINARY, got $*"
    ;;
  *) fail "unexpected arguments: $*" ;;
esac

case ${PG_FAKE_CUOBJDUMP_MODE:-ok} in
  ok) cat "$data/inspect_sass.txt" ;;
  nonvdisasm)
    printf '%s\n' "$3" | tr ',' '\n' | while read -r name; do
      echo "cuobjdump warning : Function listed in --function '$name' not found" >&2
    done
    echo "cuobjdump fatal   : Could not find executable file 'nvdisasm'; you can try adding path to environment variables PATH or NVDISASM_PATH" >&2
    exit 1 ;;
  *) fail "unknown PG_FAKE_CUOBJDUMP_MODE" ;;
esac
