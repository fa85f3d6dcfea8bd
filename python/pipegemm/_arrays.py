"""The arrays pipegemm.matmul takes, one class per kind: how an array's
pointer, shape and strides are read, which device and stream a call runs
on, and how a result is made.

  torch      torch.Tensor: its device, torch.cuda.current_stream(device)
  cupy       cupy.ndarray: its device, cupy.cuda.get_current_stream()
  jax        jax.Array (one GPU): read through __cuda_array_interface__
             once ready (block_until_ready); JAX has no stream to share, so
             the product is made in a CuPy (else torch) buffer on that
             framework's current stream, waited for, and handed to JAX
             through DLPack (jax.dlpack.from_dlpack, no copy)
  interface  any other object with __cuda_array_interface__: the current
             device, the stream the interface names (version 3) or the
             legacy default stream; out= is required (pipegemm cannot make
             an array of a kind it does not know)

No framework is imported here: a kind is recognised only where its module
is already loaded (an array of it exists, so it is).
"""

import importlib
import math
import sys

INT_MAX = 2**31 - 1
FLOAT32 = 4  # bytes

# overlap() of views with two leading dimensions goes row by row, over this
# many rows at most; past it the answer is MAYBE, which matmul refuses.
ROWS_CHECKED = 4096
MAYBE = "maybe"  # true, as an overlap would be


class Operand:
    """One matrix as the library takes it: row-major, `ld` floats between rows."""
    __slots__ = ("name", "ptr", "rows", "cols", "ld", "device", "stream")

    def __init__(self, name, ptr, rows, cols, ld, device, stream=None):
        self.name, self.ptr, self.rows, self.cols, self.ld = name, ptr, rows, cols, ld
        self.device, self.stream = device, stream

    def extent(self):
        """[first, last) byte addresses it covers; None when empty."""
        if self.rows == 0 or self.cols == 0:
            return None
        return self.ptr, self.ptr + ((self.rows - 1) * self.ld + self.cols) * FLOAT32


def operand(name, ptr, shape, strides, device, contiguous_hint, stream=None):
    """An Operand of a 2-D array with element `strides`, or ValueError when it
    is not row-major with a leading dimension (strides (ld, 1), ld >= cols)."""
    rows, cols = (int(x) for x in shape)
    s0, s1 = (int(x) for x in strides)
    for what, value in (("rows", rows), ("columns", cols)):
        if value > INT_MAX:
            raise ValueError(f"{name} has {value} {what}: the library takes at most "
                             f"{INT_MAX} (a C int)")
    if rows == 0 or cols == 0:
        return Operand(name, ptr, rows, cols, max(1, cols), device, stream)
    ld = s0 if rows > 1 else max(1, cols)
    if (cols > 1 and s1 != 1) or ld < max(1, cols):
        raise ValueError(
            f"{name} ({rows} x {cols}, strides ({s0}, {s1}) in elements) is not row-major "
            f"with a leading dimension: pipegemm.matmul takes strides (ld, 1) with "
            f"ld >= {cols} and copies nothing; pass {contiguous_hint}")
    if ld > INT_MAX:
        raise ValueError(f"{name}'s leading dimension {ld} is more than the library takes "
                         f"({INT_MAX}, a C int)")
    return Operand(name, ptr, rows, cols, ld, device, stream)


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


def from_interface(name, x, device, hint, writable):
    """An Operand from x.__cuda_array_interface__ (version 2 or 3)."""
    try:
        cai = x.__cuda_array_interface__
    except Exception as err:  # a framework's own reason (a tracer, a deleted buffer)
        raise TypeError(f"{name}: reading its __cuda_array_interface__ failed: {err}") from err
    typestr = cai.get("typestr")
    if typestr not in ("<f4", "=f4") or sys.byteorder != "little":
        raise ValueError(f"{name}'s elements are {typestr!r}: pipegemm.matmul takes float32 "
                         f"('<f4')")
    shape = tuple(cai.get("shape", ()))
    if len(shape) != 2:
        raise ValueError(f"{name} has {len(shape)} dimensions (shape {shape}): "
                         f"pipegemm.matmul takes matrices (two dimensions)")
    if cai.get("mask") is not None:
        raise ValueError(f"{name} has a mask: pipegemm.matmul takes plain arrays")
    ptr, readonly = cai["data"]
    if writable and readonly:
        raise ValueError(f"{name} is read-only (its __cuda_array_interface__ says so)")
    strides = cai.get("strides")
    if strides is None:  # C-contiguous
        strides = (shape[1], 1)
    else:
        strides = element_strides(name, strides, shape)
    return operand(name, ptr or 0, shape, strides, device, hint, cai.get("stream"))


