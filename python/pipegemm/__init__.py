"""pipegemm from Python: pipegemm.matmul on PyTorch, CuPy and JAX arrays,
with torch.matmul's semantics, through libpipegemm.so (ctypes; the package
compiles nothing of its own).

    import torch, pipegemm
    c = pipegemm.matmul(a, b)                        # a @ b: 1-D, 2-D, batched
    pipegemm.matmul(x, w.T)                          # a transposed view: no copy
    pipegemm.matmul(a, b, out=c, alpha=2, beta=1)    # c = 2 a @ b + c, in place
    pipegemm.matmul(a, b, variant="auto_emulated")   # any entry of the registry
    with pipegemm.torch.use(precision="emulated"):   # a model's float32 matmuls
        model(x)
    pipegemm.jax.matmul(x, y)                        # under jax.jit, grad, vmap

docs/python.md: installing, where the library is looked for, the layouts
taken without a copy, streams, torch.compile and autograd, JAX.
"""

import ctypes
import math
import operator
import os
import re
import sys
import warnings
from typing import NamedTuple

from . import _arrays, _layout
from ._library import LIB, PATH, text
from . import _library

__all__ = ["matmul", "variants", "Variant", "Error", "ArgumentError", "CopyWarning",
           "version", "library_path", "__version__"]

version = text(LIB.pg_version_string())  # the library's, "0.5.0"
library_path = PATH                       # the file it was loaded from


def _package_version():
    """The package's version: _version.py, which CMake writes into the wheel
    from include/pipegemm.h, or, run from a checkout, that header itself."""
    try:
        from ._version import __version__ as written
        return written
    except ImportError:
        pass
    tree = _library.checkout()
    if tree is not None:
        with open(os.path.join(tree, "include", "pipegemm.h"), encoding="utf-8") as f:
            header = f.read()
        parts = [re.search(rf"^#define PIPEGEMM_VERSION_{p} +([0-9]+)$", header, re.M)
                 for p in ("MAJOR", "MINOR", "PATCH")]
        if all(parts):
            return ".".join(part.group(1) for part in parts)
    return version


__version__ = _package_version()


class CopyWarning(ResourceWarning):
    """pipegemm.matmul copied an operand whose strides map onto no layout
    pg_gemm reads (or a layout the variant does not take) before running.
    A ResourceWarning, so Python's default filters keep it silent (autograd's
    expanded gradients, such as loss.sum()'s, are copied in every backward):
    `warnings.simplefilter("always", pipegemm.CopyWarning)` shows each one,
    "error" makes it an error, `python -W default` shows every such one."""


class Error(RuntimeError):
    """A status the library returned.

    status       the pg_status value (negative)
    status_name  its name, "PG_ERR_UNSUPPORTED"
    detail       pg_last_error_detail(): which rule the call broke, or why
                 there is no device ("" where the status says it all)
    cuda_error   pg_last_cuda_error(), the cudaError_t behind a CUDA,
                 no-device, no-memory or architecture status (0 if none)
    """

    def __init__(self, status, detail, cuda_error=0):
        self.status = status
        self.status_name = text(LIB.pg_status_name(status))
        self.detail = detail
        self.cuda_error = cuda_error
        message = text(LIB.pg_strerror(status))
        if detail:
            message += f": {detail}"
        super().__init__(f"{message} ({self.status_name})")


class ArgumentError(Error, ValueError):
    """PG_ERR_INVALID_ARG, PG_ERR_UNKNOWN_VARIANT, PG_ERR_STAGES: the call's
    arguments, caught by `except ValueError` too."""


_ARGUMENT_STATUSES = (_library.ERR_INVALID_ARG, _library.ERR_UNKNOWN_VARIANT,
                      _library.ERR_STAGES)


def _raise_status(status):
    """The exception for a status just returned on this thread."""
    cls = ArgumentError if status in _ARGUMENT_STATUSES else Error
    raise cls(status, _library.detail(), LIB.pg_last_cuda_error())


