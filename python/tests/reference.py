"""The FP64 reference and the library's acceptance rule, restated in Python
from src/measure/verify_math.h (the check `pipegemm bench` applies):

  ref   = alpha * sum_k a_ik b_kj + beta * c0_ij            in FP64
  scale = |alpha| * sum_k |a_ik| |b_kj| + |beta * c0_ij|    in FP64
  |out - ref| <= (8 + sqrt(K)) * 2^-24 * scale + (K + 1) * 2^-149

for strict and emulated entries; a TF32 entry is allowed (2^-9 + 2^-20) *
scale more. NaN and Inf never pass. On the host, in numpy: independent of
the GPU and of every framework the tests use."""

import math

import numpy as np

UNIT_ROUNDOFF = 2.0 ** -24
TF32_PRODUCT = 2.0 ** -9 + 2.0 ** -20
DENORMAL_MIN = 2.0 ** -149


def tolerance(scale, k, precision):
    """The bound per element, as pgv_tolerance (scale: an FP64 array)."""
    kk = float(max(k, 0))
    relative = (8.0 + math.sqrt(kk)) * UNIT_ROUNDOFF
    if precision == "tf32":
        relative += TF32_PRODUCT
    return relative * scale + (kk + 1.0) * DENORMAL_MIN


def reference(a, b, alpha=1.0, beta=0.0, c0=None):
    """(ref, scale) in FP64 of host float32 arrays."""
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    ref = float(alpha) * (a64 @ b64)
    scale = abs(float(alpha)) * (np.abs(a64) @ np.abs(b64))
    if beta != 0.0:
        bc = float(beta) * c0.astype(np.float64)
        ref += bc
        scale += np.abs(bc)
    return ref, scale


def check(out, ref, scale, k, precision):
    """None if every element of `out` (host float32) passes; else what failed."""
    out64 = out.astype(np.float64)
    bound = tolerance(scale, k, precision)
    error = np.abs(out64 - ref)
    bad = ~np.isfinite(out64) | ~(error <= bound)
    if not bad.any():
        return None
    i, j = np.argwhere(bad)[0]
    units = np.where(scale > 0, error / (UNIT_ROUNDOFF * np.where(scale > 0, scale, 1)), 0)
    return (f"{int(bad.sum())} of {bad.size} elements outside the {precision} bound; first "
            f"[{i}, {j}]: {out[i, j]!r}, reference {ref[i, j]!r}, bound {bound[i, j]:.3g}; "
            f"largest error {np.nanmax(units):.1f} u of the scale")
