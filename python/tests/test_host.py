"""The package without a GPU: the import and the version, the registry,
argument errors, how strides map onto pg_gemm (python/pipegemm/_layout.py),
copies and CopyWarning, the library not found, the ctypes declarations
against the ABI record, and what the wheel installs. test_frameworks_host.py
has torch's and JAX's tracing (fake and meta tensors, abstract arrays).

Arrays here are stand-ins: objects with a __cuda_array_interface__ of
made-up addresses. Every refusal they meet comes before any device work; the
few calls that would get as far as a launch run only where the library sees
no GPU (they then return PG_ERR_NO_DEVICE), never on made-up addresses of a
real one."""
import csv
import ctypes
import io
import math
import os
import random
import re
import shutil
import subprocess
import sys
import warnings
import zipfile

import pytest

import pipegemm
from pipegemm import _arrays, _layout, _library

TESTS = os.path.dirname(os.path.abspath(__file__))
PYTHON = os.path.dirname(TESTS)
REPO = os.path.dirname(PYTHON)
HEADER = os.path.join(REPO, "include", "pipegemm.h")
GiB = 1 << 30


class Fake:
    """A float32 matrix as __cuda_array_interface__ describes one."""

    def __init__(self, shape, strides=None, ptr=GiB, typestr="<f4", readonly=False,
                 stream=None, **extra):
        self.__cuda_array_interface__ = dict(shape=shape, strides=strides, typestr=typestr,
                                             data=(ptr, readonly), version=3, stream=stream,
                                             **extra)


def header_version():
    with open(HEADER, encoding="utf-8") as f:
        text = f.read()
    return tuple(int(re.search(rf"^#define PIPEGEMM_VERSION_{p} +([0-9]+)$", text, re.M)
                     .group(1)) for p in ("MAJOR", "MINOR", "PATCH"))


@pytest.fixture
def no_gpu():
    """For a call that passes every check: it must not reach a real GPU."""
    problem = _library.device_problem()
    if problem is None:
        pytest.skip("a CUDA device is usable here: a call on made-up addresses would reach "
                    "it (test_gpu.py makes such calls on real arrays)")
    return problem


def operands(m=4, n=6, k=5):
    return Fake((m, k), ptr=GiB), Fake((k, n), ptr=2 * GiB), Fake((m, n), ptr=3 * GiB)


# ---- the import, the version -----------------------------------------------------------------

def test_version_is_the_headers():
    assert pipegemm.version == "%d.%d.%d" % header_version()
    assert pipegemm.__version__ == "%d.%d.%d" % header_version()
    assert _library.DECLARED == header_version()[:2], (
        "include/pipegemm.h moved to another version: check python/pipegemm/_library.py's "
        "declarations against it, then set DECLARED")


def test_library_path_is_the_loaded_file():
    assert os.path.isfile(pipegemm.library_path)
    if os.environ.get(_library.ENV):
        assert pipegemm.library_path == os.environ[_library.ENV]


def test_public_names():
    for name in pipegemm.__all__:
        assert hasattr(pipegemm, name), name
    assert issubclass(pipegemm.ArgumentError, pipegemm.Error)
    assert issubclass(pipegemm.ArgumentError, ValueError)
    assert issubclass(pipegemm.Error, RuntimeError)


# ---- the registry ----------------------------------------------------------------------------

def test_variants_are_the_registry():
    entries = pipegemm.variants()
    assert entries is pipegemm.variants()
    assert len(entries) == _library.LIB.pg_variant_count() > 0
    names = [v.name for v in entries]
    assert len(set(names)) == len(names)
    for name in ("cublas", "auto", "auto_tf32", "auto_emulated", "cp_async", "tma_ws"):
        assert name in names
    for v in entries:
        assert isinstance(v, pipegemm.Variant)
        assert v.kind in ("kernel", "library reference", "selector"), v
        assert v.precision in ("strict", "emulated", "tf32"), v
        assert v.technique, v
        if v.kind == "selector":
            assert (v.min_stages, v.max_stages, v.default_stages) == (0, 0, 0), v
        else:
            assert 1 <= v.min_stages <= v.default_stages <= v.max_stages, v
        if v.kind == "kernel":
            assert v.tile_m > 0 and v.tile_n > 0 and v.tile_k > 0 and v.threads > 0, v
    by_name = {v.name: v for v in entries}
    assert by_name["auto"].precision == "strict"
    assert by_name["auto_emulated"].precision == "emulated"
    assert by_name["cublas_tf32"].precision == "tf32"


def test_variants_match_pipegemm_list():
    cli = os.environ.get("PIPEGEMM_TEST_CLI")
    if not cli:
        pytest.skip("PIPEGEMM_TEST_CLI names no pipegemm tool to hold the registry to: "
                    "run.py host --cli build/pipegemm sets it")
    listing = subprocess.run([cli, "list", "--format", "csv"], capture_output=True, text=True,
                             check=True).stdout
    rows = list(csv.DictReader(io.StringIO(
        "".join(line + "\n" for line in listing.splitlines() if not line.startswith("#")))))
    assert [r["name"] for r in rows] == [v.name for v in pipegemm.variants()]
    for row, v in zip(rows, pipegemm.variants()):
        assert (row["kind"], row["precision"]) == (v.kind, v.precision), v.name
        assert [int(row[f]) for f in ("min_stages", "max_stages", "default_stages")] == \
            [v.min_stages, v.max_stages, v.default_stages], v.name