class Variant(NamedTuple):
    """One entry of the registry (pg_variant_info)."""
    name: str            # what matmul's variant= takes
    kind: str            # "kernel", "library reference", "selector"
    precision: str       # "strict", "emulated", "tf32": the error bound it is held to
    technique: str       # how it hides global->shared latency, one line
    source: str          # the write-up it comes from, "" for none
    min_cc: int          # minimum compute capability, major*10+minor
    min_stages: int      # stage counts it takes: min_stages..max_stages,
    max_stages: int      # all 0 for a selector
    default_stages: int  # what stages=0 means
    tile_m: int          # block tile, 0 when not one of pipegemm's kernels
    tile_n: int
    tile_k: int
    threads: int         # threads per block, 0 when not one of pipegemm's kernels
    layouts: str         # "any" (every op(A), op(B) and batch), "NN" (op N, N, one GEMM)
                         # or "some" (op N, N and some others; the library refuses the rest)


_LAYOUT_WORDS = {_library.LAYOUT_NN: "NN", _library.LAYOUT_ANY: "any", _library.LAYOUT_SOME: "some"}


def _registry():
    entries = []
    for index in range(LIB.pg_variant_count()):
        info = LIB.pg_variant_at(index).contents
        entries.append(Variant(
            text(info.name), text(LIB.pg_kind_name(info.kind)),
            text(LIB.pg_precision_name(info.precision)), text(info.technique),
            text(info.source), info.min_cc, info.min_stages, info.max_stages,
            info.default_stages, info.tile_m, info.tile_n, info.tile_k, info.threads,
            _LAYOUT_WORDS.get(info.layouts, "NN")))
    return tuple(entries)


_VARIANTS = _registry()


def variants():
    """Every entry of the registry, in its order (`pipegemm list`'s)."""
    return _VARIANTS


def _int(name, value):
    try:
        value = operator.index(value)
    except TypeError:
        raise TypeError(f"{name} must be an int, not {type(value).__name__}") from None
    if not -2**31 <= value < 2**31:
        raise ValueError(f"{name} = {value} does not fit the library's C int")
    return value


def _real(name, value):
    """value as the C float the library takes: a finite one that would round
    to infinity is refused; inf and nan pass as they are."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise TypeError(f"{name} must be a real number, not {type(value).__name__}") from None
    except OverflowError:  # an int past even a double's range
        number = value
    else:
        if not math.isfinite(number) or math.isfinite(ctypes.c_float(number).value):
            return number
    raise ValueError(f"{name} = {number!r} would round to infinity as the library's C float "
                     f"(float32, largest finite value 3.4028234663852886e+38)")


def _arguments(variant, stages, alpha, beta):
    """The checked (variant bytes, stages, alpha, beta), and the registry
    entry: an unknown name or stage count is the library's refusal."""
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a str, not {type(variant).__name__}")
    if "\0" in variant:
        raise ValueError("variant holds a NUL character")
    name = variant.encode()
    stages = _int("stages", stages)
    alpha = _real("alpha", alpha)
    beta = _real("beta", beta)
    # No work: the library checks the name and the stage count, nothing else.
    status = LIB.pg_gemm(name, stages, ctypes.byref(_library.GemmDesc(lda=1, ldb=1, ldc=1)),
                         None)
    if status != _library.OK:
        _raise_status(status)
    return name, stages, alpha, beta, LIB.pg_variant_find(name).contents


def _kind(a, b, out):
    kind = _arrays.kind_of(a, "a")
    for other, label in ((b, "b"), (out, "out")):
        if other is None and label == "out":
            continue
        other_kind = _arrays.kind_of(other, label)
        if other_kind is not kind:
            raise TypeError(f"a is {kind.what} and {label} {other_kind.what}: "
                            f"pipegemm.matmul takes arrays of one kind")
    return kind


