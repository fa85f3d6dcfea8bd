#!/bin/sh
# The shared library's dynamic symbol table holds exactly the functions that
# include/pipegemm.h marks PG_API: no internal pg_ symbol, no C++ symbol, no
# symbol of a library linked into it. An optional header's PG_API functions
# (include/pipegemm_xla.h: a handler built only where its build found what it
# needs) are exported all together or not at all.
#
#   exports_check.sh HEADER LIBRARY [OPTIONAL_HEADER...]
set -u

header=$1
library=$2
shift 2

if ! command -v nm >/dev/null 2>&1; then
  echo "skipped: nm is not installed (binutils)"
  exit 77
fi

tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# "PG_API const pg_variant_info *pg_variant_at(int index);" -> pg_variant_at
functions() {
  grep -E '^[[:space:]]*PG_API[[:space:]]' "$@" |
    sed -E 's/^[^:]*://; s/\(.*//; s/.*[[:space:]*]//' | sort -u
}
functions "$header" /dev/null >"$tmp/declared"
: >"$tmp/optional"
if [ $# -gt 0 ]; then
  functions "$@" /dev/null >"$tmp/optional"
fi
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
optional_exported=$(comm -12 "$tmp/optional" "$tmp/exported" | wc -l)
optional_declared=$(wc -l <"$tmp/optional")
if [ "$optional_exported" -ne 0 ] && [ "$optional_exported" -ne "$optional_declared" ]; then
  comm -23 "$tmp/optional" "$tmp/exported" | sed 's/^/optional, exported in part, but not: /'
  echo "exports_check: FAIL: $library exports some of the optional headers' functions"
  exit 1
fi
sort -u "$tmp/declared" "$tmp/optional" >"$tmp/allowed"
extra=$(comm -13 "$tmp/allowed" "$tmp/exported")
missing=$(comm -23 "$tmp/declared" "$tmp/exported")
if [ -n "$extra" ] || [ -n "$missing" ]; then
  [ -n "$extra" ] && printf '%s\n' "$extra" | sed 's/^/exported but not PG_API in the header: /'
  [ -n "$missing" ] && printf '%s\n' "$missing" | sed 's/^/PG_API in the header but not exported: /'
  echo "exports_check: FAIL: $library does not export exactly the header's API"
  exit 1
fi
note=""
if [ "$optional_declared" -gt 0 ]; then
  if [ "$optional_exported" -gt 0 ]; then
    note=", and the $optional_declared optional ones"
  else
    note=", without the $optional_declared optional ones"
  fi
fi
echo "exports_check: $library exports the $declared PG_API functions of $header$note, nothing else"
