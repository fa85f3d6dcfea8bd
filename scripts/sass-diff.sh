#!/usr/bin/env bash
# Whether the machine code of every kernel is the same in two builds, kernel
# by kernel and architecture by architecture, wherever its source lives:
#
#   scripts/sass-diff.sh BEFORE AFTER [BUILD]
#
# BEFORE and AFTER: a library or object (libpipegemm.a, a kernel file's .o),
# or what `cuobjdump -sass` printed of one, saved to a file (cuobjdump takes
# minutes over the whole library: save the listing of the build before a
# change once, `cuobjdump -sass build/libpipegemm.a > before.sass`, and
# compare each build after it against the file).
#
# Prints each function whose SASS differs, and each that is in one build
# only, then a count; exit 0 when every function of both is identical, 1
# when any differs or is missing from one, 2 on a usage error, 3 without
# cuobjdump. A function is named by its mangled symbol and its architecture
# (sm_80, sm_90, sm_90a), so a kernel moved from one file to another is
# compared with itself.
#
# Compared: every instruction, its offset in the function (/*0120*/), its
# encoding (the second word holds the scheduling: stalls, barriers, reuse),
# and the function's header flags. Left out, as a move between files changes
# them without changing the code: which archive member or file the function
# is in, the blanks between the columns (cuobjdump pads them to the widest
# instruction of the module) and empty lines, and the offsets into constant bank 2 (c[0x2][...]: the module's
# compiler constants, e.g. a switch's jump table, laid out per module), with
# the encoding of the word that holds the offset.
#
# cuobjdump: $PG_CUOBJDUMP, else the one CMake found (PG_CUOBJDUMP_EXECUTABLE
# in BUILD/CMakeCache.txt, BUILD defaulting to build), else the PATH.
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  echo "usage: scripts/sass-diff.sh BEFORE AFTER [BUILD]" >&2
  exit 2
fi
before=$1
after=$2
build=${3:-build}
for input in "$before" "$after"; do
  if [ ! -f "$input" ]; then
    echo "sass-diff: $input: no such file" >&2
    exit 2
  fi
done

# An archive or an ELF file is given to cuobjdump; anything else is taken
# for a listing it printed.
is_listing() {
  local magic
  magic=$(head -c 7 "$1" | od -An -c | tr -d ' \n')
  case "$magic" in '!<arch>' | 177ELF*) return 1 ;; esac
  return 0
}

tool=${PG_CUOBJDUMP:-}
find_tool() {
  if [ -z "$tool" ] && [ -f "$build/CMakeCache.txt" ]; then
    tool=$(sed -n 's/^PG_CUOBJDUMP_EXECUTABLE:[A-Z]*=//p' "$build/CMakeCache.txt")
    case "$tool" in *NOTFOUND) tool= ;; esac
  fi
  if [ -z "$tool" ]; then
    tool=$(command -v cuobjdump || true)
  fi
  if [ -z "$tool" ] || [ ! -x "$tool" ]; then
    echo "sass-diff: no cuobjdump: set PG_CUOBJDUMP, run make deps, or install the CUDA toolkit's" >&2
    exit 3
  fi
  # cuobjdump -sass runs nvdisasm from the PATH: the one beside it.
  PATH=$(dirname "$tool"):$PATH
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One normalized file per function under $2 (numbered), and an index of
# "architecture symbol file" lines, sorted, in $2/index.
split_functions() {
  local input=$1 dir=$2
  mkdir -p "$dir"
  if is_listing "$input"; then
    cat "$input"
  else
    find_tool
    "$tool" -sass "$input"
  fi | awk -v dir="$dir" '
    function finish() { if (file != "") close(file); file = "" }
    /^[ \t]*code for sm_/ { finish(); arch = $3; next }
    /^(member |Fatbin |[ \t]*Fatbin )/ { finish(); next }
    /^[ \t]*Function : / {
      finish()
      file = dir "/" (++count)
      print arch, $3, file > (dir "/index.unsorted")
      next
    }
    file == "" { next }
    {
      line = $0
      gsub(/[ \t]+/, " ", line)
      sub(/ $/, "", line)
      if (line == "") next
      if (line ~ /c\[0x2\]\[/) {
        gsub(/c\[0x2\]\[[^]]*\]/, "c[0x2][.]", line)
        sub(/\/\* 0x[0-9a-f]+ \*\//, "/* (offset into bank 2) */", line)
      }
      print line > file
    }
    END { finish() }'
  if [ -f "$dir/index.unsorted" ]; then
    LC_ALL=C sort -k1,1 -k2,2 "$dir/index.unsorted" >"$dir/index"
  else
    : >"$dir/index"
  fi
  if [ ! -s "$dir/index" ]; then
    echo "sass-diff: $input holds no SASS function" >&2
    exit 2
  fi
  # One symbol twice in one architecture (the same instance in two modules)
  # would be compared by chance: refuse.
  local twice
  twice=$(awk '{print $1, $2}' "$dir/index" | uniq -d | head -n 3)
  if [ -n "$twice" ]; then
    echo "sass-diff: $input holds these functions more than once (one module each?):" >&2
    echo "$twice" >&2
    exit 2
  fi
}

split_functions "$before" "$work/before"
split_functions "$after" "$work/after"

LC_ALL=C join -j1 -a1 -a2 -o 0,1.2,2.2 -e - \
  <(awk '{print $1 "|" $2, $3}' "$work/before/index" | LC_ALL=C sort -k1,1) \
  <(awk '{print $1 "|" $2, $3}' "$work/after/index" | LC_ALL=C sort -k1,1) >"$work/pairs"

same=0
differ=0
missing=0
while read -r key old new; do
  arch=${key%%|*}
  symbol=${key#*|}
  if [ "$old" = - ]; then
    echo "only in $after: $symbol ($arch)"
    missing=$((missing + 1))
  elif [ "$new" = - ]; then
    echo "only in $before: $symbol ($arch)"
    missing=$((missing + 1))
  elif cmp -s "$old" "$new"; then
    same=$((same + 1))
  else
    lines=$(diff "$old" "$new" | grep -c '^[<>]' || true)
    echo "differs: $symbol ($arch), $lines lines"
    differ=$((differ + 1))
  fi
done <"$work/pairs"

echo "sass-diff: $same functions identical, $differ differ, $missing in one build only"
[ "$differ" -eq 0 ] && [ "$missing" -eq 0 ]