# ---- argument errors, before any device work -------------------------------------------------

A, B, C = operands()
REFUSALS = [
    # (a, b, keywords, exception, what the message must say)
    ([[1.0]], B, {}, TypeError, r"a is a builtins\.list: pipegemm\.matmul takes CUDA arrays"),
    (A, None, {}, TypeError, r"b is a builtins\.NoneType"),
    (A, B, dict(out=C, variant=3), TypeError, r"variant must be a str"),
    (A, B, dict(out=C, stages=1.5), TypeError, r"stages must be an int"),
    (A, B, dict(out=C, stages=2**40), ValueError, r"stages = 1099511627776 does not fit"),
    (A, B, dict(out=C, alpha="x"), TypeError, r"alpha must be a real number"),
    (A, B, dict(out=C, beta=None), TypeError, r"beta must be a real number"),
    (A, B, dict(out=C, variant="cp_async\0"), ValueError, r"NUL"),
    (Fake((4, 5), typestr="<f8"), B, dict(out=C), ValueError,
     r"a's elements are '<f8': pipegemm\.matmul takes float32"),
    (Fake((4, 5, 1)), B, dict(out=C), ValueError,
     r"a is \(4, 5, 1\) and b 5 x 6: a's width must equal b's height"),
    (Fake(()), B, dict(out=C), ValueError, r"a is a scalar \(0 dimensions\)"),
    (Fake((2, 4, 5)), Fake((3, 5, 6), ptr=2 * GiB), dict(out=C), ValueError,
     r"a's batch dimensions \(2,\) and b's \(3,\) do not broadcast"),
    (Fake((2, 4, 5)), B, dict(out=C), ValueError, r"out is 4 x 6; a \(2, 4, 5\) times b 5 x 6 "
     r"is \(2, 4, 6\)"),
    (Fake((2, 4, 5)), B, dict(out=Fake((2, 4, 6), strides=(0, 24, 4), ptr=3 * GiB)), ValueError,
     r"out's elements overlap one another"),
    (A, Fake((4, 6), ptr=2 * GiB), dict(out=C), ValueError,
     r"a is 4 x 5 and b 4 x 6: a's width must equal b's height"),
    # rows that overlap (ld below the width), and a broadcast row: no
    # layout, and no copy of an object pipegemm does not know
    (A, Fake((5, 6), strides=(16, 4), ptr=2 * GiB), dict(out=C), ValueError,
     r"^b \(5 x 6, strides \(4, 1\) in elements\) maps onto no layout pg_gemm reads .*, and "
     r"pipegemm\.matmul cannot copy an object with __cuda_array_interface__: pass a row-major "
     r"copy of b$"),
    (A, Fake((5, 6), strides=(0, 4), ptr=2 * GiB), dict(out=C), ValueError,
     r"maps onto no layout"),
    (A, Fake((5, 6), strides=(26, 4), ptr=2 * GiB), dict(out=C), ValueError,
     r"b's strides \(26, 4\) \(bytes\) are not whole float32 elements"),
    (A, B, dict(out=Fake((4, 7), ptr=3 * GiB)), ValueError,
     r"out is 4 x 7; a 4 x 5 times b 5 x 6 is 4 x 6"),
    (A, B, dict(out=Fake((4, 6), ptr=3 * GiB, readonly=True)), ValueError, r"out is read-only"),
    (A, B, dict(out=Fake((4, 6), ptr=GiB + 64)), ValueError, r"out overlaps a"),
    (A, B, dict(out=Fake((4, 6), ptr=2 * GiB)), ValueError, r"out overlaps b"),
    # columns 4..9 of rows of 11 floats beside columns 0..4: column 4 is both
    (Fake((4, 5), strides=(44, 4)), B, dict(out=Fake((4, 6), strides=(44, 4), ptr=GiB + 16)),
     ValueError, r"^out overlaps a: the library reads a while it writes out$"),
    # two leading dimensions, and more rows of each within the other than are checked
    (Fake((5000, 5), strides=(40, 4)), B, dict(out=Fake((5000, 6), strides=(48, 4), ptr=GiB + 20)),
     ValueError, r"^out may overlap a: "),
    (A, B, dict(out=C, alpha=1e300), ValueError,
     r"^alpha = 1e\+300 would round to infinity as the library's C float \(float32, "),
    (A, B, dict(out=C, beta=-2.0**128), ValueError,
     r"^beta = -3\.402823669209385e\+38 would round to infinity"),
    # halfway between float32's largest and 2**128: rounds (to even) to infinity
    (A, B, dict(out=C, beta=2.0**128 - 2.0**103), ValueError,
     r"^beta = 3\.4028235677973366e\+38 would round to infinity"),
    (A, B, dict(out=C, alpha=-10**400), ValueError, r"^alpha = -10{400} would round to infinity"),
    (A, B, dict(out=Fake((4, 6), strides=(48, 8), ptr=3 * GiB)), ValueError,
     r"out \(4 x 6, strides \(12, 2\) in elements\) maps onto no layout"),
    (A, B, dict(beta=0.5), ValueError, r"beta = 0\.5 scales out .*: pass out="),
    (A, B, {}, TypeError, r"for an object with __cuda_array_interface__ pass out="),
    (Fake((4, 5), stream=5), Fake((5, 6), ptr=2 * GiB, stream=7), dict(out=C), ValueError,
     r"the arrays name different streams \(a's 5, b's 7\)"),
    (Fake((4, 5), mask=object()), B, dict(out=C), ValueError, r"a has a mask"),
    (Fake((3 * 2**31, 5)), B, dict(out=C), ValueError,
     r"a has a dimension of 6442450944: the library takes at most 2147483647"),
]


