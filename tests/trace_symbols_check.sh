#!/bin/sh
# CTest's check of the names the traced kernel files bring into
# libpipegemm.a beside the timed ones (src/kernels/entry.h):
#   * no global name of pipegemm's is defined in two members (a traced
#     definition that kept its timed name would break the link of the shared
#     library, or silently pick one of the two in a static one);
#   * in a member of the traced build, every kernel lives in the namespace
#     pg_traced, template instances included: their host stubs are local to
#     the object and would link, but `pipegemm inspect` and Nsight Compute
#     find a variant's kernels by name, and would take a traced kernel for a
#     timed one;
#   * every variant that src/variants.h marks TRACED has its twin entry.
#
#   tests/trace_symbols_check.sh LIBPIPEGEMM.A SRC/VARIANTS.H
#
# Exit 77 (skipped) without nm.
set -u
lib=$1
list=$2
command -v nm >/dev/null 2>&1 || {
  echo "skipped: nm is not installed (binutils)"
  exit 77
}
fail() {
  echo "trace_symbols: $*"
  exit 1
}

# Every symbol, demangled, after its member's "name.o:" line.
listing=$(nm -C "$lib" 2>/dev/null) || fail "nm could not read $lib"
[ -n "$listing" ] || fail "nm found no symbols in $lib"

# pipegemm's global names defined in two members.
twice=$(echo "$listing" | awk '/^[0-9a-fA-F]+ [A-TV-Z] / { $1 = ""; $2 = ""; print }' |
  grep 'pg_' | sort | uniq -d)
[ -z "$twice" ] || fail "defined in two members of $lib: $twice"

# Kernels of the traced members outside pg_traced: a member is traced when
# it defines a twin entry (pg_entry_<name>_traced).
untraced=$(echo "$listing" | awk '
  /:$/ { flush(); member = $0; traced = 0; kernels = ""; next }
  / [A-TV-Z] pg_entry_[a-z0-9_]*_traced$/ { traced = 1 }
  / [tTwW] / && /pg_[a-z0-9_]*_kernel/ && !/pg_traced/ { kernels = kernels "\n  " member " " $0 }
  function flush() { if (traced && kernels != "") printf "%s", kernels }
  END { flush() }')
[ -z "$untraced" ] || fail "kernels of the traced build outside pg_traced:$untraced"

variants=$(sed -n 's/^PG_VARIANT(\([a-z0-9_]*\), "[^"]*", TRACED, .*/\1/p' "$list")
[ -n "$variants" ] || fail "$list marks no variant TRACED"
count=0
for variant in $variants; do
  echo "$listing" | grep -q " [DR] pg_entry_${variant}_traced\$" ||
    fail "pg_entry_${variant}_traced is not defined in $lib"
  count=$((count + 1))
done
kernels=$(echo "$listing" | grep -c ' [tT] .*pg_traced::pg_[a-z0-9_]*_kernel')
echo "trace_symbols: no pipegemm name defined twice; $count traced entries; $kernels traced kernel stubs, none outside pg_traced"
