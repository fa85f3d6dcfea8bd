#!/usr/bin/env bash
# Fetches cmocka as Debian packages into .deps/ so the working tree can carry
# it to a machine that has no network and no cmocka (the GPU machine).
#
#   scripts/fetch-cmocka.sh          # run here, from anywhere in the repo
#   cmake ... -DCMOCKA_ROOT=$PWD/.deps/cmocka/usr
#
# .deps/ is listed in .git/info/exclude: it is a local cache, never committed.
set -euo pipefail

root=$(git -C "$(dirname "$0")" rev-parse --show-toplevel)
cd "$root"

exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")"
touch "$exclude"
grep -qxF '/.deps/' "$exclude" || echo '/.deps/' >>"$exclude"

debs=.deps/debs
prefix=.deps/cmocka
rm -rf "$debs" "$prefix"
mkdir -p "$debs" "$prefix"

download() {
  (cd "$debs" && apt-get download libcmocka0 libcmocka-dev)
}
# apt-get download needs package lists; fetch them once if they are missing.
if ! download; then
  apt-get update
  download
fi

for deb in "$debs"/*.deb; do
  dpkg -x "$deb" "$prefix"
done

# libcmocka.so (the dev symlink) must resolve inside the prefix.
lib=$(find "$prefix" -name 'libcmocka.so' | head -n 1)
header=$(find "$prefix" -name 'cmocka.h' | head -n 1)
if [ -z "$lib" ] || [ ! -e "$lib" ] || [ -z "$header" ]; then
  echo "fetch-cmocka: cmocka.h or libcmocka.so missing under $prefix" >&2
  exit 1
fi

echo "fetched:" "$debs"/*.deb
echo "CMOCKA_ROOT=$root/$prefix/usr"
echo "library dir (for LD_LIBRARY_PATH): $root/$(dirname "$lib")"
