# Sourced by the study scripts that run on a GPU machine
# (scripts/tensorcore-run.sh, scripts/emulated-run.sh), from the repo root,
# after they set OUT and `build`: opens $OUT/run.log with the commit, the
# date and the GPU, defines `step`, and configures and builds for sm_90 in
# $build (exiting with the build log's tail if that fails).
#   step NAME OUTFILE TIMEOUT_S COMMAND...   runs COMMAND under the limit,
#       its stdout to OUTFILE, its stderr and the step's exit status and
#       time to run.log; returns the exit status.
# Environment: PG_COMMIT (recorded; default git's short hash), CMOCKA_ROOT
# (default .deps/cmocka/usr where it exists).
mkdir -p "$OUT"
log="$OUT/run.log"
: >"$log"
export PATH=/usr/local/cuda/bin:$PATH

step() {
  local name=$1 out=$2 limit=$3
  shift 3
  local start=$SECONDS
  echo "== $name: $*" >>"$log"
  timeout "$limit" "$@" >>"$out" 2>>"$log"
  local rc=$?
  echo "== $name: exit $rc, $((SECONDS - start)) s" >>"$log"
  return $rc
}

echo "commit: ${PG_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}" >>"$log"
date -u '+date: %Y-%m-%d %H:%M UTC' >>"$log"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader >>"$log" 2>&1

cmocka=${CMOCKA_ROOT:-}
[ -z "$cmocka" ] && [ -d .deps/cmocka/usr ] && cmocka=$PWD/.deps/cmocka/usr
step configure "$OUT/build.log" 300 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CUDA_ARCHITECTURES=90 ${cmocka:+-DCMOCKA_ROOT=$cmocka} &&
  step build "$OUT/build.log" 600 cmake --build "$build" || { tail -30 "$OUT/build.log"; exit 1; }
