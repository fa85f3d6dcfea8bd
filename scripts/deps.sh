#!/usr/bin/env bash
# What the tests need beyond the build, fetched into .deps/ (git-ignored)
# where this machine lacks it, without root. `make test` runs it first.
#
#   cmocka               the host unit tests: Debian's libcmocka0 and
#                        libcmocka-dev, apt-get download + dpkg -x into
#                        .deps/cmocka (CMake looks there)
#   cuobjdump, nvdisasm  pipegemm inspect (the inspect_check test): NVIDIA's
#                        wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm
#                        of nvcc's major version, into .deps/pip with
#                        pip --target, else scripts/fetch-wheel.py (python3's
#                        standard library only)
#   matplotlib           the plots (scripts/report.py, timeline.py,
#                        plot-stages.sh) and their tests: where python3 has
#                        none, PyPI's wheels (matplotlib and what it needs)
#                        into .deps/python with pip --target; without pip,
#                        with PyPI's pip wheel, fetched by fetch-wheel.py and
#                        run from where it is unpacked (scripts/drawing.py,
#                        which the scripts draw through, looks there)
#   pytest               the Python package's tests (python/tests/run.py,
#                        which looks there): where python3 has none,
#                        PyPI's wheels of pytest and what it needs (pure
#                        Python, so a .deps/ carried to a machine of
#                        another Python 3 serves too) into .deps/pytest,
#                        with pip as for matplotlib
#
# What is already here is not fetched: installed, in the CUDA toolkit, or in
# a .deps/ carried from another machine (the way to a machine without
# network: run this where there is network, then copy .deps/). Prints one
# line; when something is missing and cannot be fetched, that line says what
# and how to provide it, and the exit status is 1 (details: .deps/deps.log).
#
#   scripts/deps.sh                    (from anywhere in the repository)
#   PG_DEPS_NO_PIP=1 scripts/deps.sh   the standard-library path even where pip exists
set -uo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root" || exit 1
deps=$root/.deps
log=$deps/deps.log
mkdir -p "$deps"
: >"$log"

found=()   # "what: where"
missing=() # what could not be had
howto=()   # and how to install it instead
fetched=0

# ---- cmocka -------------------------------------------------------------------
have_cmocka() {
  local dir
  for dir in "$deps/cmocka/usr/include" /usr/include /usr/local/include; do
    if [ -f "$dir/cmocka.h" ]; then
      echo "$dir"
      return 0
    fi
  done
  return 1
}

# apt-get download with this machine's package lists, else with lists of our
# own in .deps/apt (a fresh container has none, and only root may fetch the
# system's).
apt_download() {
  (cd "$deps/debs" && apt-get download "$@") >>"$log" 2>&1 && return 0
  local own=(-o "Dir::State::Lists=$deps/apt/lists" -o "Dir::Cache=$deps/apt/cache"
             -o Debug::NoLocking=1)
  mkdir -p "$deps/apt/lists/partial" "$deps/apt/cache/archives/partial"
  echo "deps: apt-get update into $deps/apt" >>"$log"
  apt-get "${own[@]}" update >>"$log" 2>&1 &&
    (cd "$deps/debs" && apt-get "${own[@]}" download "$@") >>"$log" 2>&1
}

fetch_cmocka() {
  if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg >/dev/null 2>&1; then
    echo "deps: no apt-get/dpkg on this machine" >>"$log"
    return 1
  fi
  rm -rf "$deps/debs" "$deps/cmocka.new"
  mkdir -p "$deps/debs"
  apt_download libcmocka0 libcmocka-dev || return 1
  local deb
  for deb in "$deps"/debs/*.deb; do
    dpkg -x "$deb" "$deps/cmocka.new" >>"$log" 2>&1 || return 1
  done
  # libcmocka.so (the dev symlink) must resolve inside the prefix.
  local lib
  lib=$(find "$deps/cmocka.new" -name libcmocka.so | head -n 1)
  if [ -z "$lib" ] || [ ! -e "$lib" ] || [ ! -f "$deps/cmocka.new/usr/include/cmocka.h" ]; then
    echo "deps: cmocka.h or libcmocka.so missing from the packages" >>"$log"
    return 1
  fi
  rm -rf "$deps/cmocka"
  mv "$deps/cmocka.new" "$deps/cmocka"
}

if where=$(have_cmocka); then
  found+=("cmocka: $where")
elif fetch_cmocka && where=$(have_cmocka); then
  found+=("cmocka: fetched into .deps/cmocka")
  fetched=1
else
  missing+=("cmocka (host unit tests)")
  howto+=("libcmocka-dev")
fi

# ---- cuobjdump and nvdisasm ---------------------------------------------------------
nvcc=$(command -v nvcc || true)
[ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ] && nvcc=/usr/local/cuda/bin/nvcc

# The first NAME in: the CUDA toolkit's bin directory, .deps/pip, the PATH
# (where CMake's cmake/pg_disassembler.cmake looks too).
find_tool() {
  local name=$1 dir
  for dir in ${nvcc:+"$(dirname "$nvcc")"} "$deps"/pip/nvidia/*/bin; do
    if [ -x "$dir/$name" ]; then
      echo "$dir/$name"
      return 0
    fi
  done
  command -v "$name"
}

