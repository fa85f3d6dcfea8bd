#!/usr/bin/env bash
# `make sass` and `make ptx`: one file per kernel and architecture under
# BUILD/artifacts/, as the "CUDA Kernel Study: Pipelining" write-up's
# Makefile does, from the kernels built into BUILD/libpipegemm.a:
#
#   scripts/artifacts.sh sass|ptx [BUILD]      (BUILD defaults to build)
#
#   BUILD/artifacts/pg_cp_async_kernel.sm_90.sass
#   BUILD/artifacts/pg_pipeline_block_kernel-2.sm_80.ptx   (template <2>)
#
# Then, as the write-up does:
#   grep -E 'LDGSTS|LDGDEPBAR|DEPBAR|BAR.SYNC' build/artifacts/pg_cp_async_kernel.sm_90.sass
#   grep -E 'cp.async|commit_group|wait_group' build/artifacts/pg_cp_async_kernel.sm_80.ptx
#
# cuobjdump: $PG_CUOBJDUMP, else the one CMake found (PG_CUOBJDUMP_EXECUTABLE
# in BUILD/CMakeCache.txt), else the PATH; exit 3 when there is none. nvdisasm
# (for sass): the one beside cuobjdump, else the one CMake found, else the PATH.
# A PTX file holds the module's header (.version, .target, module-scope
# declarations) and the kernel's .entry.
set -euo pipefail

mode=${1:-}
build=${2:-build}
case "$mode" in
  sass | ptx) ;;
  *)
    echo "usage: scripts/artifacts.sh sass|ptx [BUILD]" >&2
    exit 2
    ;;
esac

library=$build/libpipegemm.a
if [ ! -f "$library" ]; then
  echo "artifacts: $library not found: build first (make)" >&2
  exit 2
fi

tool=${PG_CUOBJDUMP:-}
if [ -z "$tool" ] && [ -f "$build/CMakeCache.txt" ]; then
  tool=$(sed -n 's/^PG_CUOBJDUMP_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
  case "$tool" in *NOTFOUND) tool= ;; esac
fi
if [ -z "$tool" ]; then
  tool=$(command -v cuobjdump || true)
fi
if [ -z "$tool" ] || [ ! -x "$tool" ]; then
  echo "artifacts: no cuobjdump: set PG_CUOBJDUMP, install the CUDA toolkit's, or pip install nvidia-cuda-cuobjdump" >&2
  exit 3
fi

# cuobjdump -sass runs nvdisasm, found on the PATH only: the one beside
# cuobjdump, else the one CMake found (PG_NVDISASM_EXECUTABLE).
nvdisasm=$(dirname "$tool")/nvdisasm
if [ ! -x "$nvdisasm" ] && [ -f "$build/CMakeCache.txt" ]; then
  nvdisasm=$(sed -n 's/^PG_NVDISASM_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
fi
if [ -n "$nvdisasm" ] && [ -x "$nvdisasm" ]; then
  PATH=$(dirname "$nvdisasm"):$PATH
fi

out=$build/artifacts
mkdir -p "$out"
rm -f "$out"/*."$mode"

# The awk below turns a mangled kernel name into a file name:
# _Z18pg_cp_async_kernel12pg_gemm_args -> pg_cp_async_kernel,
# _Z24pg_pipeline_block_kernelILi2EEv12pg_gemm_args -> pg_pipeline_block_kernel-2.
name_fn='
function file_name(symbol,    len, id, rest, arg) {
  if (!match(symbol, /^_Z[0-9]+/)) return symbol
  len = substr(symbol, 3, RLENGTH - 2) + 0
  id = substr(symbol, RLENGTH + 1, len)
  rest = substr(symbol, RLENGTH + 1 + len)
  if (substr(rest, 1, 1) != "I") return id
  rest = substr(rest, 2)
  while (match(rest, /^L[a-z]n?[0-9]+E/)) {
    arg = substr(rest, 3, RLENGTH - 3)
    sub(/^n/, "-", arg)
    id = id "-" arg
    rest = substr(rest, RLENGTH + 1)
  }
  return id
}'

if [ "$mode" = sass ]; then
  "$tool" -sass "$library" | awk -v dir="$out" -v lib="$library" "$name_fn"'
    /^[ \t]*code for sm_/ { arch = $3; next }
    /^(member |Fatbin )/ { if (file != "") close(file); file = ""; next }
    /^[ \t]*Function : / {
      if (file != "") close(file)
      file = dir "/" file_name($3) "." arch ".sass"
      print "// " $3 " (" arch "), cuobjdump -sass " lib > file
      count++
    }
    file != "" { print > file }
    END { printf "artifacts: %d SASS files in %s\n", count, dir }'
else
  "$tool" -ptx "$library" | awk -v dir="$out" -v lib="$library" "$name_fn"'
    /^(member |Fatbin )/ { header = ""; in_module = 0; next }
    /^arch = sm_/ { arch = $3; next }
    /^\.version / { in_module = 1; header = "" }
    in_module && depth == 0 && /^\.(visible |weak )?\.?(entry|func) / {
      symbol = $0
      sub(/^.*\.(entry|func) /, "", symbol)
      sub(/\(.*$/, "", symbol)
      file = ""
      if ($0 ~ /\.entry /) {
        file = dir "/" file_name(symbol) "." arch ".ptx"
        print "// " symbol " (" arch "), cuobjdump -ptx " lib > file
        printf "%s", header > file
        count++
      }
      in_function = 1
    }
    in_function {
      if (file != "") print > file
      opened = gsub(/\{/, "{"); closed = gsub(/\}/, "}")
      depth += opened - closed
      if (opened > 0) started = 1
      if (started && depth == 0) { in_function = 0; started = 0; if (file != "") close(file); file = "" }
      next
    }
    in_module && depth == 0 && !/^[ \t]*$/ && !/^\.(file|section)/ { header = header $0 "\n" }
    END { printf "artifacts: %d PTX files in %s\n", count, dir }'
fi
