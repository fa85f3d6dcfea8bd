#!/bin/sh
# A stand-in for Nsight Compute's ncu, so that `pipegemm profile --ncu
# tests/fake-ncu.sh` runs its whole path (command line, capture, parsing,
# table) on a machine without a GPU or ncu. It checks the command line that
# pipegemm built, then prints what ncu would: ==PROF== lines, the profiled
# program's output (bench's CSV) and the raw page of tests/ncu_raw_fixture.csv
# with the kernel name the filter asked for. It never runs the program.
#
# PG_FAKE_NCU_MODE picks what it plays:
#   ok (default)  one kernel profiled
#   perm          ERR_NVGPUCTRPERM, as without access to the counters
#   unsupported   "Profiling is not supported on this device"
#   nokernel      the program ran, the filter matched nothing
#   skip          the program skipped the variant (GPU cannot run it)
#   oldncu        refuses --section with an ==ERROR==, profiles with --set full
#   nometric      refuses any --metrics with an ==ERROR== (a metric it lacks)
# PG_FAKE_NCU_LOG, if set, names a file each command line is appended to.
set -u

fail() {
  echo "fake-ncu: $*"
  exit 2
}

if [ "${1:-}" = "--version" ]; then
  echo "NVIDIA (R) Nsight Compute Command Line Profiler"
  echo "Version 0.0.0.0 (fake ncu of pipegemm's tests)"
  exit 0
fi

[ -n "${PG_FAKE_NCU_LOG:-}" ] && printf '%s\n' "$*" >>"$PG_FAKE_NCU_LOG"

# ncu's options up to the program; the program and its arguments after.
args=" $* "
clock="" csv="" page="" units="" count="" filter="" base="" sections="" set="" metrics=""
while [ $# -gt 0 ]; do
  case $1 in
    --clock-control) clock=$2; shift 2 ;;
    --csv) csv=1; shift ;;
    --page) page=$2; shift 2 ;;
    --print-units) units=$2; shift 2 ;;
    --section) sections="$sections $2"; shift 2 ;;
    --metrics) metrics=$2; shift 2 ;;
    --set) set=$2; shift 2 ;;
    --kernel-name-base) base=$2; shift 2 ;;
    --kernel-name) filter=$2; shift 2 ;;
    --launch-count) count=$2; shift 2 ;;
    --*) fail "unexpected ncu option $1" ;;
    *) break ;;
  esac
done
[ "$clock" = none ] || fail "expected --clock-control none"
[ "$csv" = 1 ] || fail "expected --csv"
[ "$page" = raw ] || fail "expected --page raw"
[ "$count" = 1 ] || fail "expected --launch-count 1"
mode=${PG_FAKE_NCU_MODE:-ok}
# The rows no section holds are asked for by name, with or without --set
# full; an ncu that knows one of them not (nometric) is asked without.
if [ "$mode" = nometric ] && [ -n "$metrics" ]; then
  echo "==ERROR== Failed to find metric sm__inst_issued.avg.per_cycle_active"
  exit 1
fi
case ",$metrics," in
  *,sm__inst_issued.avg.per_cycle_active,*) ;;
  *) [ "$mode" = nometric ] && [ "$set" = full ] ||
       fail "expected --metrics with sm__inst_issued.avg.per_cycle_active, got '$metrics'" ;;
esac
if [ -n "$set" ]; then
  # The fallback: the full set, no section list, ncu's own units.
  [ "$set" = full ] && [ -z "$sections" ] && [ -z "$units" ] ||
    fail "expected --set full alone, got --set $set, sections '$sections', units '$units'"
else
  if [ "$mode" = oldncu ]; then
    echo "==ERROR== unrecognised option '--section'. Use --help for further details."
    exit 1
  fi
  [ "$units" = base ] || fail "expected --print-units base"
  for s in SpeedOfLight MemoryWorkloadAnalysis MemoryWorkloadAnalysis_Tables \
    SchedulerStats WarpStateStats LaunchStats Occupancy SourceCounters; do
    case " $sections " in *" $s "*) ;; *) fail "section $s not asked for" ;; esac
  done
fi
[ $# -ge 2 ] || fail "no program to profile"
program=$1
[ -x "$program" ] || fail "program $program is not executable"
[ "$2" = bench ] || fail "expected the program's command bench, got $2"
for word in "--warmup 0" "--iters 1" "--check off" "--flush-l2 off" \
  "--format csv" "--quiet"; do
  case $args in *" $word "*) ;; *) fail "program lacks $word" ;; esac
done
variant=$(printf '%s\n' "$args" | sed -n 's/.* --variant \([a-z0-9_]*\) .*/\1/p')
stages=$(printf '%s\n' "$args" | sed -n 's/.* --stages \([0-9]*\) .*/\1/p')
[ -n "$variant" ] && [ -n "$stages" ] || fail "no --variant or --stages"

# A variant's kernel, as the registry names it: the forms of tma_ws share
# pg_tma_ws_kernel.
case $variant in
  tma_ws*) symbol=pg_tma_ws_kernel ;;
  *) symbol=pg_${variant}_kernel ;;
esac
case $filter in
  "regex:.*${symbol}.*")
    [ "$base" = function ] || fail "expected --kernel-name-base function"
    kernel=$symbol ;;
  regex:*pg_*)
    fail "kernel filter $filter does not name $symbol" ;;
  regex:*) kernel="fake_sgemm_kernel_for_$variant" ;;
  *) fail "expected --kernel-name regex:..., got '$filter'" ;;
esac

echo "==PROF== Connected to process 41872 ($program)"
case $mode in
  perm)
    echo "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance Counters on the target device 0."
    echo "==PROF== Disconnected from process 41872"
    exit 0 ;;
  unsupported)
    echo "==ERROR== Profiling is not supported on this device"
    exit 1 ;;
esac

# The program's own output: bench's CSV report.
verdict=UNCHECKED
[ "$mode" = skip ] && verdict='"SKIP (needs CC 9.0)"'
echo "# report: pipegemm bench"
echo "variant,stages,shape,verdict"
echo "$variant,$stages,64x64x64,$verdict"
if [ "$mode" = ok ] || [ "$mode" = oldncu ] || [ "$mode" = nometric ]; then
  echo "==PROF== Profiling \"$kernel\" - 0: 0%....50%....100% - 38 passes"
fi
echo "==PROF== Disconnected from process 41872"
if [ "$mode" != ok ] && [ "$mode" != oldncu ] && [ "$mode" != nometric ]; then
  echo "==WARNING== No kernels were profiled."
  exit 0
fi
fixture=$(dirname "$0")/ncu_raw_fixture.csv
[ -r "$fixture" ] || fail "cannot read $fixture"
sed "s/\"pg_baseline_kernel\"/\"$kernel\"/" "$fixture"
