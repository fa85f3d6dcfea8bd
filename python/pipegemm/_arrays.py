"""The arrays pipegemm.matmul takes, one class per kind: how an array's
pointer, shape and strides are read, which device and stream a call runs
on, how a result or a copy is made; and whether out shares a byte with an
input.

  torch      torch.Tensor: its device, torch.cuda.current_stream(device)
  cupy       cupy.ndarray: its device, cupy.cuda.get_current_stream()
  jax        jax.Array (one GPU), where the library has no XLA handler
             (pipegemm/jax.py runs them through it where it has): read
             through __cuda_array_interface__ once ready
             (block_until_ready); the product is made in a CuPy (else
             torch) buffer on that framework's current stream, waited for,
             and handed to JAX through DLPack (jax.dlpack.from_dlpack)
  interface  any other object with __cuda_array_interface__: the current
             device, the stream the interface names (version 3) or the
             legacy default stream; out= is required, and a layout that
             maps onto nothing is refused (pipegemm cannot make an array of
             a kind it does not know, nor a copy)

No framework is imported here: a kind is recognised only where its module
is already loaded (an array of it exists, so it is).
"""

import importlib
import math
import sys

from . import _layout

INT_MAX = 2**31 - 1
FLOAT32 = 4  # bytes

# overlap() of views with two leading dimensions goes row by row, over this
# many rows at most; past it the answer is MAYBE, which matmul refuses.
ROWS_CHECKED = 4096
MAYBE = "maybe"  # true, as an overlap would be


class Operand:
    """One row-major matrix as stored: `rows` runs of `cols` floats, `ld`
    floats apart, at byte address `ptr` (for the overlap check)."""
    __slots__ = ("name", "ptr", "rows", "cols", "ld")

    def __init__(self, name, ptr, rows, cols, ld):
        self.name, self.ptr, self.rows, self.cols, self.ld = name, ptr, rows, cols, ld

    def extent(self):
        """[first, last) byte addresses it covers; None when empty."""
        if self.rows == 0 or self.cols == 0:
            return None
        return self.ptr, self.ptr + ((self.rows - 1) * self.ld + self.cols) * FLOAT32


class Array:
    """An array as matmul reads it: its data pointer, shape and strides in
    elements, device ordinal (None: the current one) and, for an object
    with __cuda_array_interface__, the stream it names."""
    __slots__ = ("name", "ptr", "shape", "strides", "device", "stream")

    def __init__(self, name, ptr, shape, strides, device, stream=None):
        self.name, self.ptr, self.device, self.stream = name, ptr, device, stream
        self.shape = tuple(int(x) for x in shape)
        self.strides = tuple(int(x) for x in strides)
        for size in self.shape:
            if size > INT_MAX:
                raise ValueError(f"{name} has a dimension of {size}: the library takes at most "
                                 f"{INT_MAX} (a C int)")

    def span(self):
        """[first, last) byte addresses of its elements; None when empty."""
        if 0 in self.shape:
            return None
        low = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s < 0)
        high = sum((n - 1) * s for n, s in zip(self.shape, self.strides) if s > 0)
        return self.ptr + low * FLOAT32, self.ptr + (high + 1) * FLOAT32

    def operands(self):
        """Its distinct matrices as Operands; None where they map onto nothing."""
        found = _layout.matrices(self.shape, self.strides)
        if found is None:
            return None
        return [Operand(self.name, self.ptr + offset * FLOAT32, rows, cols, ld)
                for offset, rows, cols, ld in found]


# shares() enumerates the matrices of batches whose spans meet, at most this
# many pairs; past it the answer is MAYBE.
PAIRS_CHECKED = 4096


def shares(x, y):
    """Whether some byte of Array x is one of Array y's: True, False or MAYBE."""
    sx, sy = x.span(), y.span()
    if sx is None or sy is None or sx[1] <= sy[0] or sy[1] <= sx[0]:
        return False
    if (_layout.count_matrices(x.shape, x.strides) * _layout.count_matrices(y.shape, y.strides)
            > PAIRS_CHECKED):
        return MAYBE
    xs, ys = x.operands(), y.operands()
    if xs is None or ys is None:
        return MAYBE
    found = False
    for p in xs:
        for q in ys:
            answer = overlap(p, q)
            if answer is True:
                return True
            found = found or answer is MAYBE
    return MAYBE if found else False


