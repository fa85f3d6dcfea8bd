"""The package's build backend (PEP 517), in the standard library only, so
that `pip install ./python` needs nothing fetched: the GPU machines have no
network, and the package has nothing to compile.

It writes one pure-Python wheel: python/pipegemm/*.py, plus pipegemm/_origin.py,
which records the checkout it was built in (so that the installed package
finds that checkout's build/libpipegemm.so), and the metadata, whose version
is the library's, read from include/pipegemm.h (the one place it is written).
pip 21.3 or newer builds in place, which is what makes the recorded checkout
the real one; there is no sdist (the package is installed from a checkout).
"""

import base64
import hashlib
import os
import re
import zipfile

NAME = "pipegemm"
SUMMARY = "pipegemm.matmul on PyTorch, CuPy and JAX arrays, through libpipegemm.so"
REQUIRES_PYTHON = ">=3.8"
HERE = os.path.dirname(os.path.abspath(__file__))
CHECKOUT = os.path.dirname(HERE)
HEADER = os.path.join(CHECKOUT, "include", "pipegemm.h")


def version():
    """The version ("0.5.0") from the header's PIPEGEMM_VERSION_MAJOR/MINOR/PATCH."""
    try:
        with open(HEADER, encoding="utf-8") as f:
            header = f.read()
    except OSError as err:
        raise RuntimeError(f"python/_backend.py: cannot read {HEADER} ({err.strerror}): the "
                           f"package is built from a pipegemm checkout (pip install ./python)"
                           ) from None
    parts = []
    for part in ("MAJOR", "MINOR", "PATCH"):
        match = re.search(rf"^#define PIPEGEMM_VERSION_{part} +([0-9]+)$", header, re.M)
        if match is None:
            raise RuntimeError(f"python/_backend.py: {HEADER} has no PIPEGEMM_VERSION_{part}")
        parts.append(match.group(1))
    return ".".join(parts)


def _files():
    """(path in the wheel, bytes) of the package."""
    package = os.path.join(HERE, NAME)
    for entry in sorted(os.listdir(package)):
        if entry.endswith(".py") and entry != "_origin.py":
            with open(os.path.join(package, entry), "rb") as f:
                yield f"{NAME}/{entry}", f.read()
    origin = ("# Written by python/_backend.py: the checkout this wheel was built in.\n"
              f"CHECKOUT = {CHECKOUT!r}\n")
    yield f"{NAME}/_origin.py", origin.encode()


def _metadata(ver):
    return (f"Metadata-Version: 2.1\nName: {NAME}\nVersion: {ver}\nSummary: {SUMMARY}\n"
            f"Requires-Python: {REQUIRES_PYTHON}\n").encode()


def _wheel_file():
    return (b"Wheel-Version: 1.0\nGenerator: pipegemm python/_backend.py\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n")


def _record_line(path, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}\n"


def get_requires_for_build_wheel(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    info = f"{NAME}-{version()}.dist-info"
    os.makedirs(os.path.join(metadata_directory, info), exist_ok=True)
    for name, data in (("METADATA", _metadata(version())), ("WHEEL", _wheel_file())):
        with open(os.path.join(metadata_directory, info, name), "wb") as f:
            f.write(data)
    return info


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    ver = version()
    info = f"{NAME}-{ver}.dist-info"
    filename = f"{NAME}-{ver}-py3-none-any.whl"
    entries = list(_files())
    entries += [(f"{info}/METADATA", _metadata(ver)), (f"{info}/WHEEL", _wheel_file()),
                (f"{info}/top_level.txt", f"{NAME}\n".encode())]
    record = "".join(_record_line(path, data) for path, data in entries) + f"{info}/RECORD,,\n"
    entries.append((f"{info}/RECORD", record.encode()))
    path = os.path.join(wheel_directory, filename)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in entries:
            item = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
            item.external_attr = 0o644 << 16
            item.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(item, data)
    return filename


def build_sdist(sdist_directory, config_settings=None):
    raise RuntimeError("pipegemm's Python package has no sdist: it is installed from a "
                       "checkout, beside the library it loads (pip install ./python)")