def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, variant="auto", stages=0):
    """out = alpha * (a @ b) + beta * out on the GPU, with torch.matmul's
    semantics, by one of pipegemm's variants.

    a, b: float32 CUDA arrays of one kind (torch.Tensor, cupy.ndarray,
    jax.Array, or, with out=, any object with __cuda_array_interface__), of
    1 dimension or more: 1-D a is a row and 1-D b a column (that dimension
    is dropped from the result), 2-D ones are matrices, and the dimensions
    before the last two are a batch, broadcast against each other.

    Strides are taken as they are, without a copy, wherever they map onto
    pg_gemm: each matrix row-major with a leading dimension (op N) or the
    transpose of one (op T: a transposed view, a column-major array), each
    batch dimension a stride (0 for a broadcast: an expand()ed tensor) or a
    loop of calls. A matrix whose strides map onto nothing (overlapping
    rows, no unit stride) is copied first, and CopyWarning says so. A study
    kernel (Variant.layouts "NN") reads op N, N and one GEMM alone: an op T
    operand is copied for it, and a batch is a loop. So is an entry of some
    layouts ("some": skinny_ffma) named here (the selectors
    run skinny_ffma's other layouts where it takes them).

    out: the result's shape, of the same kind, on the same device, sharing
    no byte with a or b; written in place and returned, read only where
    beta != 0. Stored transposed, it is taken as it is (the product is
    turned around: C^T = op(B)^T op(A)^T). Without out, the result is a new
    row-major array of a's kind (and beta must be 0). JAX arrays cannot be
    out (they are immutable).

    alpha, beta: rounded to float32, the library's C float; a finite value
    that would round to infinity is refused, inf and nan pass as given.
    variant: an entry's name (variants()); stages: its stage count, 0 for
    its default.

    torch tensors go through the custom operator torch.ops.pipegemm.matmul
    (pipegemm/torch.py): autograd, torch.compile and CUDA graphs. The call
    is enqueued on the arrays' current stream (torch:
    torch.cuda.current_stream(device); CuPy: cupy.cuda.get_current_stream())
    and returns without waiting. JAX arrays go through XLA's FFI
    (pipegemm/jax.py) where the library has the handler, on XLA's stream,
    under jit, grad and vmap. A refusal of the library raises Error
    (ArgumentError for arguments), with pg_last_error_detail() in it.
    """
    kind = _kind(a, b, out)
    if kind is _arrays.TORCH:
        from . import torch as _torch
        return _torch.matmul(a, b, out=out, alpha=alpha, beta=beta, variant=variant,
                             stages=stages)
    if kind is _arrays.JAX and _library.has_xla_handler():
        from . import jax as _jax
        if out is not None:
            _arrays.JAX.describe(out, "out", writable=True)
        if beta != 0.0:
            raise ValueError(f"beta = {beta} scales out (C = alpha A B + beta C): JAX arrays "
                             f"take no out")
        return _jax.matmul(a, b, alpha=alpha, variant=variant, stages=stages)
    return _execute(kind, a, b, out, alpha, beta, variant, stages)


def _launch_all(p, name, stages, alpha, beta, A, B, C, stream):
    """Every pg_gemm call of a Plan, on `stream`."""
    first, second = (B, A) if p.swapped else (A, B)
    for launch in p.launches:
        desc = _library.GemmDesc(
            op_a=p.op_a, op_b=p.op_b, m=p.m, n=p.n, k=p.k, alpha=alpha, beta=beta,
            a=first.ptr + launch.offset_a * _arrays.FLOAT32,
            b=second.ptr + launch.offset_b * _arrays.FLOAT32,
            c=C.ptr + launch.offset_c * _arrays.FLOAT32,
            lda=p.lda, ldb=p.ldb, ldc=p.ldc, batch=launch.batch, stride_a=launch.stride_a,
            stride_b=launch.stride_b, stride_c=launch.stride_c)
        status = LIB.pg_gemm(name, stages, ctypes.byref(desc), stream)
        if status != _library.OK:
            _raise_status(status)


