#!/usr/bin/env python3
"""pipegemm.matmul beside torch.matmul, in one process, on one pair of
torch tensors:

  pipegemm auto            strict FP32 (the fastest strict entry for the shape)
  pipegemm auto_emulated   FP32-accurate on the tensor cores (or strict)
  torch.matmul, TF32 off   cuBLAS, strict FP32 (torch's default)
  torch.matmul, TF32 on    cuBLAS on TF32 tensor cores

    python3 python/examples/bench_torch.py [--size 4096 | --m M --n N --k K]
                                           [--rounds 5] [--iters 20] [--warmup 3]

Each round times every entry once, in turn (`iters` calls between two CUDA
events after `warmup` calls, the L2 cache warm), so that clocks and
temperature drift over all of them alike; a row's time is the median of its
rounds. Inputs are standard normal (signs mixed). The error column is the
largest |C - C64| over u * sum_k |a_ik| |b_kj|, u = 2^-24, C64 the FP64
product (torch, on the GPU): strict FP32 stays below (8 + sqrt K) u in these
units, TF32 may reach 2^15 u more (src/measure/verify_math.h).
"""
import argparse
import math
import statistics

import torch

import pipegemm

U = 2.0 ** -24


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--size", type=int, default=4096, help="M = N = K (default 4096)")
    parser.add_argument("--m", type=int)
    parser.add_argument("--n", type=int)
    parser.add_argument("--k", type=int)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iters", type=int, default=20, help="calls timed per round")
    parser.add_argument("--warmup", type=int, default=3, help="calls before each timing")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    args.m, args.n, args.k = (v if v is not None else args.size for v in (args.m, args.n, args.k))
    return args


def entries(a, b, c):
    """(label, call) pairs; each call sets what it needs (torch's TF32 switch)."""
    def with_pipegemm(variant):
        def call():
            return pipegemm.matmul(a, b, out=c, variant=variant)
        return call

    def with_torch(tf32):
        def call():
            torch.backends.cuda.matmul.allow_tf32 = tf32
            return torch.matmul(a, b, out=c)
        return call

    return [("pipegemm auto", with_pipegemm("auto")),
            ("pipegemm auto_emulated", with_pipegemm("auto_emulated")),
            ("torch.matmul, TF32 off", with_torch(False)),
            ("torch.matmul, TF32 on", with_torch(True))]


def time_ms(call, iters, warmup):
    for _ in range(warmup):
        call()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(iters):
        call()
    end.record()
    end.synchronize()
    return start.elapsed_time(end) / iters


def main():
    args = arguments()
    m, n, k = args.m, args.n, args.k
    torch.manual_seed(args.seed)
    a = torch.randn(m, k, device="cuda")
    b = torch.randn(k, n, device="cuda")
    c = torch.empty(m, n, device="cuda")
    tf32_before = torch.backends.cuda.matmul.allow_tf32
    rows = entries(a, b, c)
    try:
        times = {label: [] for label, _ in rows}
        for _ in range(args.rounds):
            for label, call in rows:
                times[label].append(time_ms(call, args.iters, args.warmup))
        reference = a.double() @ b.double()
        scale = a.abs().double() @ b.abs().double()
        errors = {}
        for label, call in rows:
            call()
            relative = (c.double() - reference).abs() / (U * scale.clamp_min(1e-300))
            errors[label] = relative.max().item()
    finally:
        torch.backends.cuda.matmul.allow_tf32 = tf32_before

    props = torch.cuda.get_device_properties(a.device)
    print(f"{props.name}; torch {torch.__version__}; libpipegemm {pipegemm.version} "
          f"({pipegemm.library_path})")
    print(f"{m}x{n}x{k}, float32; median of {args.rounds} rounds of {args.iters} calls "
          f"(after {args.warmup}); error in u = 2^-24 of sum |a||b| (strict bound "
          f"{8 + math.sqrt(k):.0f} u)")
    base = statistics.median(times["torch.matmul, TF32 off"])
    print(f"{'':24}  {'ms':>8}  {'TFLOP/s':>8}  {'x torch strict':>14}  {'max error (u)':>13}")
    for label, _ in rows:
        ms = statistics.median(times[label])
        print(f"{label:24}  {ms:8.3f}  {2.0 * m * n * k / ms / 1e9:8.1f}  {base / ms:14.2f}  "
              f"{errors[label]:13.1f}")


if __name__ == "__main__":
    main()