@pytest.mark.parametrize("a, b, keywords, error, message", REFUSALS)
def test_refusals(a, b, keywords, error, message):
    with pytest.raises(error, match=message) as caught:
        pipegemm.matmul(a, b, **keywords)
    assert one_sentence(str(caught.value)), str(caught.value)


def one_sentence(message):
    """No line break, and no full stop before more words."""
    return "\n" not in message and not re.search(r"\.\s", message)


class HostArray:
    """What numpy shows of itself: DLPack, on the host."""

    def __dlpack__(self, stream=None):
        raise AssertionError("not to be taken")

    def __dlpack_device__(self):
        return (1, 0)  # kDLCPU


class DLPackOnly(HostArray):
    def __dlpack_device__(self):
        return (2, 0)  # kDLCUDA


def test_host_and_dlpack_only_arrays():
    with pytest.raises(TypeError, match=r"HostArray in host memory: pipegemm\.matmul takes "
                                        r"CUDA arrays"):
        pipegemm.matmul(HostArray(), B, out=C)
    with pytest.raises(TypeError, match=r"through DLPack only: view it as a torch tensor or "
                                        r"CuPy array first \(torch\.from_dlpack\(b\)"):
        pipegemm.matmul(A, DLPackOnly(), out=C)


def test_library_refusals_carry_the_detail():
    # Rejected by the library before any device work, GPU or not.
    with pytest.raises(pipegemm.ArgumentError) as caught:
        pipegemm.matmul(A, B, out=C, variant="no_such_variant")
    assert caught.value.status == -2
    assert caught.value.status_name == "PG_ERR_UNKNOWN_VARIANT"
    assert '"no_such_variant"' in caught.value.detail
    assert caught.value.detail in str(caught.value)
    with pytest.raises(ValueError, match=r"stages = 9: cp_async takes 1\.\.8 .*\(PG_ERR_STAGES\)"):
        pipegemm.matmul(A, B, out=C, variant="cp_async", stages=9)
    with pytest.raises(pipegemm.ArgumentError, match=r"auto takes only 0"):
        pipegemm.matmul(A, B, out=C, stages=2)


def test_a_valid_call_without_a_gpu(no_gpu):
    with pytest.raises(pipegemm.Error) as caught:
        pipegemm.matmul(A, B, out=C, alpha=2, beta=-1, variant="cp_async", stages=3)
    error = caught.value
    assert not isinstance(error, ValueError)
    assert (error.status, error.status_name) == (-7, "PG_ERR_NO_DEVICE")
    assert error.detail == no_gpu != ""
    assert str(error) == f"no usable CUDA device: {no_gpu} (PG_ERR_NO_DEVICE)"


def test_views_with_a_leading_dimension_pass_the_checks(no_gpu):
    # Columns 2..6 of 4 x 8 rows, rows of one (any stride), transposed views
    # (of a, b, out), a batch broadcast against a matrix: all get as far as
    # the device.
    cases = [
        (Fake((4, 5), strides=(32, 4), ptr=GiB + 8), B, C),
        (Fake((4, 5), strides=(4, 16)), B, C),
        (A, Fake((5, 6), strides=(4, 20), ptr=2 * GiB), C),
        (A, B, Fake((4, 6), strides=(4, 16), ptr=3 * GiB)),
        (Fake((3, 4, 5)), B, Fake((3, 4, 6), ptr=3 * GiB)),
        (Fake((5,)), B, Fake((6,), ptr=3 * GiB)),
        (Fake((1, 5), strides=(4, 4)), Fake((5, 6), strides=(96, 4), ptr=2 * GiB),
         Fake((1, 6), strides=(0, 4), ptr=3 * GiB)),
        (Fake((4, 1), strides=(4, 999)), Fake((1, 6), ptr=2 * GiB), C),
        (Fake((4, 0), ptr=0), Fake((0, 6), ptr=0), C),
    ]
    for a, b, out in cases:
        with pytest.raises(pipegemm.Error, match="PG_ERR_NO_DEVICE"):
            pipegemm.matmul(a, b, out=out)


def test_streams_the_interface_names(no_gpu):
    # One named stream, or none: accepted (as far as the device).
    for streams in ((None, None, None), (5, None, 5), (None, 2, None)):
        a, b, out = (Fake(op.__cuda_array_interface__["shape"],
                          ptr=op.__cuda_array_interface__["data"][0], stream=s)
                     for op, s in zip((A, B, C), streams))
        with pytest.raises(pipegemm.Error, match="PG_ERR_NO_DEVICE"):
            pipegemm.matmul(a, b, out=out)


