#!/bin/sh
# The installed package, used as a C project would (tests/CMakeLists.txt runs
# each step as a test; install first):
#
#   check.sh install   BUILD PREFIX              cmake --install BUILD --prefix PREFIX
#   check.sh cmake     PREFIX LIBDIR WORK GENERATOR CC   find_package(pipegemm)
#   check.sh pkgconfig PREFIX LIBDIR WORK CC             pkg-config --cflags --libs
#
# The consumers need no GPU, so they run here. Exit 77 (skipped) where
# pkg-config is not installed. $CMAKE: the cmake to use (default: the PATH's).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
cmake=${CMAKE:-cmake}
mode=$1
shift

case "$mode" in
  install)
    build=$1 prefix=$2
    rm -rf "$prefix"
    "$cmake" --install "$build" --prefix "$prefix" >/dev/null
    for f in include/pipegemm.h bin/pipegemm; do
      [ -f "$prefix/$f" ] || { echo "check: FAIL: $prefix/$f not installed"; exit 1; }
    done
    "$prefix/bin/pipegemm" --version
    find "$prefix" -type f -o -type l | sort
    # A disassembler the build fetched into .deps/ is installed beside the
    # tool, and the installed inspect takes that copy, not the build tree's.
    if [ -x "$prefix/libexec/pipegemm/cuobjdump" ]; then
      report=$(env -u PG_CUOBJDUMP "$prefix/bin/pipegemm" inspect --variant cp_async) || {
        echo "check: FAIL: the installed pipegemm inspect failed"; exit 1; }
      echo "$report" | grep -q "^disassembler: *$prefix/bin/../libexec/pipegemm/cuobjdump, .*installed with pipegemm" || {
        echo "check: FAIL: the installed inspect did not take its own cuobjdump:"
        echo "$report" | head -n 3
        exit 1
      }
    fi
    ;;
  cmake)
    prefix=$1 libdir=$2 work=$3 generator=$4 cc=$5
    rm -rf "$work" "$work-older"
    # The installed header's major.minor is what a project asks for; while
    # the major is 0 another minor is another ABI, which the package refuses.
    major=$(sed -n 's/^#define PIPEGEMM_VERSION_MAJOR \([0-9]*\)$/\1/p' "$prefix/include/pipegemm.h")
    minor=$(sed -n 's/^#define PIPEGEMM_VERSION_MINOR \([0-9]*\)$/\1/p' "$prefix/include/pipegemm.h")
    if [ "$major" -eq 0 ] && [ "$minor" -gt 0 ]; then
      if "$cmake" -S "$here" -B "$work-older" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
           -Dpipegemm_DIR="$prefix/$libdir/cmake/pipegemm" -DPG_WANT="0.$((minor - 1))" \
           >"$work-older.log" 2>&1; then
        echo "check: FAIL: find_package(pipegemm 0.$((minor - 1))) accepted $major.$minor"
        exit 1
      fi
      echo "find_package(pipegemm 0.$((minor - 1))) refuses $major.$minor, as it must"
    fi
    "$cmake" -S "$here" -B "$work" -G "$generator" -DCMAKE_C_COMPILER="$cc" \
      -Dpipegemm_DIR="$prefix/$libdir/cmake/pipegemm" -DPG_WANT="$major.$minor"
    "$cmake" --build "$work"
    "$work/consumer_shared"
    "$work/consumer_static"
    if ldd "$work/consumer_static" 2>/dev/null | grep -q libpipegemm; then
      echo "check: FAIL: consumer_static loads libpipegemm.so"
      exit 1
    fi
    ;;
  pkgconfig)
    prefix=$1 libdir=$2 work=$3 cc=$4
    if ! command -v pkg-config >/dev/null 2>&1; then
      echo "skipped: pkg-config is not installed (apt-get install pkg-config)"
      exit 77
    fi
    rm -rf "$work"
    mkdir -p "$work"
    PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
    export PKG_CONFIG_PATH
    flags=$(pkg-config --cflags --libs pipegemm)
    echo "pkg-config --cflags --libs pipegemm: $flags"
    # shellcheck disable=SC2086 # flags is a list of words
    "$cc" -std=c11 -Wall -Wextra -Werror -pedantic "$here/consumer.c" -o "$work/consumer" \
      $flags -Wl,-rpath,"$(pkg-config --variable=libdir pipegemm)" \
      -Wl,-rpath,"$(pkg-config --variable=cudalibdir pipegemm)"
    "$work/consumer"
    ;;
  *)
    echo "usage: check.sh install|cmake|pkgconfig ..." >&2
    exit 2
    ;;
esac