def _execute(kind, a, b, out, alpha, beta, variant, stages, warn_level=3):
    """matmul on arrays of `kind`, on its current stream (the torch operator's
    implementation calls this too)."""
    name, stages, alpha, beta, info = _arguments(variant, stages, alpha, beta)
    A = kind.describe(a, "a")
    B = kind.describe(b, "b")
    if A.device != B.device:
        raise ValueError(f"a is on cuda:{A.device} and b on cuda:{B.device}: pipegemm.matmul "
                         f"takes arrays on one device")
    C = None
    if out is None:
        if beta != 0.0:
            raise ValueError(f"beta = {beta} scales out (C = alpha A B + beta C): pass out=")
        if not kind.allocates:
            raise TypeError(f"pipegemm.matmul makes its result for torch, CuPy and JAX "
                            f"arrays; for {kind.what} pass out=")
    else:
        C = kind.describe(out, "out", writable=True)
        if C.device != A.device:
            raise ValueError(f"out is on cuda:{C.device} and a on cuda:{A.device}: "
                             f"pipegemm.matmul takes arrays on one device")
    any_layout = info.layouts == _library.LAYOUT_ANY
    p = _layout.plan(A.shape, A.strides, B.shape, B.strides,
                     None if C is None else C.shape, None if C is None else C.strides,
                     any_layout, variant)
    copies = p.copies
    if copies and not kind.allocates:
        label, why = next(iter(copies.items()))
        raise ValueError(f"{why}, and pipegemm.matmul cannot copy {kind.what}: pass a "
                         f"row-major copy of {label}")
    if C is not None:
        for operand in (A, B):
            if operand.name in copies or "out" in copies:
                continue  # a copy is read, or out is written from one at the end
            shared = _arrays.shares(C, operand)
            if shared is _arrays.MAYBE:
                raise ValueError(
                    f"out may overlap {operand.name}: their matrices interleave in ways "
                    f"pipegemm.matmul does not work out (more than {_arrays.ROWS_CHECKED} rows "
                    f"or {_arrays.PAIRS_CHECKED} pairs of matrices within each other's span)")
            if shared:
                raise ValueError(f"out overlaps {operand.name}: the library reads "
                                 f"{operand.name} while it writes out")
    for label, why in copies.items():
        warnings.warn(f"{why}: pipegemm.matmul copies it", CopyWarning, stacklevel=warn_level)

    def launch(stream):
        xa, xb, target = a, b, out
        if "a" in copies:
            xa = kind.copy(a, "a")
        if "b" in copies:
            xb = kind.copy(b, "b")
        if out is None:
            target = kind.empty(p.shapes.result, A.device)
            written = kind.describe_result(target)
        elif "out" in copies:
            target = kind.copy(out, "out") if beta != 0.0 else kind.empty(C.shape, A.device)
            written = kind.describe(target, "out", writable=True)
        else:
            written = C
        ra = kind.describe(xa, "a") if xa is not a else A
        rb = kind.describe(xb, "b") if xb is not b else B
        q = p if not copies else _layout.plan(ra.shape, ra.strides, rb.shape, rb.strides,
                                              written.shape, written.strides, any_layout,
                                              variant)
        _launch_all(q, name, stages, alpha, beta, ra, rb, written, stream)
        if out is not None and target is not out:
            kind.copy_back(out, target)
            return out
        return kind.finish(target)

    operands = [A, B] if C is None else [A, B, C]
    return kind.run(A.device, operands, launch)


def __getattr__(name):
    """pipegemm.torch and pipegemm.jax, imported at their first use."""
    if name in ("torch", "jax"):
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'pipegemm' has no attribute {name!r}")


# torch already imported: its operators now, so that torch.compile finds
# them registered rather than importing while it traces.
if "torch" in sys.modules:
    from . import torch as _torch_operators  # noqa: E402,F401
