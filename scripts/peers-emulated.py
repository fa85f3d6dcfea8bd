#!/usr/bin/env python3
"""FP32-accurate GEMM elsewhere, for bench/results/emulated/README.md: Triton's
tl.dot with input_precision="tf32x3", JAX's dot algorithm presets
TF32_TF32_F32_X3, BF16_BF16_F32_X6 and BF16_BF16_F32_X9, and cuBLAS strict
FP32 and TF32 (through torch), beside pipegemm's auto_emulated,
wgmma_3xtf32 and wgmma_fp16x3 (its Python package on torch's tensors and
stream, where it imports: PYTHONPATH=python, PIPEGEMM_LIBRARY=the build's
libpipegemm.so), all in this one process on the same inputs, with the error
as bench reports it: max and mean |c - ref| / (u sum|a||b|), u = 2^-24,
against an FP64 reference.

    python3 scripts/peers-emulated.py [--sizes 2048,4096,8192] [--out FILE.csv]

Needs a GPU and python3 with torch, triton and jax (CUDA); a peer that is
missing is reported and left out. Speed: the median of --iters timed calls
after --warmup; torch and Triton timed with CUDA events, JAX (its own
stream) by the wall clock over rounds of calls back to back, waiting once a
round; pipegemm by CUDA events, as torch. No timer waits after each call,
so a host's cost per call counts only where it exceeds the GPU's. Every
ratio is to torch's cuBLAS strict FP32 in this process, at the same shape.
"""
import argparse
import csv
import os
import statistics
import sys
import time

import torch

from cuda_timing import time_events  # scripts/cuda_timing.py

# JAX takes most of the GPU's memory at its start unless told not to.
os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")

U = 2.0 ** -24


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="2048,4096,8192",
                   help="M = N = K of each square, comma-separated (default 2048,4096,8192)")
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--iters", type=int, default=20)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--out", default="-", help="CSV file (default: standard output)")
    return p.parse_args()


def time_wall(fn, warmup, iters, rounds=5):
    """Median milliseconds of fn() (which returns its result without waiting)
    by the clock: `rounds` rounds of about iters / rounds calls back to back,
    each round waiting only for its last result, its time over its calls."""
    for _ in range(warmup):
        fn().block_until_ready()
    rounds = max(1, min(rounds, iters))
    per = iters // rounds
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(per):
            out = fn()
        out.block_until_ready()
        times.append((time.perf_counter() - t0) * 1e3 / per)
    return statistics.median(times)


def errors(c, ref, scale):
    """max and mean |c - ref| / (u scale) over elements with scale > 0."""
    err = (c.double() - ref).abs()
    keep = scale > 0
    rel = err[keep] / (U * scale[keep])
    return rel.max().item(), rel.mean().item()


# ---- Triton: a plain tiled matmul; input_precision picks tf32x3 ----
def triton_peer():
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a, b, c, m, n, k, lda, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr,
               BK: tl.constexpr, GROUP: tl.constexpr, PRECISION: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m, tiles_n = tl.cdiv(m, BM), tl.cdiv(n, BN)
        per_group = GROUP * tiles_n
        first = (pid // per_group) * GROUP
        rows = tl.minimum(tiles_m - first, GROUP)
        tm = first + (pid % per_group) % rows
        tn = (pid % per_group) // rows
        rm = tm * BM + tl.arange(0, BM)
        rn = tn * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k0 in range(0, k, BK):
            kk = k0 + rk
            x = tl.load(a + rm[:, None] * lda + kk[None, :],
                        mask=(rm[:, None] < m) & (kk[None, :] < k), other=0.0)
            y = tl.load(b + kk[:, None] * ldb + rn[None, :],
                        mask=(kk[:, None] < k) & (rn[None, :] < n), other=0.0)
            acc = tl.dot(x, y, acc, input_precision=PRECISION)
        tl.store(c + rm[:, None] * ldc + rn[None, :], acc, mask=(rm[:, None] < m) & (rn[None, :] < n))

    # Tile configurations tried at each shape; the fastest is reported.
    configs = [(128, 128, 32, 4, 3), (128, 128, 32, 8, 3), (128, 256, 32, 8, 3),
               (256, 128, 32, 8, 3), (128, 64, 32, 4, 4), (64, 128, 32, 4, 4)]

    def run(a, b, c, cfg):
        bm, bn, bk, warps, stages = cfg
        m, k = a.shape
        n = b.shape[1]
        grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
        matmul[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), BM=bm, BN=bn,
                     BK=bk, GROUP=8, PRECISION="tf32x3", num_warps=warps, num_stages=stages)

    return run, configs


# ---- JAX: the dot algorithm presets ----
def jax_peers():
    import jax
    import jax.numpy as jnp

    presets = {}
    for name in ("TF32_TF32_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9"):
        algorithm = getattr(jax.lax.DotAlgorithmPreset, name)
        presets[name] = jax.jit(lambda x, y, alg=algorithm: jax.lax.dot(x, y, precision=alg))
    return jnp, presets