def _rows_within(ptr, pitch, width, rows, first, last):
    """[i, j): the rows (width bytes at ptr + row * pitch) with a byte in [first, last)."""
    return max(0, (first - width - ptr) // pitch + 1), min(rows, -((ptr - last) // pitch))


def overlap(x, y):
    """Whether some byte of Operand x is one of y's: True or False; MAYBE
    where it was not worked out (two leading dimensions, and more than
    ROWS_CHECKED rows of each within the other's span).

    A view is `rows` runs of `cols` floats, one every `ld`. Row i of x and
    row k of y share a byte iff -width_x < d + i * pitch_x - k * pitch_y <
    width_y, d being x's address less y's (in bytes). With one pitch that is
    a condition on i - k alone, and the smallest i - k above the lower bound
    decides. With two, i * pitch_x - k * pitch_y is a multiple of their gcd,
    which may rule every pair out; else each row of the view with fewer rows
    within the other's span is checked against the first row of the other to
    end past its start (if that one starts past its end, so do all later).
    """
    ex, ey = x.extent(), y.extent()
    if ex is None or ey is None or ex[1] <= ey[0] or ey[1] <= ex[0]:
        return False
    (px, lx, wx, rx), (py, ly, wy, ry) = ((v.ptr, v.ld * FLOAT32, v.cols * FLOAT32, v.rows)
                                          for v in (x, y))
    if rx == 1:  # one row has no pitch of its own: it takes the other's
        lx = ly
    elif ry == 1:
        ly = lx
    d = px - py
    if lx == ly:
        t = max((-wx - d) // lx + 1, 1 - ry)  # i - k runs from 1 - ry to rx - 1
        return t < rx and d + t * lx < wy
    g = math.gcd(lx, ly)
    if d + ((-wx - d) // g + 1) * g >= wy:
        return False
    xs, ys = _rows_within(px, lx, wx, rx, *ey), _rows_within(py, ly, wy, ry, *ex)
    if xs[1] - xs[0] > ys[1] - ys[0]:
        (px, lx, wx, xs), (py, ly, wy, ry) = (py, ly, wy, ys), (px, lx, wx, rx)
    if xs[1] - xs[0] > ROWS_CHECKED:
        return MAYBE
    for i in range(*xs):
        start = px + i * lx
        k = max(0, (start - wy - py) // ly + 1)
        if k < ry and py + k * ly < start + wx:
            return True
    return False


def _module(name):
    return sys.modules.get(name)


def element_strides(name, byte_strides, shape):
    """Strides in bytes as strides in elements; that of a dimension of size 1
    (or 0), which no address depends on, as 0."""
    strides = []
    for s, size in zip(byte_strides, shape):
        if size <= 1:
            s = 0
        elif s % FLOAT32:
            raise ValueError(f"{name}'s strides {tuple(byte_strides)} (bytes) are not whole "
                             f"float32 elements")
        strides.append(s // FLOAT32)
    return strides


def contiguous_strides(shape):
    strides, step = [], 1
    for size in reversed(shape):
        strides.insert(0, step)
        step *= max(1, size)
    return strides


def from_interface(name, x, device, writable):
    """An Array from x.__cuda_array_interface__ (version 2 or 3)."""
    try:
        cai = x.__cuda_array_interface__
    except Exception as err:  # a framework's own reason (a tracer, a deleted buffer)
        raise TypeError(f"{name}: reading its __cuda_array_interface__ failed: {err}") from err
    typestr = cai.get("typestr")
    if typestr not in ("<f4", "=f4") or sys.byteorder != "little":
        raise ValueError(f"{name}'s elements are {typestr!r}: pipegemm.matmul takes float32 "
                         f"('<f4')")
    shape = tuple(cai.get("shape", ()))
    if cai.get("mask") is not None:
        raise ValueError(f"{name} has a mask: pipegemm.matmul takes plain arrays")
    ptr, readonly = cai["data"]
    if writable and readonly:
        raise ValueError(f"{name} is read-only (its __cuda_array_interface__ says so)")
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        strides = contiguous_strides(shape)
    else:
        strides = element_strides(name, strides, shape)
    return Array(name, ptr or 0, shape, strides, device, cai.get("stream"))


def _broadcast_index(shape, strides):
    """An index that takes one element of each batch dimension of stride 0
    (a broadcast), and all of every other: what a copy must hold."""
    return tuple(slice(0, 1) if d < len(shape) - 2 and strides[d] == 0 and shape[d] > 1
                 else slice(None) for d in range(len(shape)))


class Kind:
    """What matmul needs of one kind of array."""
    what = ""             # "a torch tensor", for messages
    allocates = True      # can make its own result (and copies)

    def describe(self, x, name, writable=False):
        raise NotImplementedError

    def run(self, device, arrays, launch):
        """launch(stream) on `device`, the current device while it runs."""
        raise NotImplementedError

    def empty(self, shape, device):
        raise NotImplementedError

    def describe_result(self, result):
        """The Array of what empty() made."""
        return self.describe(result, "out", writable=True)

    def copy(self, x, name):
        """x in a layout every matrix of which maps (row-major matrices; a
        broadcast batch dimension stays one)."""
        raise TypeError(f"pipegemm.matmul cannot copy {self.what}: pass {name} in a layout "
                        f"that maps (a row-major copy)")

    def copy_back(self, out, result):
        """Writes `result` (a copy of out's layout) into out."""
        raise NotImplementedError

    def finish(self, result):
        """What matmul returns for the result it wrote."""
        return result


class Torch(Kind):
    what = "a torch tensor"

    def describe(self, t, name, writable=False):
        torch = _module("torch")
        if t.layout is not torch.strided:
            raise ValueError(f"{name} is a {t.layout} tensor: pipegemm.matmul takes dense "
                             f"(torch.strided) tensors")
        if t.device.type != "cuda":
            raise ValueError(f"{name} is on {t.device}: pipegemm.matmul takes CUDA tensors")
        if t.dtype is not torch.float32:
            raise ValueError(f"{name} is {t.dtype}: pipegemm.matmul takes torch.float32")
        return Array(name, t.data_ptr(), t.shape, t.stride(), t.device.index)

    def run(self, device, arrays, launch):
        torch = _module("torch")
        if torch.cuda.current_device() == device:
            return launch(torch.cuda.current_stream(device).cuda_stream)
        with torch.cuda.device(device):
            return launch(torch.cuda.current_stream(device).cuda_stream)

    def empty(self, shape, device):
        torch = _module("torch")
        return torch.empty(shape, dtype=torch.float32, device=f"cuda:{device}")

    def copy(self, t, name):
        return t[_broadcast_index(t.shape, t.stride())].contiguous().expand(t.shape)

    def copy_back(self, out, result):
        out.copy_(result)

    def synchronize(self):
        _module("torch").cuda.current_stream().synchronize()


class Cupy(Kind):
    what = "a CuPy array"

    def describe(self, x, name, writable=False):
        cupy = _module("cupy")
        if x.dtype != cupy.float32:
            raise ValueError(f"{name} is {x.dtype}: pipegemm.matmul takes float32")
        return Array(name, x.data.ptr, x.shape, element_strides(name, x.strides, x.shape),
                     x.device.id)

    def run(self, device, arrays, launch):
        cupy = _module("cupy")
        with cupy.cuda.Device(device):
            return launch(cupy.cuda.get_current_stream().ptr)

    def empty(self, shape, device):
        cupy = _module("cupy")
        with cupy.cuda.Device(device):
            return cupy.empty(shape, dtype=cupy.float32)

    def copy(self, x, name):
        cupy = _module("cupy")
        strides = element_strides(name, x.strides, x.shape)
        return cupy.broadcast_to(cupy.ascontiguousarray(x[_broadcast_index(x.shape, strides)]),
                                 x.shape)

    def copy_back(self, out, result):
        out[...] = result

    def synchronize(self):
        _module("cupy").cuda.get_current_stream().synchronize()


class Jax(Kind):
    """JAX arrays outside jit where the library has no XLA handler: read in
    place once ready, the result made in a CuPy (else torch) buffer, waited
    for, and handed to JAX through DLPack."""
    what = "a JAX array"

    def describe(self, x, name, writable=False):
        if writable:
            raise TypeError("out cannot be a JAX array: they are immutable (leave out= away "
                            "and take the result)")
        try:
            devices = x.devices()
        except Exception as err:  # a tracer: inside jax.jit, grad, vmap
            first_line = str(err).strip().split("\n")[0]
            raise TypeError(f"{name} is a JAX value without a buffer ({type(x).__name__}: "
                            f"{first_line}); this libpipegemm has no XLA handler "
                            f"(pg_xla_matmul), so pipegemm.matmul runs on concrete JAX arrays "
                            f"only, outside jax.jit") from err
        if len(devices) != 1:
            raise ValueError(f"{name} is spread over {len(devices)} devices: pipegemm.matmul "
                             f"takes an array on one GPU")
        device = next(iter(devices))
        if device.platform not in ("gpu", "cuda"):
            raise ValueError(f"{name} is on {device}: pipegemm.matmul takes arrays on a "
                             f"CUDA GPU")
        if str(x.dtype) != "float32":
            raise ValueError(f"{name} is {x.dtype}: pipegemm.matmul takes float32")
        x.block_until_ready()  # JAX's stream is its own: wait for what writes x
        ordinal = getattr(device, "local_hardware_id", None)
        return from_interface(name, x, device.id if ordinal is None else ordinal,
                              writable=False)

    @staticmethod
    def helper():
        """The framework that holds a JAX result's memory: CuPy, else torch."""
        for name, kind in (("cupy", CUPY), ("torch", TORCH)):
            try:
                importlib.import_module(name)
            except ImportError:
                continue
            return kind
        raise TypeError("this libpipegemm has no XLA handler (pg_xla_matmul), and without it "
                        "a JAX result is made in a CuPy or PyTorch buffer, and neither imports "
                        "here: install one, or build the library where jax is installed")

    def run(self, device, arrays, launch):
        return self.helper().run(device, arrays, launch)

    def empty(self, shape, device):
        return self.helper().empty(shape, device)

    def describe_result(self, result):
        return self.helper().describe(result, "out", writable=True)

    def finish(self, result):
        # Inside run(): the helper's current stream is the call's.
        self.helper().synchronize()
        return _module("jax").dlpack.from_dlpack(result)


class Interface(Kind):
    what = "an object with __cuda_array_interface__"
    allocates = False

    def describe(self, x, name, writable=False):
        return from_interface(name, x, None, writable)

    def run(self, device, arrays, launch):
        streams = {x.stream for x in arrays if x.stream is not None}
        if len(streams) > 1:
            names = ", ".join(f"{x.name}'s {x.stream}" for x in arrays if x.stream is not None)
            raise ValueError(f"the arrays name different streams ({names}): pipegemm.matmul "
                             f"runs on one; synchronise them first")
        # Interface version 3: 1 is the legacy default stream, 2 the
        # per-thread one, as the runtime's handles; none named: legacy.
        return launch(streams.pop() if streams else 0)


TORCH, CUPY, JAX, INTERFACE = Torch(), Cupy(), Jax(), Interface()
def _has(x, attribute):
    """Whether x defines `attribute`, without evaluating a property of it."""
    return hasattr(type(x), attribute) or attribute in getattr(x, "__dict__", ())


def kind_of(x, name):
    """The Kind of x, or TypeError saying what x is."""
    torch = _module("torch")
    if torch is not None and isinstance(x, torch.Tensor):
        return TORCH
    cupy = _module("cupy")
    if cupy is not None and isinstance(x, cupy.ndarray):
        return CUPY
    jax = _module("jax")
    if jax is not None and isinstance(x, jax.Array):
        return JAX
    what = f"{type(x).__module__}.{type(x).__qualname__}"
    if _has(x, "__cuda_array_interface__"):
        return INTERFACE
    if _has(x, "__dlpack_device__"):
        try:
            device_type = x.__dlpack_device__()[0]
        except Exception:
            device_type = None
        if device_type == 2:  # kDLCUDA
            raise TypeError(f"{name} is a {what}, which shares its memory through DLPack only: "
                            f"view it as a torch tensor or CuPy array first "
                            f"(torch.from_dlpack({name}) or cupy.from_dlpack({name}), no copy)")
        raise TypeError(f"{name} is a {what} in host memory: pipegemm.matmul takes CUDA arrays")
    raise TypeError(f"{name} is a {what}: pipegemm.matmul takes CUDA arrays (torch.Tensor, "
                    f"cupy.ndarray, jax.Array, or an object with __cuda_array_interface__)")
