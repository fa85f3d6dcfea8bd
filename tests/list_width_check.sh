#!/bin/sh
# `pipegemm list` must fit a terminal of WIDTH columns: every line it prints,
# the header block and the notes too. A line's columns are its characters
# (UTF-8 continuation bytes take none, so that the "…" of a cell cut short
# counts as the one column it takes).
#
#   list_width_check.sh PIPEGEMM WIDTH [ARGS...]   (ARGS after "list")
#
# Fails, naming each line too long, where a line is longer; also where the
# command fails or prints no table (a check of nothing would pass).
set -u
tool=$1
width=$2
shift 2
what="pipegemm list${*:+ $*}"
out=$("$tool" list "$@")
code=$?
[ $code -eq 0 ] || {
  echo "list_width_check: $what exited with $code"
  exit 1
}
printf '%s\n' "$out" | grep -q '^variant  ' || {
  echo "list_width_check: $what printed no table:"
  printf '%s\n' "$out"
  exit 1
}
# tr deletes the continuation bytes in the C locale, byte by byte; awk then
# counts one byte a character.
long=$(printf '%s\n' "$out" | LC_ALL=C tr -d '\200-\277' |
  LC_ALL=C awk -v width="$width" 'length($0) > width { printf "line %d: %d columns\n", NR, length($0) }')
if [ -n "$long" ]; then
  echo "list_width_check: $what: lines over $width columns:"
  printf '%s\n' "$long"
  exit 1
fi
echo "list_width_check: $what: $(printf '%s\n' "$out" | wc -l) lines, none over $width columns"
