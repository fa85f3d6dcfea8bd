"""pipegemm inside PyTorch programs: custom operators, autograd, torch.compile,
and a switch that routes a model's float32 CUDA matmuls through pipegemm.

    import torch, pipegemm, pipegemm.torch
    c = pipegemm.matmul(a, b)            # torch.ops.pipegemm.matmul underneath
    c.sum().backward()                   # gradients through pipegemm too
    torch.compile(f, fullgraph=True)     # one node of the graph, traced by its fake
    with pipegemm.torch.use(precision="emulated"):
        model(x)                         # matmul, mm, bmm, addmm, linear, @

The operators (torch.library.custom_op, namespace "pipegemm"):

  pipegemm::matmul(a, b, alpha, variant, stages) -> Tensor
      alpha * (a @ b), a new tensor; autograd: dA = alpha dC op(B)^T and
      dB = alpha op(A)^T dC, each one more call of this operator on
      transposed views (read as op T, no copy), summed over the batch
      dimensions an operand was broadcast along; where B is one matrix for
      a whole batch of row-major As, dB is one GEMM over the batch's rows.
  pipegemm::matmul_out(a, b, out, alpha, beta, variant, stages) -> ()
      out = alpha * (a @ b) + beta * out, in place (no autograd: as torch's
      out= functions, it refuses inputs that require grad while grad mode is
      on).

Their fake implementations give the result's shape from the inputs' alone,
so torch.compile(fullgraph=True) traces them on fake (or meta) tensors.
"""

import math

import torch

import pipegemm as _pipegemm
from . import _arrays, _layout

__all__ = ["matmul", "use", "PRECISIONS"]

# use(precision=...): the selector of each precision class.
PRECISIONS = {"strict": "auto", "emulated": "auto_emulated", "tf32": "auto_tf32"}


def _check_tensor(name, t):
    """What the fake implementation can check: a dense float32 tensor."""
    if t.dtype != torch.float32:
        raise ValueError(f"{name} is {t.dtype}: pipegemm.matmul takes torch.float32")
    if t.layout != torch.strided:
        raise ValueError(f"{name} is a {t.layout} tensor: pipegemm.matmul takes dense "
                         f"(torch.strided) tensors")


@torch.library.custom_op("pipegemm::matmul", mutates_args=())
def _matmul(a: torch.Tensor, b: torch.Tensor, alpha: float, variant: str,
            stages: int) -> torch.Tensor:
    return _pipegemm._execute(_arrays.TORCH, a, b, None, alpha, 0.0, variant, stages,
                              warn_level=4)


@_matmul.register_fake
def _matmul_fake(a, b, alpha, variant, stages):
    _check_tensor("a", a)
    _check_tensor("b", b)
    return a.new_empty(_layout.shapes(a.shape, b.shape).result)


@torch.library.custom_op("pipegemm::matmul_out", mutates_args=("out",))
def _matmul_out(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor, alpha: float,
                beta: float, variant: str, stages: int) -> None:
    _pipegemm._execute(_arrays.TORCH, a, b, out, alpha, beta, variant, stages, warn_level=4)


@_matmul_out.register_fake
def _matmul_out_fake(a, b, out, alpha, beta, variant, stages):
    for name, t in (("a", a), ("b", b), ("out", out)):
        _check_tensor(name, t)
    result = _layout.shapes(a.shape, b.shape).result
    if tuple(out.shape) != tuple(result):
        raise ValueError(f"out is {_layout.shape_text(out.shape)}; a "
                         f"{_layout.shape_text(a.shape)} times b "
                         f"{_layout.shape_text(b.shape)} is {_layout.shape_text(result)}")


# ---- autograd ----------------------------------------------------------------------------------

def _setup_context(ctx, inputs, output):
    a, b, alpha, variant, stages = inputs
    ctx.save_for_backward(a if ctx.needs_input_grad[1] else None,
                          b if ctx.needs_input_grad[0] else None)
    ctx.shapes = (tuple(a.shape), tuple(b.shape))
    ctx.call = (alpha, variant, stages)


def _sum_to(t, shape):
    """t summed over the batch dimensions an operand of `shape` was broadcast along."""
    if tuple(t.shape) == tuple(shape):
        return t
    return t.sum_to_size(shape)