def main():
    args = parse()
    if not torch.cuda.is_available():
        sys.exit("peers-emulated.py: no GPU")
    sizes = [int(s) for s in args.sizes.split(",") if s]
    gen = torch.Generator(device="cuda").manual_seed(args.seed)
    rows = []
    try:
        triton_run, triton_configs = triton_peer()
    except Exception as e:  # a missing peer is reported, not fatal
        print(f"peers-emulated.py: Triton left out: {e}", file=sys.stderr)
        triton_run = None
    try:
        import pipegemm
        ours = [v for v in ("auto_emulated", "wgmma_3xtf32", "wgmma_fp16x3")
                if v in {e.name for e in pipegemm.variants()}]
    except Exception as e:
        print(f"peers-emulated.py: pipegemm left out: {e}", file=sys.stderr)
        ours = []
    try:
        jnp, presets = jax_peers()
    except Exception as e:
        print(f"peers-emulated.py: JAX left out: {e}", file=sys.stderr)
        presets = {}
    for size in sizes:
        m = n = k = size
        a = torch.rand((m, k), device="cuda", generator=gen) * 2 - 1
        b = torch.rand((k, n), device="cuda", generator=gen) * 2 - 1
        ref = a.double() @ b.double()
        scale = a.double().abs() @ b.double().abs()
        flops = 2.0 * m * n * k
        found = []

        def record(peer, config, ms, c):
            mx, mean = errors(c, ref, scale)
            found.append({"peer": peer, "config": config, "shape": f"{m}x{n}x{k}",
                          "median_ms": ms, "tflops": flops / ms / 1e9, "err_u_max": mx,
                          "err_u_mean": mean})

        for peer, tf32 in (("cublas_strict", False), ("cublas_tf32", True)):
            torch.backends.cuda.matmul.allow_tf32 = tf32
            c = torch.empty((m, n), device="cuda")
            ms = time_events(lambda: torch.matmul(a, b, out=c), args.warmup, args.iters)
            record(peer, "torch.matmul", ms, c)
        torch.backends.cuda.matmul.allow_tf32 = False
        for variant in ours:
            c = torch.empty((m, n), device="cuda")
            try:
                ms = time_events(lambda: pipegemm.matmul(a, b, out=c, variant=variant),
                                 args.warmup, args.iters)
            except Exception as e:  # an entry this GPU or build lacks
                print(f"peers-emulated.py: pipegemm {variant} at {size}: {e}", file=sys.stderr)
                continue
            record("pipegemm_" + variant, "pipegemm.matmul", ms, c)
        if triton_run is not None:
            best = None
            for cfg in triton_configs:
                c = torch.empty((m, n), device="cuda")
                try:
                    ms = time_events(lambda: triton_run(a, b, c, cfg), 2, max(3, args.iters // 4))
                except Exception as e:  # a configuration that does not fit
                    print(f"peers-emulated.py: Triton {cfg} at {size}: {e}", file=sys.stderr)
                    continue
                if best is None or ms < best[0]:
                    best = (ms, cfg)
            if best is not None:
                c = torch.empty((m, n), device="cuda")
                ms = time_events(lambda: triton_run(a, b, c, best[1]), args.warmup, args.iters)
                bm, bn, bk, warps, stages = best[1]
                record("triton_tf32x3", f"{bm}x{bn}x{bk} warps {warps} stages {stages}", ms, c)
        if presets:
            ja, jb = jnp.asarray(a.cpu().numpy()), jnp.asarray(b.cpu().numpy())
            for name, fn in presets.items():
                try:
                    ms = time_wall(lambda: fn(ja, jb), args.warmup, args.iters)
                    c = torch.from_numpy(__import__("numpy").array(fn(ja, jb))).cuda()
                except Exception as e:
                    print(f"peers-emulated.py: JAX {name} at {size}: {e}", file=sys.stderr)
                    continue
                record("jax_" + name, "jax.lax.dot, jit", ms, c)
        strict = next(r["median_ms"] for r in found if r["peer"] == "cublas_strict")
        for r in found:
            r["x_cublas"] = strict / r["median_ms"]
            print(f"{r['shape']:>16} {r['peer']:>22} {r['tflops']:7.1f} TFLOP/s "
                  f"{r['x_cublas']:5.2f}x  max {r['err_u_max']:9.2f} u  mean {r['err_u_mean']:8.3f} u",
                  file=sys.stderr)
        rows += found
        del a, b, ref, scale
        torch.cuda.empty_cache()
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    out.write(f"# peers-emulated.py on {torch.cuda.get_device_name()}, torch {torch.__version__}, "
              f"{time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}\n")
    fields = ["peer", "config", "shape", "median_ms", "tflops", "x_cublas", "err_u_max", "err_u_mean"]
    w = csv.DictWriter(out, fieldnames=fields)
    w.writeheader()
    for r in rows:
        w.writerow({f: (f"{r[f]:.6g}" if isinstance(r[f], float) else r[f]) for f in fields})
    if out is not sys.stdout:
        out.close()


if __name__ == "__main__":
    main()