class Kind:
    """What matmul needs of one kind of array."""
    what = ""             # "a torch tensor", for messages
    allocates = True      # can make its own result

    def describe(self, x, name, writable=False):
        raise NotImplementedError

    def check(self, a, b, out):
        """Anything else refused for this kind (torch: autograd)."""

    def run(self, device, operands, launch):
        """launch(stream) on `device`, the current device while it runs."""
        raise NotImplementedError

    def empty(self, rows, cols, device):
        raise NotImplementedError

    def describe_result(self, result):
        """The Operand of what empty() made."""
        return self.describe(result, "out", writable=True)

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
        if t.dim() != 2:
            raise ValueError(f"{name} has {t.dim()} dimensions (shape {tuple(t.shape)}): "
                             f"pipegemm.matmul takes matrices (two dimensions)")
        return operand(name, t.data_ptr(), t.shape, t.stride(), t.device.index,
                       f"{name}.contiguous()")

    def check(self, a, b, out):
        torch = _module("torch")
        for name, t in (("a", a), ("b", b)):
            if t.requires_grad and torch.is_grad_enabled():
                raise ValueError(f"{name} requires grad and pipegemm.matmul has no backward: "
                                 f"call it under torch.no_grad(), or pass {name}.detach()")
        if out is not None and out.requires_grad:
            raise ValueError("out requires grad: pipegemm.matmul writes it as plain memory")

    def run(self, device, operands, launch):
        torch = _module("torch")
        if torch.cuda.current_device() == device:
            return launch(torch.cuda.current_stream(device).cuda_stream)
        with torch.cuda.device(device):
            return launch(torch.cuda.current_stream(device).cuda_stream)

    def empty(self, rows, cols, device):
        torch = _module("torch")
        return torch.empty((rows, cols), dtype=torch.float32, device=f"cuda:{device}")

    def synchronize(self):
        _module("torch").cuda.current_stream().synchronize()


class Cupy(Kind):
    what = "a CuPy array"

    def describe(self, x, name, writable=False):
        cupy = _module("cupy")
        if x.dtype != cupy.float32:
            raise ValueError(f"{name} is {x.dtype}: pipegemm.matmul takes float32")
        if x.ndim != 2:
            raise ValueError(f"{name} has {x.ndim} dimensions (shape {x.shape}): "
                             f"pipegemm.matmul takes matrices (two dimensions)")
        return operand(name, x.data.ptr, x.shape, element_strides(name, x.strides, x.shape),
                       x.device.id, f"cupy.ascontiguousarray({name})")

    def run(self, device, operands, launch):
        cupy = _module("cupy")
        with cupy.cuda.Device(device):
            return launch(cupy.cuda.get_current_stream().ptr)

    def empty(self, rows, cols, device):
        cupy = _module("cupy")
        with cupy.cuda.Device(device):
            return cupy.empty((rows, cols), dtype=cupy.float32)

    def synchronize(self):
        _module("cupy").cuda.get_current_stream().synchronize()


class Jax(Kind):
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
                            f"{first_line}); pipegemm.matmul runs on concrete arrays, outside "
                            f"jax.jit") from err
        if len(devices) != 1:
            raise ValueError(f"{name} is spread over {len(devices)} devices: pipegemm.matmul "
                             f"takes an array on one GPU")
        device = next(iter(devices))
        if device.platform not in ("gpu", "cuda"):
            raise ValueError(f"{name} is on {device}: pipegemm.matmul takes arrays on a "
                             f"CUDA GPU")
        if str(x.dtype) != "float32":
            raise ValueError(f"{name} is {x.dtype}: pipegemm.matmul takes float32")
        if x.ndim != 2:
            raise ValueError(f"{name} has {x.ndim} dimensions (shape {x.shape}): "
                             f"pipegemm.matmul takes matrices (two dimensions)")
        x.block_until_ready()  # JAX's stream is its own: wait for what writes x
        ordinal = getattr(device, "local_hardware_id", None)
        return from_interface(name, x, device.id if ordinal is None else ordinal,
                              "a row-major array", writable=False)

    @staticmethod
    def helper():
        """The framework that holds a JAX result's memory: CuPy, else torch."""
        for name, kind in (("cupy", CUPY), ("torch", TORCH)):
            try:
                importlib.import_module(name)
            except ImportError:
                continue
            return kind
        raise TypeError("a JAX result is made in a CuPy or PyTorch buffer (pipegemm has no "
                        "allocator of its own), and neither imports here: install one")

    def run(self, device, operands, launch):
        return self.helper().run(device, operands, launch)

    def empty(self, rows, cols, device):
        return self.helper().empty(rows, cols, device)

    def describe_result(self, result):
        return self.helper().describe_result(result)

    def finish(self, result):
        # Inside run(): the helper's current stream is the call's.
        self.helper().synchronize()
        return _module("jax").dlpack.from_dlpack(result)


class Interface(Kind):
    what = "an object with __cuda_array_interface__"
    allocates = False

    def describe(self, x, name, writable=False):
        return from_interface(name, x, None, f"a row-major copy of {name}", writable)

    def run(self, device, operands, launch):
        streams = {op.stream for op in operands if op.stream is not None}
        if len(streams) > 1:
            names = ", ".join(f"{op.name}'s {op.stream}" for op in operands
                              if op.stream is not None)
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
