#!/bin/sh
# CTest's check of the names the traced kernels (src/kernels/trace_names.h)
# bring into libpipegemm.a beside the timed ones:
#   * no global name of pipegemm's is defined in two members (a traced
#     planner or kernel that kept its timed name would break the link of
#     the shared library, or silently pick one of the two in a static one);
#   * in a member of the traced build, every kernel's name ends in _traced,
#     template instances included: their host stubs are local to the object
#     and would link, but `pipegemm inspect` and Nsight Compute find a
#     variant's kernels by name, and would take a traced kernel for a timed
#     one;
#   * every traced planner is there.
#
#   tests/trace_symbols_check.sh LIBPIPEGEMM.A
#
# Exit 77 (skipped) without nm.
set -u
lib=$1
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

# Kernels of the traced members without _traced: a member is traced when
# it defines any name with _traced in it.
untraced=$(echo "$listing" | awk '
  /:$/ { flush(); member = $0; traced = 0; kernels = ""; next }
  / [A-Za-z] / && /_traced/ { traced = 1 }
  / [tTwW] / && /pg_[a-z0-9_]*_kernel/ && !/_traced/ { kernels = kernels "\n  " member " " $0 }
  function flush() { if (traced && kernels != "") printf "%s", kernels }
  END { flush() }')
[ -z "$untraced" ] || fail "kernels of the traced build without _traced:$untraced"

for variant in baseline pingpong cp_async pipeline_thread pipeline_block barrier mbarrier warp_specialized \
  tma tma_ws; do
  echo "$listing" | grep -q " T pg_plan_${variant}_traced\$" ||
    fail "pg_plan_${variant}_traced is not defined in $lib"
done
kernels=$(echo "$listing" | grep -c ' [tT] .*pg_[a-z0-9_]*_kernel_traced')
echo "trace_symbols: no pipegemm name defined twice; 10 traced planners; $kernels traced kernel stubs, none untraced"