def gradients(grad, a, b, a_shape, b_shape, alpha, variant, stages, need_a, need_b):
    """(dA, dB) of C = alpha * a @ b (either None where not needed), each by
    pipegemm on transposed views: dA = alpha dC op(B)^T, dB = alpha op(A)^T dC."""
    op = torch.ops.pipegemm.matmul
    row, column = len(a_shape) == 1, len(b_shape) == 1
    g = grad
    if column:
        g = g.unsqueeze(-1)
    if row:
        g = g.unsqueeze(-2)
    grad_a = grad_b = None
    if need_a:
        b2 = b.unsqueeze(-1) if column else b
        a2_shape = (1,) + tuple(a_shape) if row else tuple(a_shape)
        grad_a = _sum_to(op(g, b2.mT, alpha, variant, stages), a2_shape).reshape(a_shape)
    if need_b:
        a2 = a.unsqueeze(0) if row else a
        b2_shape = tuple(b_shape) + (1,) if column else tuple(b_shape)
        if len(b2_shape) == 2 and a2.dim() > 2:
            # One B for the whole batch: dB = A'^T dC' over the batch's rows,
            # where A and dC are blocks of rows (views, no copy).
            k, n = b2_shape
            try:
                flat_a, flat_g = a2.view(-1, k), g.view(-1, n)
            except RuntimeError:
                flat_a = None
            if flat_a is not None and flat_g.shape[0] == flat_a.shape[0]:
                grad_b = op(flat_a.mT, flat_g, alpha, variant, stages)
        if grad_b is None:
            grad_b = _sum_to(op(a2.mT, g, alpha, variant, stages), b2_shape)
        grad_b = grad_b.reshape(b_shape)
    return grad_a, grad_b


def _backward(ctx, grad):
    a, b = ctx.saved_tensors
    alpha, variant, stages = ctx.call
    grad_a, grad_b = gradients(grad, a, b, *ctx.shapes, alpha, variant, stages,
                               ctx.needs_input_grad[0], ctx.needs_input_grad[1])
    return grad_a, grad_b, None, None, None


_matmul.register_autograd(_backward, setup_context=_setup_context)


# ---- the Python entry --------------------------------------------------------------------------

def matmul(a, b, *, out=None, alpha=1.0, beta=0.0, variant="auto", stages=0):
    """pipegemm.matmul on torch tensors, through the operators above (see
    pipegemm.matmul). Under torch.compile the scalar arguments are checked
    when the operator runs rather than while tracing."""
    if not torch.compiler.is_compiling():
        _pipegemm._arguments(variant, stages, alpha, beta)
    if out is None:
        if beta != 0.0:
            raise ValueError(f"beta = {beta} scales out (C = alpha A B + beta C): pass out=")
        return torch.ops.pipegemm.matmul(a, b, float(alpha), variant, int(stages))
    if torch.is_grad_enabled() and any(t.requires_grad for t in (a, b, out)):
        raise ValueError("pipegemm.matmul with out= has no autograd (as torch's out= "
                         "functions), and an argument requires grad: call it under "
                         "torch.no_grad(), or leave out= away")
    torch.ops.pipegemm.matmul_out(a, b, out, float(alpha), float(beta), variant, int(stages))
    return out


# ---- the switch: a model's matmuls through pipegemm --------------------------------------------

def _routable(*tensors):
    """Whether every tensor is a dense float32 one on one CUDA device (or on
    the meta device, for tracing), and autocast is off."""
    device = None
    for t in tensors:
        if t.dtype != torch.float32 or t.layout != torch.strided:
            return False
        if t.device.type not in ("cuda", "meta") or (device is not None and t.device != device):
            return False
        device = t.device
    if device is not None and device.type == "cuda":
        try:
            return not torch.is_autocast_enabled("cuda")
        except TypeError:  # an older torch: is_autocast_enabled() is CUDA's
            return not torch.is_autocast_enabled()
    return True


def _route_matmul(variant, args, kwargs, swapped=False):
    if kwargs or len(args) != 2:
        return NotImplemented
    a, b = (args[1], args[0]) if swapped else args
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return NotImplemented
    if not _routable(a, b) or a.dim() == 0 or b.dim() == 0:
        return NotImplemented
    return torch.ops.pipegemm.matmul(a, b, 1.0, variant, 0)


def _route_mm(variant, args, kwargs):
    if len(args) == 2 and not kwargs and all(isinstance(t, torch.Tensor) and t.dim() == 2
                                             for t in args):
        if args[0].shape[1] == args[1].shape[0]:
            return _route_matmul(variant, args, {})
    return NotImplemented


def _route_bmm(variant, args, kwargs):
    if len(args) == 2 and not kwargs and all(isinstance(t, torch.Tensor) and t.dim() == 3
                                             for t in args):
        a, b = args
        if a.shape[0] == b.shape[0] and a.shape[2] == b.shape[1]:
            return _route_matmul(variant, args, {})
    return NotImplemented


def _add(product, addend, scale):
    """product + scale * addend, in place where nothing needs grad."""
    if scale == 0:
        return product
    if torch.is_grad_enabled() and (product.requires_grad or addend.requires_grad):
        return torch.add(product, addend, alpha=scale)
    return product.add_(addend, alpha=scale)