fetch_wheels() {
  local major=$1 packages=(nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm)
  if ! command -v python3 >/dev/null 2>&1; then
    echo "deps: no python3 to fetch ${packages[*]}" >>"$log"
    return 1
  fi
  # Debian's python3 is externally managed: --target leaves it alone.
  if [ -z "${PG_DEPS_NO_PIP:-}" ] && python3 -m pip --version >/dev/null 2>&1; then
    echo "deps: pip install --target $deps/pip ${packages[*]} ~=$major.0" >>"$log"
    python3 -m pip install --quiet --disable-pip-version-check --no-deps --upgrade \
      --retries 1 --timeout 30 --target "$deps/pip" \
      "${packages[0]}~=$major.0" "${packages[1]}~=$major.0" >>"$log" 2>&1 && return 0
  fi
  echo "deps: scripts/fetch-wheel.py ${packages[*]} $major.x" >>"$log"
  python3 "$root/scripts/fetch-wheel.py" --target "$deps/pip" --major "$major" \
    "${packages[@]}" >>"$log" 2>&1
}

disassemblers() {
  cuobjdump=$(find_tool cuobjdump) && nvdisasm=$(find_tool nvdisasm)
}

if disassemblers; then
  found+=("cuobjdump: $cuobjdump" "nvdisasm: $nvdisasm")
else
  major=
  [ -n "$nvcc" ] && major=$("$nvcc" --version 2>/dev/null | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
  if [ -z "$major" ]; then
    echo "deps: no nvcc to tell the CUDA version of the wheels" >>"$log"
  elif fetch_wheels "$major" && disassemblers && "$cuobjdump" --version >>"$log" 2>&1; then
    found+=("cuobjdump, nvdisasm: fetched into $(dirname "$cuobjdump")")
    fetched=1
  fi
  if ! disassemblers; then
    missing+=("cuobjdump, nvdisasm (pipegemm inspect)")
    howto+=("the CUDA toolkit's cuobjdump, nvdisasm")
  fi
fi

# ---- matplotlib -----------------------------------------------------------------
# Asked as the scripts ask: python3's own, else .deps/python's.
have_matplotlib() {
  python3 "$root/scripts/drawing.py" 2>>"$log"
}

# pip_into DIR PACKAGE [ARGS]: PACKAGE from PyPI into DIR with pip:
# python3's, else PyPI's wheel of it unpacked into .deps/pip-tool (a python3
# without pip, such as Debian's, runs it from there). Wheels only: building
# matplotlib or numpy from source takes a compiler and many minutes.
# --target leaves an externally managed python3 alone.
pip_into() {
  local target=$1 package=$2 pip=(python3 -m pip)
  shift 2
  if [ -n "${PG_DEPS_NO_PIP:-}" ] || ! python3 -m pip --version >/dev/null 2>&1; then
    echo "deps: scripts/fetch-wheel.py pip (for $package)" >>"$log"
    rm -rf "$deps/pip-tool"
    python3 "$root/scripts/fetch-wheel.py" --target "$deps/pip-tool" pip >>"$log" 2>&1 || return 1
    pip=(env "PYTHONPATH=$deps/pip-tool" python3 -m pip)
  fi
  echo "deps: pip install --target $target $package" >>"$log"
  rm -rf "$target.new"
  "${pip[@]}" install --quiet --disable-pip-version-check --only-binary=:all: \
    --retries 1 --timeout 30 --target "$target.new" "$@" "$package" >>"$log" 2>&1 || return 1
  rm -rf "$target" "$deps/pip-tool"
  mv "$target.new" "$target"
}

# python_module NAME PURPOSE HAVE DIR HOWTO [PIP ARGS]: NAME as HAVE finds it
# (it prints where), else fetched into DIR and found there, else missing.
python_module() {
  local name=$1 purpose=$2 have=$3 target=$4 advice=$5 where
  shift 5
  if ! command -v python3 >/dev/null 2>&1; then
    missing+=("$name ($purpose; no python3)")
    howto+=("python3 and $name")
  elif where=$($have); then
    found+=("$name $where")
  elif pip_into "$target" "$name" "$@" && where=$($have); then
    found+=("$name $where")
  else
    missing+=("$name ($purpose)")
    howto+=("$advice")
  fi
}

python_module matplotlib "the plots" have_matplotlib "$deps/python" \
  "matplotlib (pip install matplotlib, or apt-get install python3-matplotlib)"

# ---- pytest ---------------------------------------------------------------------
# Asked as python/tests/run.py asks: python3's own, else .deps/pytest's.
have_pytest() {
  local version
  if version=$(python3 -c 'import pytest; print(pytest.__version__)' 2>>"$log"); then
    echo "$version: python3's own"
  elif version=$(PYTHONPATH=$deps/pytest python3 -c 'import pytest; print(pytest.__version__)' 2>>"$log"); then
    echo "$version: .deps/pytest"
  else
    return 1
  fi
}

python_module pytest "the Python package's tests" have_pytest "$deps/pytest" \
  "pytest (pip install pytest, or apt-get install python3-pytest)" --no-compile

# The Makefile configures again when this is newer than its last configure
# (CMake looks for cmocka and the disassemblers, not for matplotlib).
(( fetched )) && touch "$deps/stamp"

# joined SEPARATOR WORDS...: the words with SEPARATOR between them.
joined() {
  local separator=$1 out='' item
  shift
  for item in "$@"; do out=${out:+$out$separator}$item; done
  echo "$out"
}

if (( ${#missing[@]} )); then
  echo "deps: missing $(joined ' and ' "${missing[@]}"); fetching failed (no network? see .deps/deps.log). Run scripts/deps.sh where there is network and copy .deps/ here, or install $(joined ' and ' "${howto[@]}")." >&2
  exit 1
fi
summary=$(joined '; ' "${found[@]}")
echo "deps: ${summary//$root\//}"
