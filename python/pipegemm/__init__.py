"""pipegemm from Python: pipegemm.matmul on PyTorch, CuPy and JAX arrays,
through libpipegemm.so (ctypes; no compiled code of the package's own).

    import torch, pipegemm
    c = pipegemm.matmul(a, b)                        # a new tensor: A B
    pipegemm.matmul(a, b, out=c, alpha=2, beta=1)    # c = 2 A B + c, in place
    pipegemm.matmul(a, b, variant="auto_emulated")   # any entry of the registry
    [v.name for v in pipegemm.variants()]

docs/python.md: where the library is looked for, the arrays taken, the
stream a call runs on, graph capture, threads and errors.
"""

import ctypes
import math
import operator
from typing import NamedTuple

from . import _arrays
from ._library import LIB, PATH, text
from . import _library

__all__ = ["matmul", "variants", "Variant", "Error", "ArgumentError", "version",
           "library_path"]

version = text(LIB.pg_version_string())  # the library's, "0.5.0"
library_path = PATH                       # the file it was loaded from


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


def _registry():
    entries = []
    for index in range(LIB.pg_variant_count()):
        info = LIB.pg_variant_at(index).contents
        entries.append(Variant(
            text(info.name), text(LIB.pg_kind_name(info.kind)),
            text(LIB.pg_precision_name(info.precision)), text(info.technique),
            text(info.source), info.min_cc, info.min_stages, info.max_stages,
            info.default_stages, info.tile_m, info.tile_n, info.tile_k, info.threads))
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


def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, variant="auto", stages=0):
    """C = alpha * A B + beta * C on the GPU with one of pipegemm's variants.

    a (M x K) and b (K x N): two-dimensional float32 CUDA arrays of one kind:
    torch.Tensor, cupy.ndarray, jax.Array, or (with out=) any object with
    __cuda_array_interface__. Each must be row-major with a leading
    dimension: element strides (ld, 1) with ld >= its width, as a
    contiguous array or a view of columns of one. Other layouts (a
    transposed view, column-major) are refused with ValueError; nothing is
    copied.

    out: M x N, of the same kind, row-major, on the same device, sharing no
    byte with a or b (views of one buffer that interleave without sharing
    one are taken); written in place and returned. It is read only where
    beta != 0. Without out, the result is a new array of a's kind (and beta
    must be 0). JAX arrays cannot be out (they are immutable).

    alpha, beta: rounded to float32, the library's C float; a finite value
    that would round to infinity is refused, inf and nan pass as given.

    variant: an entry's name (variants()); stages: its stage count, 0 for
    its default.

    The call is enqueued on the arrays' current stream (torch:
    torch.cuda.current_stream(device); CuPy: cupy.cuda.get_current_stream())
    on their device and returns without waiting for it; it can be captured
    into a CUDA graph. JAX inputs are waited for, and so is a JAX result.
    A refusal of the library raises Error (ArgumentError for arguments),
    with pg_last_error_detail() in it.
    """
    if not isinstance(variant, str):
        raise TypeError(f"variant must be a str, not {type(variant).__name__}")
    if "\0" in variant:
        raise ValueError("variant holds a NUL character")
    name = variant.encode()
    stages = _int("stages", stages)
    alpha = _real("alpha", alpha)
    beta = _real("beta", beta)

    kind = _arrays.kind_of(a, "a")
    for other, label in ((b, "b"), (out, "out")):
        if other is None and label == "out":
            continue
        other_kind = _arrays.kind_of(other, label)
        if other_kind is not kind:
            raise TypeError(f"a is {kind.what} and {label} {other_kind.what}: "
                            f"pipegemm.matmul takes arrays of one kind")
    A = kind.describe(a, "a")
    B = kind.describe(b, "b")
    if A.cols != B.rows:
        raise ValueError(f"a is {A.rows} x {A.cols} and b {B.rows} x {B.cols}: a's width "
                         f"must equal b's height")
    if A.device != B.device:
        raise ValueError(f"a is on cuda:{A.device} and b on cuda:{B.device}: pipegemm.matmul "
                         f"takes arrays on one device")
    m, k, n = A.rows, A.cols, B.cols
    C = None
    if out is None:
        if beta != 0.0:
            raise ValueError(f"beta = {beta} scales out (C = alpha A B + beta C): pass out=")
        if not kind.allocates:
            raise TypeError(f"pipegemm.matmul makes its result for torch, CuPy and JAX "
                            f"arrays; for {kind.what} pass out=")
    else:
        C = kind.describe(out, "out", writable=True)
        if (C.rows, C.cols) != (m, n):
            raise ValueError(f"out is {C.rows} x {C.cols}; a {m} x {k} times b {k} x {n} "
                             f"is {m} x {n}")
        if C.device != A.device:
            raise ValueError(f"out is on cuda:{C.device} and a on cuda:{A.device}: "
                             f"pipegemm.matmul takes arrays on one device")
        for operand in (A, B):
            shared = _arrays.overlap(C, operand)
            if shared is _arrays.MAYBE:
                raise ValueError(
                    f"out may overlap {operand.name}: their leading dimensions differ "
                    f"({C.ld} and {operand.ld} floats) and more than {_arrays.ROWS_CHECKED} "
                    f"rows of each lie among the other's, more than pipegemm.matmul checks "
                    f"one by one")
            if shared:
                raise ValueError(f"out overlaps {operand.name}: the library reads "
                                 f"{operand.name} while it writes out")
    kind.check(a, b, out)

    def launch(stream):
        result, target = out, C
        if result is None:
            result = kind.empty(m, n, A.device)
            target = kind.describe_result(result)
        status = LIB.pg_sgemm(name, stages, m, n, k, alpha, A.ptr, A.ld, B.ptr, B.ld, beta,
                              target.ptr, target.ld, stream)
        if status != _library.OK:
            _raise_status(status)
        return kind.finish(result)

    operands = (A, B) if C is None else (A, B, C)
    return kind.run(A.device, operands, launch)
