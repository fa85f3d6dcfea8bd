"""pipegemm inside JAX programs: an XLA custom call, under jit, grad and vmap.

    import jax, pipegemm.jax
    f = jax.jit(lambda x, w: pipegemm.jax.matmul(x, w.T, variant="auto_emulated"))
    jax.grad(lambda x, w: f(x, w).sum(), argnums=(0, 1))(x, w)
    jax.vmap(pipegemm.jax.matmul, in_axes=(0, None))(xs, w)

matmul has torch.matmul's (and jnp.matmul's) semantics on float32 arrays.
It runs pg_xla_matmul, the library's XLA FFI handler (include/pipegemm_xla.h),
registered with JAX for the CUDA platform as "pipegemm_matmul": XLA hands it
the buffers, its stream and its device, so nothing is waited for and no
other framework is needed. The handler exists in a library built where
jaxlib's headers were found (CMake's PG_XLA_FFI); without it, matmul says so.

The custom call takes a, b and the attributes op_a, op_b (0: as stored, 1:
transposed), alpha, variant and stages. XLA arrays are row-major, so op T
comes from matmul's transpose_a and transpose_b (x @ w.T as
matmul(x, w, transpose_b=True), w read as stored) and from
differentiation: the gradient of C = alpha op(A) op(B) is
dA = alpha dC op(B)^T and dB = alpha op(A)^T dC (each the same call with
ops flipped, nothing transposed in memory), summed over the batch
dimensions an operand was broadcast along; where B is one matrix for a whole
batch, the batch's rows are one GEMM (a reshape, which XLA does in place).
Under vmap the mapped dimension becomes one more batch dimension of the call
(vmap_method "expand_dims": an unmapped operand is read once, stride 0).
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

import pipegemm as _pipegemm
from . import _layout, _library

__all__ = ["matmul", "TARGET", "available"]

TARGET = "pipegemm_matmul"
N, T = _layout.N, _layout.T


def available():
    """Whether this libpipegemm has the XLA handler (pg_xla_matmul)."""
    return _library.has_xla_handler()


def _register():
    if available():
        jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(_library.LIB.pg_xla_matmul),
                                    platform="CUDA")


_register()


def _call(x, y, op_x, op_y, alpha, variant, stages):
    """alpha op(x) op(y) through the custom call (x, y of rank 2 or more)."""
    m, k = (x.shape[-1], x.shape[-2]) if op_x else (x.shape[-2], x.shape[-1])
    n = y.shape[-2] if op_y else y.shape[-1]
    batch = _layout.broadcast("a", x.shape[:-2], "b", y.shape[:-2])
    result = jax.ShapeDtypeStruct(batch + (m, n), jnp.float32)
    call = jax.ffi.ffi_call(TARGET, result, vmap_method="expand_dims")
    return call(x, y, op_a=np.int32(op_x), op_b=np.int32(op_y), alpha=np.float32(alpha),
                stages=np.int32(stages), variant=variant)


def _sum_to(t, shape):
    """t summed over the dimensions an operand of `shape` was broadcast along."""
    lead = t.ndim - len(shape)
    axes = tuple(range(lead)) + tuple(lead + i for i, size in enumerate(shape)
                                      if size == 1 and t.shape[lead + i] != 1)
    return jnp.sum(t, axis=axes).reshape(shape) if axes else t


@functools.partial(jax.custom_vjp, nondiff_argnums=(2, 3, 4, 5, 6))
def _product(x, y, op_x, op_y, alpha, variant, stages):
    if op_x == N and y.ndim == 2 and x.ndim > 2:  # one B for a batch of As: one GEMM
        flat = _call(x.reshape(-1, x.shape[-1]), y, N, op_y, alpha, variant, stages)
        return flat.reshape(x.shape[:-1] + flat.shape[-1:])
    return _call(x, y, op_x, op_y, alpha, variant, stages)


def _forward(x, y, op_x, op_y, alpha, variant, stages):
    return _product(x, y, op_x, op_y, alpha, variant, stages), (x, y)


def _backward(op_x, op_y, alpha, variant, stages, saved, g):
    x, y = saved
    call = functools.partial(_product, alpha=alpha, variant=variant, stages=stages)
    # d op(x) = g op(y)^T, d op(y) = op(x)^T g; an operand stored transposed
    # takes the transpose of its gradient, which is the product turned round.
    if op_x == N:
        dx = call(g, y, N, 1 - op_y)
    else:
        dx = call(y, g, op_y, T)
    if y.ndim == 2 and x.ndim > 2 and op_x == N and x.shape[:-2] == g.shape[:-2]:
        # One y for the whole batch: the batch's rows are one GEMM.
        fx, fg = x.reshape(-1, x.shape[-1]), g.reshape(-1, g.shape[-1])
        dy = call(fx, fg, T, N) if op_y == N else call(fg, fx, T, N)
    elif op_y == N:
        dy = call(x, g, 1 - op_x, N)
    else:
        dy = call(g, x, T, op_x)
    return _sum_to(dx, x.shape), _sum_to(dy, y.shape)


_product.defvjp(_forward, _backward)


def _swap_last(shape):
    return shape[:-2] + (shape[-1], shape[-2])


def matmul(a, b, *, alpha=1.0, variant="auto", stages=0, transpose_a=False,
           transpose_b=False):
    """alpha * (a @ b) by one of pipegemm's variants, in JAX programs (jit,
    grad, vmap): torch.matmul's semantics on float32 arrays (1-D a row or
    column, batch dimensions broadcast). variant and stages as for
    pipegemm.matmul; they and alpha are static (part of the compiled call).

    transpose_a, transpose_b: use the operand's last two dimensions swapped
    (op T), read as stored by the call: matmul(x, w, transpose_b=True) is
    x @ w.T (nn.Linear's x W^T) without XLA writing w.T first. A 1-D
    operand has no transpose.
    """
    if not available():
        raise RuntimeError(f"this libpipegemm ({_library.PATH}) has no XLA handler: it was "
                           f"built without jaxlib's headers; build it where jax is installed "
                           f"(CMake's PG_XLA_FFI, docs/python.md)")
    name, stages, alpha, _, _ = _pipegemm._arguments(variant, stages, alpha, 0.0)
    a, b = jnp.asarray(a), jnp.asarray(b)
    for label, x, flag in (("a", a, transpose_a), ("b", b, transpose_b)):
        if x.dtype != jnp.float32:
            raise ValueError(f"{label} is {x.dtype}: pipegemm.matmul takes float32")
        if flag and x.ndim < 2:
            raise ValueError(f"transpose_{label}: {label} is 1-D ({x.shape[0]}), which has no "
                             f"transpose")
    op_x, op_y = (T if transpose_a else N), (T if transpose_b else N)
    # the shapes as used (op(a), op(b)), for torch.matmul's rules
    s = _layout.shapes(_swap_last(a.shape) if transpose_a else a.shape,
                       _swap_last(b.shape) if transpose_b else b.shape)
    x = a.reshape((1,) + a.shape) if s.row else a
    y = b.reshape(b.shape + (1,)) if s.column else b
    return _product(x, y, op_x, op_y, float(np.float32(alpha)), variant,
                    stages).reshape(s.result)
