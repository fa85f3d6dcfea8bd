#!/usr/bin/env python3
"""Cheaper exact products than three TF32s, as prototypes on the vendor's
GEMMs (XLA's cuBLAS calls), for bench/results/products/README.md: what each
way to build an FP32-accurate product from lower-precision tensor-core
products costs and how accurate it is, on this GPU, in one process.

    python3 scripts/products.py [--sizes 2048,4096,8192] [--kinds uniform,wide]
                                [--out FILE.csv]

Rows (each jitted whole: splitting, scaling, products and the sum):
  fp32            XLA's float32 dot at HIGHEST precision (cuBLAS strict FP32):
                  the baseline every ratio is to
  tf32            one TF32 product (DEFAULT precision): not FP32-accurate
  tf32x3          JAX's TF32_TF32_F32_X3 preset
  bf16x6, bf16x9  JAX's BF16_BF16_F32_X6 and _X9 presets
  fp16x3          a = s_i (h + 2^-11 l) with h, l FP16 and s_i a power of two
                  per row of A (per column of B) putting the row's largest
                  magnitude at 2^14..2^15; three FP16 products with FP32
                  accumulation, hh + 2^-11 (hl + lh)
  fp16x3_products the three FP16 products alone, on parts split on the host
                  in NumPy: the form's ceiling on these GEMMs, and its error
                  where nothing rewrote the split

Ozaki scheme II on INT8 is scripts/ozaki2.py's (torch: XLA's compiles of it
outlasted a device run).

Inputs: uniform in [-1, 1), and "wide": the same times 2^e with e uniform in
[-20, 20] per element (each row's range spans 2^40). Error as pipegemm bench
reports it: max and mean |c - ref| / (u sum_k |a_ik| |b_kj|), u = 2^-24,
against the FP64 product. Speed: JAX runs on its own stream, so each call is
timed by the wall clock around the call and block_until_ready (median of
--iters after --warmup); ratios are to fp32 in this process at the same
shape and input. A prototype measures the idea, not a kernel: a fused kernel
would save the passes over memory that XLA runs here between the products.
"""
import argparse
import csv
import os
import statistics
import sys
import time

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402