def test_alpha_and_beta_that_fit_a_float_pass_as_given():
    # float32's largest, what rounds to it, what underflows, inf and nan: the
    # library takes them all (inf and nan as IEEE inputs it propagates).
    for value in (3.4028235e38, -(2.0**128 - 2.0**103 - 2.0**75), 1e-300, 2, float("inf"),
                  float("-inf")):
        assert pipegemm._real("alpha", value) == value
    assert math.isnan(pipegemm._real("beta", float("nan")))


def test_alpha_and_beta_at_float32_limits_reach_the_device(no_gpu):
    for alpha, beta in ((3.4028235e38, -3.4028235e38), (float("inf"), float("nan"))):
        with pytest.raises(pipegemm.Error, match="PG_ERR_NO_DEVICE"):
            pipegemm.matmul(A, B, out=C, alpha=alpha, beta=beta)


# ---- out beside a and b: an overlap is a byte of both ----------------------------------------

def view(rows, cols, ld, ptr=GiB):
    """The Operand of a rows x cols view, ld floats between rows, at byte ptr."""
    return _arrays.Operand("x", ptr, rows, cols, ld)


def shares_a_byte(x, y):
    """Whether x and y share a byte, from every byte of each."""
    def covered(op):
        return {op.ptr + (i * op.ld + j) * 4 + byte
                for i in range(op.rows) for j in range(op.cols) for byte in range(4)}
    return not covered(x).isdisjoint(covered(y))


def test_overlap_is_a_byte_of_both():
    # Small views of one buffer at offsets of any byte, with one leading
    # dimension or two: overlap() against the bytes themselves.
    rng = random.Random(53)
    found = {True: 0, False: 0}
    for _ in range(4000):
        shapes = [(rng.randrange(5), rng.randrange(5)) for _ in range(2)]
        layouts = [(rows, cols, cols + rng.randrange(4) or 1, GiB + rng.randrange(-48, 49))
                   for rows, cols in shapes]
        x, y = (view(*layout) for layout in layouts)
        expected = shares_a_byte(x, y)
        assert _arrays.overlap(x, y) is expected, layouts
        assert _arrays.overlap(y, x) is expected, layouts
        found[expected] += 1
    assert min(found.values()) > 500, found