def _route_add_product(variant, args, kwargs, names, dim):
    """torch.addmm (dim 2) and torch.baddbmm (dim 3): beta * input + alpha *
    (m1 @ m2), the product through pipegemm."""
    call = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in call:
            return NotImplemented  # out= and the like: torch's own
        call[key] = value
    if not set(names[:3]) <= call.keys():
        return NotImplemented
    bias, m1, m2 = (call[name] for name in names[:3])
    beta, alpha = call.get("beta", 1), call.get("alpha", 1)
    tensors = (bias, m1, m2)
    if not all(isinstance(t, torch.Tensor) for t in tensors) or not _routable(*tensors):
        return NotImplemented
    if m1.dim() != dim or m2.dim() != dim or m1.shape[-1] != m2.shape[-2]:
        return NotImplemented
    if m1.shape[:-2] != m2.shape[:-2]:
        return NotImplemented  # bmm does not broadcast its batch
    if not isinstance(beta, (int, float)) or not isinstance(alpha, (int, float)):
        return NotImplemented
    try:
        torch.broadcast_shapes(bias.shape, (*m1.shape[:-1], m2.shape[-1]))
    except RuntimeError:
        return NotImplemented
    product = torch.ops.pipegemm.matmul(m1, m2, float(alpha), variant, 0)
    return _add(product, bias, beta)


def _route_addmm(variant, args, kwargs):
    return _route_add_product(variant, args, kwargs,
                              ("input", "mat1", "mat2", "beta", "alpha"), 2)


def _route_baddbmm(variant, args, kwargs):
    return _route_add_product(variant, args, kwargs,
                              ("input", "batch1", "batch2", "beta", "alpha"), 3)


def _route_linear(variant, args, kwargs):
    names = ("input", "weight", "bias")
    call = dict(zip(names, args))
    for key, value in kwargs.items():
        if key not in names or key in call:
            return NotImplemented
        call[key] = value
    x, weight, bias = call.get("input"), call.get("weight"), call.get("bias")
    tensors = [t for t in (x, weight, bias) if t is not None]
    if x is None or weight is None or not all(isinstance(t, torch.Tensor) for t in tensors):
        return NotImplemented
    if not _routable(*tensors) or x.dim() == 0 or weight.dim() != 2:
        return NotImplemented
    if x.shape[-1] != weight.shape[1]:
        return NotImplemented
    product = torch.ops.pipegemm.matmul(x, weight.mT, 1.0, variant, 0)  # op T: no copy
    return product if bias is None else _add(product, bias, 1)


def _routes():
    F = torch.nn.functional
    T = torch.Tensor
    routes = {
        torch.matmul: _route_matmul, T.matmul: _route_matmul, T.__matmul__: _route_matmul,
        T.__rmatmul__: lambda v, a, k: _route_matmul(v, a, k, swapped=True),
        torch.mm: _route_mm, T.mm: _route_mm,
        torch.bmm: _route_bmm, T.bmm: _route_bmm,
        torch.addmm: _route_addmm, T.addmm: _route_addmm,
        torch.baddbmm: _route_baddbmm, T.baddbmm: _route_baddbmm,
        F.linear: _route_linear,
    }
    return routes


class use(torch.overrides.TorchFunctionMode):
    """Within `with pipegemm.torch.use(precision=...)`, torch's float32 CUDA
    matmuls run through pipegemm: torch.matmul, Tensor.matmul and `@`,
    torch.mm, torch.bmm, torch.addmm, and F.linear (so nn.Linear), each with
    autograd. precision: "strict" (the `auto` selector: IEEE FP32),
    "emulated" (`auto_emulated`: FP32-accurate on the tensor cores) or
    "tf32" (`auto_tf32`); variant= names one entry instead. A call with any
    other dtype or device, autocast on, out= or arguments pipegemm does not
    take runs as torch would run it.

    A TorchFunctionMode: it holds for the torch calls of this thread inside
    the `with`, torch.compile's traces included (the mode must be entered
    outside the compiled function)."""

    def __init__(self, precision="strict", *, variant=None):
        super().__init__()
        if variant is None:
            if precision not in PRECISIONS:
                raise ValueError(f"precision = {precision!r}: pipegemm.torch.use takes "
                                 f"{', '.join(map(repr, PRECISIONS))}, or variant=")
            variant = PRECISIONS[precision]
        _pipegemm._arguments(variant, 0, 1.0, 0.0)
        self.variant = variant
        self._routes = _routes()

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        route = self._routes.get(func)
        if route is not None:
            result = route(self.variant, args, kwargs)
            if result is not NotImplemented:
                return result
        return func(*args, **kwargs)


_switched_on = None


def route(precision="strict", *, variant=None):
    """The switch without a `with`: route(precision) routes this thread's
    float32 CUDA matmuls through pipegemm from here on, as `use` does inside
    its block; route(None) stops it. A second route() replaces the first.
    Torch keeps its function modes per thread: another thread's matmuls
    stay torch's own. Returns the mode now in force (None when off)."""
    global _switched_on
    mode = None if precision is None and variant is None else use(precision, variant=variant)
    if _switched_on is not None:
        _switched_on.__exit__(None, None, None)
        _switched_on = None
    if mode is not None:
        mode.__enter__()
        _switched_on = mode
    return mode