jax.config.update("jax_enable_x64", True)
U = 2.0 ** -24


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="2048,4096,8192",
                   help="M = N = K of each square, comma-separated (default 2048,4096,8192)")
    p.add_argument("--kinds", default="uniform,wide", help="inputs: uniform, wide (default both)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="-", help="CSV file (default: standard output)")
    args = p.parse_args()
    try:
        args.sizes = [int(s) for s in args.sizes.split(",")]
    except ValueError:
        p.error("--sizes takes comma-separated integers")
    args.kinds = args.kinds.split(",")
    for kind in args.kinds:
        if kind not in ("uniform", "wide"):
            p.error(f"--kinds: no kind {kind!r} (uniform, wide)")
    return args


def dot(x, y, out=jnp.float32, precision=None):
    return jax.lax.dot(x, y, precision=precision, preferred_element_type=out)


# ---- the scaled FP16 split ----------------------------------------------------------------

def pow2_scale(x, axis, top=14):
    """2^(top - e), e = the exponent of the largest |x| along axis (1: none)."""
    biggest = jnp.max(jnp.abs(x), axis=axis, keepdims=True)
    e = jnp.floor(jnp.log2(jnp.where(biggest > 0, biggest, 1.0)))
    return jnp.exp2(top - e)


def fp16_split(x, scale):
    """The high part rounded to FP16's precision in FP32 (reduce_precision:
    XLA may fold a float16 round trip, convert(convert(x)), to x, which left
    the low parts 0 on the H200), then both parts to float16, exactly."""
    scaled = x * scale
    high = jax.lax.reduce_precision(scaled, exponent_bits=5, mantissa_bits=10)
    low = (scaled - high) * 2048.0
    return high.astype(jnp.float16), low.astype(jnp.float16)


@jax.jit
def fp16x3(a, b):
    sa, sb = pow2_scale(a, 1), pow2_scale(b, 0)
    ah, al = fp16_split(a, sa)
    bh, bl = fp16_split(b, sb)
    cross = dot(ah, bl) + dot(al, bh)
    return (dot(ah, bh) + cross * (1.0 / 2048.0)) / (sa * sb)


@jax.jit
def fp16x3_products(ah, al, bh, bl):
    return dot(ah, bh) + (dot(ah, bl) + dot(al, bh)) * (1.0 / 2048.0)


def fp16_split_host(x, axis):
    """The same split in NumPy (IEEE arithmetic, nothing rewritten): the
    scale, the high and the low parts."""
    biggest = np.max(np.abs(x), axis=axis, keepdims=True).astype(np.float64)
    e = np.floor(np.log2(np.where(biggest > 0, biggest, 1.0)))
    scale = np.exp2(14 - e).astype(np.float32)
    scaled = x * scale
    high = scaled.astype(np.float16)
    low = ((scaled - high.astype(np.float32)) * np.float32(2048)).astype(np.float16)
    return scale, high, low


# ---- inputs, error, timing ---------------------------------------------------------------

def inputs(kind, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    b = rng.uniform(-1, 1, (n, n)).astype(np.float32)
    if kind == "wide":
        a = (a * np.exp2(rng.integers(-20, 21, (n, n)))).astype(np.float32)
        b = (b * np.exp2(rng.integers(-20, 21, (n, n)))).astype(np.float32)
    return a, b


def reference(a, b):
    a64, b64 = jnp.asarray(a, jnp.float64), jnp.asarray(b, jnp.float64)
    return (jax.jit(lambda x, y: dot(x, y, out=jnp.float64))(a64, b64),
            jax.jit(lambda x, y: dot(jnp.abs(x), jnp.abs(y), out=jnp.float64))(a64, b64))


def errors(c, ref, scale):
    err = jnp.abs(c.astype(jnp.float64) - ref)
    keep = scale > 0
    rel = jnp.where(keep, err / (U * jnp.where(keep, scale, 1.0)), 0.0)
    return float(jnp.max(rel)), float(jnp.sum(rel) / jnp.sum(keep))


def time_wall(fn, warmup, iters):
    for _ in range(warmup):
        fn().block_until_ready()
    times = []
    for _ in range(iters):
        t0 = time.perf_counter()
        fn().block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3)
    return statistics.median(times)


def measure(args, writer, writer_file, n, kind, strict, tf32, presets):
    """One size and input: fp32, then the other forms, a CSV row each."""
    flops = 2.0 * n ** 3
    a_host, b_host = inputs(kind, n, args.seed)
    a, b = jnp.asarray(a_host), jnp.asarray(b_host)
    ref, scale = reference(a_host, b_host)
    forms = [("fp32", 1, lambda: strict(a, b))]
    forms.append(("tf32", 1, lambda: tf32(a, b)))
    forms += [(name, int(name[-1]), lambda f=f: f(a, b)) for name, f in presets.items()]
    forms.append(("fp16x3", 3, lambda: fp16x3(a, b)))
    # The products on parts split on the host: the form's ceiling on these
    # GEMMs, and its error with a split nothing rewrote.
    sa, ah, al = fp16_split_host(a_host, 1)
    sb, bh, bl = fp16_split_host(b_host, 0)
    parts = [jnp.asarray(p) for p in (ah, al, bh, bl)]
    unscale = jnp.asarray(1.0 / (sa.astype(np.float64) * sb.astype(np.float64)))
    forms.append(("fp16x3_products", 3, lambda: fp16x3_products(*parts)))
    base = None
    for name, products, fn in forms:
        try:
            ms = time_wall(fn, args.warmup, args.iters)
            c = fn()
        except Exception as e:  # a preset this GPU or JAX lacks
            print(f"# {name} {kind} {n}: {type(e).__name__}: {str(e).splitlines()[0]}",
                  file=writer_file)
            continue
        if name == "fp16x3_products":
            c = (c.astype(jnp.float64) * unscale).astype(jnp.float32)
        if name == "fp32":
            base = ms
        emax, emean = errors(c, ref, scale)
        writer.writerow([name, kind, n, products, f"{ms:.4f}", f"{flops / ms / 1e9:.1f}",
                         f"{base / ms:.3f}" if base else "",
                         f"{emax:.3f}", f"{emean:.4f}"])
        writer_file.flush()


def main():
    args = parse()
    device = jax.devices()[0]
    writer_file = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    print(f"# products.py on {device.device_kind} ({jax.default_backend()}), jax {jax.__version__}",
          file=writer_file)
    print(f"# command_line: {' '.join(sys.argv)}", file=writer_file)
    writer = csv.writer(writer_file)
    writer.writerow(["form", "kind", "size", "products", "median_ms", "tflops", "x_fp32",
                     "err_u_max", "err_u_mean"])
    presets = {name: jax.jit(lambda x, y, alg=getattr(jax.lax.DotAlgorithmPreset, preset):
                             jax.lax.dot(x, y, precision=alg))
               for name, preset in (("tf32x3", "TF32_TF32_F32_X3"),
                                    ("bf16x6", "BF16_BF16_F32_X6"),
                                    ("bf16x9", "BF16_BF16_F32_X9"))}
    strict = jax.jit(lambda x, y: dot(x, y, precision=jax.lax.Precision.HIGHEST))
    tf32 = jax.jit(lambda x, y: dot(x, y, precision=jax.lax.Precision.DEFAULT))
    for n in args.sizes:
        for kind in args.kinds:
            measure(args, writer, writer_file, n, kind, strict, tf32, presets)
    if writer_file is not sys.stdout:
        writer_file.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
