#!/bin/sh
# The shared library's dynamic symbol table holds exactly the functions that
# include/pipegemm.h marks PG_API: no internal pg_ symbol, no C++ symbol, no
# symbol of a library linked into it.
#
#   exports_check.sh HEADER LIBRARY
set -u

header=$1
library=$2

if ! command -v nm >/dev/null 2>&1; then
  echo "skipped: nm is not installed (binutils)"
  exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# "PG_API const pg_variant_info *pg_variant_at(int index);" -> pg_variant_at
grep -E '^[[:space:]]*PG_API[[:space:]]' "$header" |
  sed -E 's/\(.*//; s/.*[[:space:]*]//' | sort -u >"$tmp/declared"
if ! nm -D --defined-only "$library" >"$tmp/nm"; then
  echo "exports_check: FAIL: nm -D --defined-only $library failed"
  exit 1
fi
awk 'NF >= 2 { print $NF }' "$tmp/nm" | sort -u >"$tmp/exported"

declared=$(wc -l <"$tmp/declared")
if [ "$declared" -lt 10 ]; then
  echo "exports_check: FAIL: only $declared PG_API functions read from $header"
  exit 1
fi
extra=$(comm -13 "$tmp/declared" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
if [ -n "$extra" ] || [ -n "$missing" ]; then
  [ -n "$extra" ] && printf '%s\n' "$extra" | sed 's/^/exported but not PG_API in the header: /'
  [ -n "$missing" ] && printf '%s\n' "$missing" | sed 's/^/PG_API in the header but not exported: /'
  echo "exports_check: FAIL: $library does not export exactly the header's API"
  exit 1
fi
echo "exports_check: $library exports the $declared PG_API functions of $header, nothing else"
