#!/usr/bin/env python3
"""Fetches wheels from PyPI with python3's standard library only, for a
machine without pip (Debian's python3 comes without it), and unpacks them as
`pip install --target DIR` would, executable bits kept.

  scripts/fetch-wheel.py --target .deps/pip --major 13 \\
      nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm
  scripts/fetch-wheel.py --target .deps/pip-tool pip

Takes each package's newest release, of that major version where --major
says (pip's ~=13.0): no pre-release, nothing yanked, a manylinux wheel for
this machine or a pure-Python one, its sha256 checked. scripts/deps.sh runs
it when pip is missing: for the disassemblers, and for pip itself, which
then fetches matplotlib and what that needs.
Environment: PG_PYPI_JSON_URL (default https://pypi.org/pypi), the JSON API.
"""
import argparse
import hashlib
import io
import json
import os
import platform
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile

TIMEOUT_S = 30


def fetch(url):
    with urllib.request.urlopen(url, timeout=TIMEOUT_S) as response:
        return response.read()


def release_key(version):
    """(13, 5, 37) for "13.5.37"; None for a pre-release or a local version."""
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
        return None
    return tuple(int(part) for part in version.split("."))


def fits(filename, machine):
    """A wheel this machine runs: manylinux for its architecture, or pure Python."""
    return filename.endswith("-py3-none-any.whl") or (
        "manylinux" in filename and filename.endswith(f"_{machine}.whl"))


def pick_wheel(name, major, machine):
    index = os.environ.get("PG_PYPI_JSON_URL", "https://pypi.org/pypi")
    meta_url = f"{index}/{name}/json"
    meta = json.loads(fetch(meta_url))
    candidates = []
    for version, files in meta.get("releases", {}).items():
        key = release_key(version)
        if key is None or major is not None and key[0] != major:
            continue
        for f in files:
            filename = f.get("filename", "")
            if (f.get("packagetype") == "bdist_wheel" and not f.get("yanked")
                    and fits(filename, machine)):
                # Of one release, the machine's own wheel before a pure one;
                # a mirror may give the file's address relative to the page.
                candidates.append(((key, "manylinux" in filename),
                                   dict(f, url=urllib.parse.urljoin(meta_url, f["url"]))))
    if not candidates:
        release = "release" if major is None else f"release {major}.x"
        raise SystemExit(f"fetch-wheel: {name}: no {release} with a manylinux "
                         f"{machine} or pure-Python wheel on {index}")
    return max(candidates, key=lambda c: c[0])[1]


def unpack(data, target):
    root = os.path.realpath(target)
    with zipfile.ZipFile(io.BytesIO(data)) as wheel:
        for info in wheel.infolist():
            path = os.path.realpath(os.path.join(root, info.filename))
            if not path.startswith(root + os.sep):
                raise SystemExit(f"fetch-wheel: {info.filename} would land outside {target}")
            if info.is_dir():
                os.makedirs(path, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with wheel.open(info) as src, open(path, "wb") as dst:
                dst.write(src.read())
            # zipfile drops the mode; the wheel keeps it in the high 16 bits.
            # As pip does: executable for all when executable for its owner.
            if (info.external_attr >> 16) & 0o100:
                os.chmod(path, 0o755)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--target", required=True)
    parser.add_argument("--major", type=int, help="only releases of this major version")
    parser.add_argument("packages", nargs="+")
    args = parser.parse_args()
    machine = platform.machine()
    for name in args.packages:
        wheel = pick_wheel(name, args.major, machine)
        data = fetch(wheel["url"])
        digest = hashlib.sha256(data).hexdigest()
        if digest != wheel["digests"]["sha256"]:
            raise SystemExit(f"fetch-wheel: {wheel['filename']}: sha256 {digest}, "
                             f"PyPI says {wheel['digests']['sha256']}")
        unpack(data, args.target)
        print(f"fetch-wheel: {wheel['filename']} -> {args.target}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (urllib.error.URLError, OSError, ValueError, zipfile.BadZipFile) as err:
        sys.exit(f"fetch-wheel: {err}")