def test_overlap_of_large_views():
    # Rows of 2**31 - 1 (the most a C int counts), and buffers of 2 * 4096
    # floats a row: answered by arithmetic, not row by row.
    rows, ld = 2**31 - 1, 8192
    left = view(rows, 4096, ld)
    assert _arrays.overlap(left, view(rows, 4096, ld, GiB + 4096 * 4)) is False
    assert _arrays.overlap(left, view(rows, 4096, ld, GiB + 4095 * 4)) is True
    assert _arrays.overlap(left, view(rows, 4096, ld, GiB + 4095 * 4 + 3)) is True
    assert _arrays.overlap(left, view(rows, 4096, ld, GiB + 4096 * 4 - ld * 4)) is False
    assert _arrays.overlap(left, view(rows, 4096, ld, GiB - ld * 4)) is True
    # even and odd rows of one rows x 8192 buffer; odd rows but one float wider
    even = view(rows // 2, ld, 2 * ld)
    assert _arrays.overlap(even, view(rows // 2, ld, 2 * ld, GiB + ld * 4)) is False
    assert _arrays.overlap(even, view(rows // 2, ld + 1, 2 * ld, GiB + ld * 4)) is True
    # the last row of one is the other's first only: a = x[:n], out = x[n - 1:]
    assert _arrays.overlap(view(1000, 10, ld), view(rows, 10, ld, GiB + 999 * ld * 4)) is True
    assert _arrays.overlap(view(1000, 10, ld), view(rows, 10, ld, GiB + 1000 * ld * 4)) is False
    # one row across many: where it falls
    assert _arrays.overlap(view(1, ld, ld, GiB + 5 * 2 * ld * 4), even) is True
    assert _arrays.overlap(view(1, ld, ld, GiB + 5 * 2 * ld * 4 + ld * 4), even) is False
    # two leading dimensions whose rows never meet: 4096 floats of every 8192,
    # against 4096 floats at 4096 of every 16384
    assert _arrays.overlap(left, view(rows // 2, 4096, 2 * ld, GiB + 4096 * 4)) is False
    # two leading dimensions, millions of rows within each other: not worked out
    assert _arrays.overlap(view(10**6, 10, 20), view(10**6, 10, 30, GiB + 40)) is _arrays.MAYBE


def test_interleaved_views_pass_the_checks(no_gpu):
    # Columns 5..10 of rows of 11 floats beside columns 0..4; odd rows of 6
    # floats beside even ones.
    for a, out in ((Fake((4, 5), strides=(44, 4)), Fake((4, 6), strides=(44, 4), ptr=GiB + 20)),
                   (Fake((4, 5), strides=(48, 4)), Fake((4, 6), strides=(48, 4), ptr=GiB + 24))):
        with pytest.raises(pipegemm.Error, match="PG_ERR_NO_DEVICE"):
            pipegemm.matmul(a, B, out=out, beta=1)


# ---- the library not found, or not the one declared ------------------------------------------

def run_python(code, env_changes, cwd, path):
    env = {k: v for k, v in os.environ.items() if k != _library.ENV}
    env.update(env_changes)
    env["PYTHONPATH"] = path
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=120)


def test_environment_variable_naming_no_file(tmp_path):
    missing = str(tmp_path / "nowhere" / "libpipegemm.so")
    done = run_python("import pipegemm", {_library.ENV: missing}, tmp_path, PYTHON)
    assert done.returncode != 0
    assert f"ImportError: pipegemm: PIPEGEMM_LIBRARY={missing}: no such file" in done.stderr


def test_environment_variable_naming_no_library(tmp_path):
    not_a_library = tmp_path / "libpipegemm.so"
    not_a_library.write_text("not ELF\n")
    done = run_python("import pipegemm", {_library.ENV: str(not_a_library)}, tmp_path, PYTHON)
    assert done.returncode != 0
    assert f"PIPEGEMM_LIBRARY={not_a_library} does not load: " in done.stderr


def test_not_found_says_where_it_looked(tmp_path):
    # The package outside any checkout: nothing but the prefixes and the loader.
    shutil.copytree(os.path.join(PYTHON, "pipegemm"), tmp_path / "site" / "pipegemm")
    done = run_python("import pipegemm; print(pipegemm.library_path)", {}, tmp_path,
                      str(tmp_path / "site"))
    if done.returncode == 0:
        pytest.skip(f"a libpipegemm is installed on this machine: {done.stdout.strip()}")
    message = done.stderr[done.stderr.index("ImportError: "):]
    assert message.startswith("ImportError: pipegemm: libpipegemm.so not found. "
                              "Looked for it in:\n  PIPEGEMM_LIBRARY: not set\n")
    assert f"  {os.path.join(sys.prefix, 'lib', 'libpipegemm.so')} (this Python's prefix): " \
           f"no such file\n" in message
    assert "  libpipegemm.so.0.5 through the dynamic loader (LD_LIBRARY_PATH, ldconfig): " in message
    assert "build tree" not in message
    assert message.rstrip().endswith("or set PIPEGEMM_LIBRARY=/path/to/libpipegemm.so.")


STUB = r"""
/* A stand-in libpipegemm: the functions the package declares, of version
 * STUB_VERSION, without STUB_LEAVE_OUT. */
#define F(name, ret) ret name(void) { return (ret)0; }
int pg_version(void) { return STUB_VERSION; }
const char *pg_version_string(void) { return "stub"; }
F(pg_strerror, const char *) F(pg_status_name, const char *) F(pg_last_cuda_error, int)
F(pg_last_error_detail, const char *) F(pg_kind_name, const char *)
F(pg_precision_name, const char *) F(pg_variant_count, int) F(pg_variant_at, void *)
F(pg_variant_supported, int) F(pg_gemm, int)
#ifndef STUB_LEAVE_OUT
F(pg_variant_find, void *)
#endif
"""


def build_stub(tmp_path, name, *defines):
    compiler = shutil.which("cc") or shutil.which("gcc")
    if compiler is None:
        pytest.skip("no C compiler to build a stand-in library")
    source = tmp_path / "stub.c"
    source.write_text(STUB)
    library = tmp_path / name
    subprocess.run([compiler, "-shared", "-fPIC", "-o", str(library), str(source),
                    *[f"-D{d}" for d in defines]], check=True)
    return library


def test_another_version_is_refused(tmp_path):
    stub = build_stub(tmp_path, "libpipegemm-9.so", "STUB_VERSION=90100")
    done = run_python("import pipegemm", {_library.ENV: str(stub)}, tmp_path, PYTHON)
    assert done.returncode != 0
    assert (f"ImportError: pipegemm: {stub} is libpipegemm stub; this package declares the "
            f"calls of {_library.DECLARED[0]}.{_library.DECLARED[1]}") in done.stderr


def test_a_missing_function_is_named(tmp_path):
    major, minor = _library.DECLARED
    stub = build_stub(tmp_path, "libpipegemm-short.so",
                      f"STUB_VERSION={major * 10000 + minor * 100}", "STUB_LEAVE_OUT")
    done = run_python("import pipegemm", {_library.ENV: str(stub)}, tmp_path, PYTHON)
    assert done.returncode != 0
    assert f"ImportError: pipegemm: {stub} has no pg_variant_find" in done.stderr


# ---- the package run from a checkout -----------------------------------------------------------

def fake_checkout(root):
    """A checkout of python/ and the header, without a build."""
    shutil.copytree(PYTHON, root / "python", ignore=shutil.ignore_patterns("__pycache__"))
    (root / "include").mkdir()
    shutil.copy(HEADER, root / "include")
    return root


def test_the_build_tree_is_named_when_missing(tmp_path):
    checkout = fake_checkout(tmp_path / "checkout")
    done = run_python("import pipegemm; print(pipegemm.library_path)", {}, tmp_path,
                      str(checkout / "python"))
    if done.returncode == 0:
        pytest.skip(f"a libpipegemm is installed on this machine: {done.stdout.strip()}")
    assert (f"  {checkout / 'build' / 'libpipegemm.so'} (the build tree of the checkout "
            f"{checkout}): no such file\n") in done.stderr


# ---- strides onto pg_gemm: op, leading dimension, batch stride ---------------------------------

L = _layout


def contiguous(shape):
    return tuple(_arrays.contiguous_strides(shape))


def transposed(shape):
    """Strides of the transposed view (.mT) of a contiguous array of `shape`
    with its last two dimensions swapped: shape is the view's."""
    *batch, rows, cols = shape
    base = contiguous(tuple(batch) + (cols, rows))
    return base[:-2] + (base[-1], base[-2])


@pytest.mark.parametrize("rows, cols, strides, expected", [
    (4, 5, (5, 1), (L.N, 5)),          # contiguous
    (4, 5, (8, 1), (L.N, 8)),          # columns of a wider matrix
    (4, 5, (1, 4), (L.T, 4)),          # a transposed view
    (4, 5, (1, 7), (L.T, 7)),          # a transposed view of a wider one
    (1, 5, (0, 1), (L.N, 5)),          # one row, any row stride
    (1, 5, (99, 3), (L.T, 3)),         # one row of elements 3 apart: columns of a 5 x 1
    (4, 1, (3, 0), (L.N, 3)),          # one column, elements 3 apart
    (1, 1, (0, 0), (L.N, 1)),
    (0, 5, (0, 0), (L.N, 5)),          # empty: any
    (4, 5, (4, 1), None),              # rows that overlap
    (4, 5, (0, 1), None),              # expand()ed rows
    (4, 5, (2, 2), None),              # no unit stride
    (4, 5, (-5, 1), None),             # a reversed view (CuPy, numpy)
])
def test_matrix_layouts(rows, cols, strides, expected):
    assert L.matrix_layout(rows, cols, *strides) == expected


def plan_of(a, b, out=None, **keywords):
    """Plan of fake operands given as (shape, strides) pairs (strides None: contiguous)."""
    def full(x):
        shape, strides = x
        return shape, contiguous(shape) if strides is None else strides
    a, b = full(a), full(b)
    out = (None, None) if out is None else full(out)
    return L.plan(*a, *b, *out, **keywords)


def test_plan_of_every_op_combination():
    m, n, k = 4, 6, 5
    for op_a in (L.N, L.T):
        for op_b in (L.N, L.T):
            a = ((m, k), contiguous((m, k)) if op_a == L.N else transposed((m, k)))
            b = ((k, n), contiguous((k, n)) if op_b == L.N else transposed((k, n)))
            p = plan_of(a, b)
            assert not p.copies and not p.swapped
            assert (p.op_a, p.op_b, p.m, p.n, p.k) == (op_a, op_b, m, n, k)
            assert (p.lda, p.ldb, p.ldc) == (k if op_a == L.N else m, n if op_b == L.N else k, n)
            assert p.launches == (L.Launch(0, 0, 0, 1, 0, 0, 0),)


def test_plan_of_a_transposed_out_turns_the_product_round():
    # C^T = op(B)^T op(A)^T: pg_gemm's A is b with its op flipped.
    p = plan_of(((4, 5), None), ((5, 6), transposed((5, 6))), ((4, 6), transposed((4, 6))))
    assert p.swapped and not p.copies
    assert (p.m, p.n, p.k, p.op_a, p.op_b) == (6, 4, 5, L.N, L.T)
    assert (p.lda, p.ldb, p.ldc) == (5, 5, 4)


def test_plan_of_batches():
    # Equal batches: one strided batch.
    p = plan_of(((3, 4, 5), None), ((3, 5, 6), None))
    assert p.launches == (L.Launch(0, 0, 0, 3, 20, 30, 24),) and p.shapes.result == (3, 4, 6)
    # b broadcast (2-D): the batch's rows are one GEMM (torch's x @ W).
    p = plan_of(((2, 3, 4, 5), None), ((5, 6), None))
    assert (p.m, p.launches) == (24, (L.Launch(0, 0, 0, 1, 0, 0, 0),))
    # a broadcast against b's batch: stride 0.
    p = plan_of(((4, 5), None), ((3, 5, 6), None))
    assert p.launches == (L.Launch(0, 0, 0, 3, 0, 30, 24),)
    # an expand()ed batch of b (stride 0) against a transposed batch of a
    a = ((3, 4, 5), transposed((3, 4, 5)))
    p = plan_of(a, ((3, 5, 6), (0, 6, 1)))
    assert (p.op_a, p.lda) == (L.T, 4)
    assert p.launches == (L.Launch(0, 0, 0, 3, 20, 0, 24),)
    # batches of 2 x 1 against 1 x 3: a's stride does not collapse over
    # both, so the outer dimension is a loop of two calls
    p = plan_of(((2, 1, 4, 5), None), ((3, 5, 6), None))
    assert p.launches == (L.Launch(0, 0, 0, 3, 0, 30, 24), L.Launch(20, 0, 72, 3, 0, 30, 24))
    # a batch of every other matrix (a[::2]): a stride of two matrices
    p = plan_of(((3, 4, 5), (40, 5, 1)), ((3, 5, 6), None))
    assert p.launches == (L.Launch(0, 0, 0, 3, 40, 30, 24),)
    # an empty batch: nothing to launch
    assert plan_of(((0, 4, 5), None), ((5, 6), None)).launches == ()


def test_plan_of_vectors():
    p = plan_of(((5,), None), ((5, 6), None))          # row @ matrix
    assert p.shapes.result == (6,) and (p.m, p.n, p.k) == (1, 6, 5)
    p = plan_of(((4, 5), None), ((5,), None))          # matrix @ column
    assert p.shapes.result == (4,) and (p.m, p.n, p.op_b, p.ldb) == (4, 1, L.N, 1)
    p = plan_of(((5,), None), ((5,), None))            # dot
    assert p.shapes.result == () and (p.m, p.n, p.k) == (1, 1, 5)
    p = plan_of(((5,), (3,)), ((2, 5, 6), None))       # a strided row over a batch
    assert (p.op_a, p.lda, p.shapes.result) == (L.T, 3, (2, 6))
    assert p.launches == (L.Launch(0, 0, 0, 2, 0, 30, 6),)


def test_plan_copies_only_what_maps_onto_nothing():
    p = plan_of(((4, 5), (0, 1)), ((5, 6), None))
    assert list(p.copies) == ["a"] and "maps onto no layout pg_gemm reads" in p.copies["a"]
    p = plan_of(((4, 5), None), ((5, 6), (2, 2)), ((4, 6), (12, 2)))
    assert list(p.copies) == ["b", "out"]
    # A study kernel reads op N, N and one GEMM: op T is copied, a batch looped.
    p = plan_of(((4, 5), transposed((4, 5))), ((5, 6), None), any_layout=False,
                variant="cp_async")
    assert p.copies == {"a": "a is read transposed (op T), which cp_async does not take "
                             "(op N, N and one GEMM)"}
    p = plan_of(((3, 4, 5), (20, 5, 1)), ((3, 5, 6), None), any_layout=False)
    assert not p.copies and len(p.launches) == 3
    assert all(launch.batch == 1 for launch in p.launches)
    assert [launch.offset_b for launch in p.launches] == [0, 30, 60]


class CopyingKind(_arrays.Kind):
    """A kind that can copy and allocate (made-up addresses), to see what
    matmul copies, and that it says so, without a GPU."""
    what = "a fake array"

    def __init__(self):
        self.copied, self.next = [], 8 * GiB

    def describe(self, x, name, writable=False):
        return _arrays.from_interface(name, x, 0, writable)

    def fresh(self, shape):
        self.next += GiB
        return Fake(shape, ptr=self.next)

    def copy(self, x, name):
        self.copied.append(name)
        return self.fresh(x.__cuda_array_interface__["shape"])

    def empty(self, shape, device):
        return self.fresh(shape)

    def run(self, device, arrays, launch):
        return launch(0)


def test_copies_say_so_with_copy_warning(no_gpu):
    kind = CopyingKind()
    expanded = Fake((4, 5), strides=(0, 4))
    # Silent unless asked for: Python's default filters ignore ResourceWarning.
    assert issubclass(pipegemm.CopyWarning, ResourceWarning)
    with pytest.warns(pipegemm.CopyWarning, match=r"^a \(4 x 5, strides \(0, 1\) in elements\) "
                      r"maps onto no layout pg_gemm reads .*: pipegemm\.matmul copies it$"):
        with pytest.raises(pipegemm.Error, match="PG_ERR_NO_DEVICE"):
            pipegemm._execute(kind, expanded, B, None, 1.0, 0.0, "auto", 0)
    assert kind.copied == ["a"]
    # A transposed view is taken as it is: no copy, no warning.
    kind = CopyingKind()
    with warnings.catch_warnings():
        warnings.simplefilter("error", pipegemm.CopyWarning)
        with pytest.raises(pipegemm.Error, match="PG_ERR_NO_DEVICE"):
            pipegemm._execute(kind, Fake((4, 5), strides=(4, 16)), B, None, 1.0, 0.0, "auto", 0)
        # and the warning, made an error, stops the call before any copy
        with pytest.raises(pipegemm.CopyWarning):
            pipegemm._execute(kind, expanded, B, None, 1.0, 0.0, "auto", 0)
    assert kind.copied == []


def test_out_in_a_batch_beside_a():
    # out and a, batches in one buffer: the same matrices, or interleaved ones.
    a = Fake((2, 4, 5), strides=(160, 20, 4))
    with pytest.raises(ValueError, match="^out overlaps a"):
        pipegemm.matmul(a, B, out=Fake((2, 4, 6), strides=(160, 24, 4), ptr=GiB + 80))
    a_rows = Fake((2, 4, 5), strides=(192, 48, 4))   # rows of 12 floats: a in 0..4
    out_rows = Fake((2, 4, 6), strides=(192, 48, 4), ptr=GiB + 24)  # out in 6..11
    assert _arrays.shares(_arrays.from_interface("out", out_rows, 0, True),
                          _arrays.from_interface("a", a_rows, 0, False)) is False


# ---- the ctypes declarations against the ABI record ----------------------------------------------

def abi_record():
    path = os.path.join(REPO, "tests", "abi", f"libpipegemm.so.{_library.DECLARED[0]}."
                                              f"{_library.DECLARED[1]}.txt")
    fields = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            parts = line.split()
            if len(parts) == 3 and "." in parts[0] and not line.startswith("#"):
                fields[parts[0]] = (int(parts[1]), int(parts[2]))
    return fields


@pytest.mark.parametrize("struct, cls", [("pg_gemm_desc", _library.GemmDesc),
                                          ("pg_variant_info", _library.VariantInfo)])
def test_structures_match_the_abi_record(struct, cls):
    record = {name.split(".", 1)[1]: at for name, at in abi_record().items()
              if name.startswith(struct + ".")}
    assert record, f"tests/abi has no fields of {struct}"
    declared = {name: (getattr(cls, name).offset, getattr(cls, name).size)
                for name, _ in cls._fields_}
    assert declared == record


def test_gemm_desc_starts_as_pg_gemm_desc_init():
    desc = _library.GemmDesc()
    assert desc.size == ctypes.sizeof(_library.GemmDesc) == 120
    assert (desc.op_a, desc.op_b, desc.alpha, desc.beta, desc.batch) == (0, 0, 1.0, 0.0, 1)


# ---- what the wheel installs ---------------------------------------------------------------------

def build_tree():
    """The CMake build folder of the library under test, or skip."""
    library = os.environ.get(_library.ENV)
    folder = os.path.dirname(os.path.realpath(library)) if library else None
    if not folder or not os.path.isfile(os.path.join(folder, "CMakeCache.txt")):
        pytest.skip("PIPEGEMM_LIBRARY is not in a CMake build folder (run.py host --library "
                    "build/libpipegemm.so sets it)")
    cmake = shutil.which("cmake")
    if cmake is None:
        pytest.skip("cmake is not on PATH")
    return folder, cmake


def runpath(library):
    """The library's DT_RUNPATH (or DT_RPATH), read from its ELF dynamic
    section (64-bit little-endian), or None."""
    import struct
    with open(library, "rb") as f:
        data = f.read()
    assert data[:4] == b"\x7fELF" and data[4] == 2 and data[5] == 1
    shoff, = struct.unpack_from("<Q", data, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", data, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", data, shoff + i * shentsize)
                for i in range(shnum)]
    for section in sections:
        if section[1] != 6:  # SHT_DYNAMIC
            continue
        strtab = sections[section[6]]
        offset, size = section[4], section[5]
        for at in range(offset, offset + size, 16):
            tag, value = struct.unpack_from("<qQ", data, at)
            if tag in (15, 29):  # DT_RPATH, DT_RUNPATH
                start = strtab[4] + value
                return data[start:data.index(b"\0", start)].decode()
    return None


def test_the_wheels_component(tmp_path):
    # What CMake installs into the wheel (component python), from this
    # build: the library, relocatable, and the version; then the package
    # beside them, imported from elsewhere, loads its own library.
    folder, cmake = build_tree()
    subprocess.run([cmake, "--build", folder, "--target", "pipegemm_python"], check=True,
                   capture_output=True)
    site_dir = tmp_path / "site"
    subprocess.run([cmake, "--install", folder, "--component", "python", "--prefix",
                    str(site_dir)], check=True, capture_output=True)
    installed = sorted(str(p.relative_to(site_dir)) for p in site_dir.rglob("*") if p.is_file())
    assert installed == ["pipegemm/_version.py", "pipegemm/libpipegemm.so"]
    paths = runpath(site_dir / "pipegemm" / "libpipegemm.so")
    assert paths, "no RUNPATH: NVIDIA's pip packages would not be found"
    for path in paths.split(":"):
        assert path.startswith("$ORIGIN/"), paths
    version = "%d.%d.%d" % header_version()
    assert (site_dir / "pipegemm" / "_version.py").read_text().endswith(
        f'__version__ = "{version}"\n')
    for entry in os.listdir(os.path.join(PYTHON, "pipegemm")):
        if entry.endswith(".py"):
            shutil.copy(os.path.join(PYTHON, "pipegemm", entry), site_dir / "pipegemm")
    done = run_python("import pipegemm; print(pipegemm.library_path); print(pipegemm.__version__)",
                      {}, tmp_path, str(site_dir))
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(site_dir / "pipegemm" / "libpipegemm.so"), version]


def test_a_built_wheel():
    # PIPEGEMM_TEST_WHEEL=dist/pipegemm-*.whl (pip wheel ./python): its files,
    # and no path of this checkout or its build in any of them.
    wheel = os.environ.get("PIPEGEMM_TEST_WHEEL")
    if not wheel:
        pytest.skip("PIPEGEMM_TEST_WHEEL names no wheel (built by python3 -m pip wheel "
                    "./python: minutes of nvcc)")
    version = "%d.%d.%d" % header_version()
    assert os.path.basename(wheel).startswith(f"pipegemm-{version}-py3-none-")
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        expected = {"pipegemm/libpipegemm.so", "pipegemm/_version.py", "pipegemm/__init__.py",
                    "pipegemm/_arrays.py", "pipegemm/_layout.py", "pipegemm/_library.py",
                    "pipegemm/torch.py", "pipegemm/jax.py"}
        assert expected <= names, expected - names
        for name in names:
            data = z.read(name)
            for path in (REPO, os.path.realpath(REPO), "/tmp/"):
                assert path.encode() not in data, f"{name} holds {path}"
        library = z.read("pipegemm/libpipegemm.so")
    assert b"$ORIGIN/../nvidia/" in library
