#!/bin/sh
# Runs `pipegemm ARGS...` with its stdout on a pipe whose reader has gone
# (as in `pipegemm list | head -c1`, once head has its byte) and holds it to
# what the tool promises of a report that did not reach stdout: exit 1 and
# one line on stderr that says so, not death by SIGPIPE (141, no word said).
#
#   closed_pipe_check.sh PIPEGEMM [ARGS...]
#
# The reader opens a named pipe and leaves before pipegemm starts, so that
# its first write fails every time, not only when the reader wins a race.
set -u

pipegemm=$1
shift

dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
mkfifo "$dir/pipe" || exit 1
: <"$dir/pipe" &
reader=$!
exec 3>"$dir/pipe" # returns once the reader has opened its end
wait "$reader"
"$pipegemm" "$@" >&3 2>"$dir/err"
code=$?
exec 3>&-

cat "$dir/err"
if [ "$code" -ne 1 ]; then
  echo "closed_pipe_check: FAIL: pipegemm $* into a closed pipe exited with $code, expected 1"
  exit 1
fi
lines=$(wc -l <"$dir/err")
if [ "$lines" -ne 1 ] ||
  ! grep -qx 'pipegemm: writing the report failed: Broken pipe' "$dir/err"; then
  echo "closed_pipe_check: FAIL: expected the one line 'pipegemm: writing the report failed: Broken pipe' on stderr, got $lines lines"
  exit 1
fi
exit 0
