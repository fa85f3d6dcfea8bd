#!/usr/bin/env python3
"""Ozaki scheme II on INT8 tensor cores, as a prototype on cuBLAS's INT8 GEMM
(torch._int_mm), beside cuBLAS strict FP32 (torch.matmul, TF32 off) in one
process, for bench/results/products/README.md: what an FP32-accurate product
built from INT8 products costs and how accurate it is on this GPU.

    python3 scripts/ozaki2.py [--sizes 2048,4096,8192] [--kinds uniform,wide]
                              [--moduli 6,7,8] [--out FILE.csv]

The form (Ozaki, Uchino and Imamura's scheme II): each row of A and column
of B is scaled by a power of two and truncated to an integer of `bits` bits
(A' = trunc(2^s_i A_i), B' likewise), with K 2^(2 bits) below half the
moduli's product M, so that A'B' is exact as an integer below M / 2; for
each of N pairwise coprime moduli m below 256, the residues of A' and B'
(in -(m-1)/2 .. (m-1)/2, INT8) are multiplied by one INT8 GEMM (INT32 sums,
exact for K < 2^17) and reduced mod m; the Chinese remainder theorem
(Garner's mixed radix, its digits in INT64, their sum in FP64) rebuilds
A'B', and C = 2^-(s_i + s_j) (A'B')_ij. Each call times everything: the
scaling, the residues, the N products and the reconstruction.

Rows: fp32 (cuBLAS strict, the baseline every ratio is to, timed again
beside each size and input), then ozaki2_kN for each N of --moduli. Inputs:
uniform in [-1, 1), and "wide": the same times 2^e, e uniform in [-20, 20]
per element. Error as pipegemm bench reports it: max and mean |c - ref| /
(u sum_k |a_ik| |b_kj|), u = 2^-24, against the FP64 product. Speed: the
median of --iters calls after --warmup, each between CUDA events on torch's
stream. --compile N also runs N moduli with the split and the rebuild each
compiled by torch.compile into fused kernels (the first call, compiling,
is in the warmup): rows ozaki2c_kN. Without a GPU (--device cpu) it runs the same arithmetic on the CPU
at small sizes, to check the form, not to time it.
"""
import argparse
import csv
import math
import sys

import torch

from cuda_timing import time_events

U = 2.0 ** -24
# Pairwise coprime, below 256, largest first: residues in -(m-1)/2 .. (m-1)/2
# fit INT8 (m odd), and a product's sum over K stays exact in INT32 for
# K < 2^31 / 127^2 (about 2^17).
MODULI = (255, 253, 251, 247, 241, 239, 233, 229, 227, 223, 217, 211)


def parse():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="2048,4096,8192",
                   help="M = N = K of each square, comma-separated (default 2048,4096,8192)")
    p.add_argument("--kinds", default="uniform,wide", help="inputs: uniform, wide (default both)")
    p.add_argument("--moduli", default="6,7,8", help="moduli counts (default 6,7,8)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--device", default="cuda", help="cuda (default), or cpu to check the form")
    p.add_argument("--compile", default="",
                   help="moduli counts also run with the split and the rebuild compiled "
                        "(torch.compile; rows ozaki2c_kN), comma-separated (default none)")
    p.add_argument("--out", default="-", help="CSV file (default: standard output)")
    args = p.parse_args()
    try:
        args.sizes = [int(s) for s in args.sizes.split(",")]
        args.moduli = [int(s) for s in args.moduli.split(",") if s]
        args.compile = [int(s) for s in args.compile.split(",") if s]
    except ValueError:
        p.error("--sizes and --moduli take comma-separated integers")
    args.kinds = args.kinds.split(",")
    for kind in args.kinds:
        if kind not in ("uniform", "wide"):
            p.error(f"--kinds: no kind {kind!r} (uniform, wide)")
    for k in args.moduli + args.compile:
        if not 2 <= k <= len(MODULI):
            p.error(f"--moduli: {k} is not in 2..{len(MODULI)}")
    for n in args.sizes:
        if n < 32 or n % 8 or n >= 2 ** 17:
            p.error(f"--sizes: {n} must be a multiple of 8 from 32 below 2^17 (INT8 GEMM, INT32 sums)")
    return args


def int8_mm(x, y):
    """x y of INT8 matrices, exact INT32 sums (cuBLAS's IMMA on the GPU)."""
    if x.is_cuda:
        return torch._int_mm(x, y)
    return (x.to(torch.int64) @ y.to(torch.int64)).to(torch.int32)


class Ozaki2:
    """The form at `count` moduli for inner dimension `k`: its bits per
    element and Garner's constants, fixed once."""

    def __init__(self, count, k):
        self.moduli = MODULI[:count]
        big_m = math.prod(self.moduli)
        # |A'B'| <= K 2^(2 bits) must stay below M / 2.
        self.bits = int(math.floor((math.log2(big_m) - 1 - math.log2(k)) / 2))
        if self.bits < 1:
            raise ValueError(f"{count} moduli hold no bits at K = {k}")
        # Garner: digit v_i = (r_i - x_(i-1)) inv_i mod m_i, inv_i the inverse
        # of m_0 .. m_(i-1) mod m_i; x_(i-1) mod m_i kept as it grows.
        self.inverses = [pow(math.prod(self.moduli[:i]) % m, -1, m) if i else 1
                         for i, m in enumerate(self.moduli)]

    def scales(self, x, dim):
        """2^(bits - 1 - e), e = floor(log2) of the largest |x| along dim (0:
        down the columns), as FP64: the largest lands in [2^(bits-1), 2^bits)."""
        biggest = x.abs().amax(dim=dim, keepdim=True).to(torch.float64)
        e = torch.floor(torch.log2(torch.where(biggest > 0, biggest, torch.ones_like(biggest))))
        return torch.exp2(self.bits - 1 - e)

    @staticmethod
    def residue(x, m):
        r = torch.remainder(x, m)  # 0 .. m - 1
        return torch.where(r > m // 2, r - m, r).to(torch.int8)

    def split(self, a, b):
        """The scales, and A's and B's residues, one INT8 matrix a modulus."""
        sa, sb = self.scales(a, 1), self.scales(b, 0)
        ai = torch.trunc(a.to(torch.float64) * sa).to(torch.int64)
        bi = torch.trunc(b.to(torch.float64) * sb).to(torch.int64)
        return (sa, sb, [self.residue(ai, m) for m in self.moduli],
                [self.residue(bi, m) for m in self.moduli])

    def rebuild(self, products, sa, sb):
        """C from the products' residues (INT32), by Garner's mixed radix."""
        value = None
        partial = None  # x so far, mod each modulus
        step = 1        # m_0 .. m_(i-1)
        for i, m in enumerate(self.moduli):
            r = torch.remainder(products[i].to(torch.int64), m)
            v = r if i == 0 else torch.remainder((r - partial[i]) * self.inverses[i], m)
            v = torch.where(v > m // 2, v - m, v)  # the digit, symmetric
            if partial is None:
                partial = [torch.remainder(v, mj) for mj in self.moduli]
            else:
                for j in range(i + 1, len(self.moduli)):
                    mj = self.moduli[j]
                    partial[j] = torch.remainder(partial[j] + v * (step % mj), mj)
            term = v.to(torch.float64) * float(step)
            value = term if value is None else value + term
            step *= m
        return (value / (sa * sb)).to(torch.float32)

    def __call__(self, a, b):
        sa, sb, ra, rb = self.split(a, b)
        return self.rebuild([int8_mm(x, y) for x, y in zip(ra, rb)], sa, sb)

    def compiled(self):
        """The same with the split and the rebuild each one torch.compile'd
        graph (fused passes over memory, as a kernel would make them); the
        products stay cuBLAS's."""
        split, rebuild = torch.compile(self.split), torch.compile(self.rebuild)

        def run(a, b):
            sa, sb, ra, rb = split(a, b)
            return rebuild([int8_mm(x, y) for x, y in zip(ra, rb)], sa, sb)
        return run


def inputs(kind, n, seed, device):
    g = torch.Generator(device="cpu").manual_seed(seed)
    a = torch.rand((n, n), generator=g, dtype=torch.float32) * 2 - 1
    b = torch.rand((n, n), generator=g, dtype=torch.float32) * 2 - 1
    if kind == "wide":
        a = a * torch.exp2(torch.randint(-20, 21, (n, n), generator=g).to(torch.float32))
        b = b * torch.exp2(torch.randint(-20, 21, (n, n), generator=g).to(torch.float32))
    return a.to(device), b.to(device)


def errors(c, a, b):
    a64, b64 = a.to(torch.float64), b.to(torch.float64)
    ref, scale = a64 @ b64, a64.abs() @ b64.abs()
    keep = scale > 0
    rel = torch.where(keep, (c.to(torch.float64) - ref).abs() / (U * torch.where(keep, scale, 1.0)),
                      torch.zeros_like(ref))
    return float(rel.max()), float(rel.sum() / keep.sum())


def time_ms(fn, warmup, iters, cuda):
    if cuda:
        return time_events(fn, warmup, iters)
    for _ in range(warmup):
        fn()
    return float("nan")


def main():
    args = parse()
    cuda = args.device == "cuda"
    if cuda and not torch.cuda.is_available():
        print("ozaki2.py: no CUDA GPU for torch (--device cpu checks the form)", file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False  # fp32: cuBLAS strict
    out = sys.stdout if args.out == "-" else open(args.out, "w", newline="")
    name = torch.cuda.get_device_name() if cuda else "cpu"
    print(f"# ozaki2.py on {name}, torch {torch.__version__}", file=out)
    print(f"# command_line: {' '.join(sys.argv)}", file=out)
    writer = csv.writer(out)
    writer.writerow(["form", "kind", "size", "products", "bits", "median_ms", "tflops",
                     "x_fp32", "err_u_max", "err_u_mean"])
    for n in args.sizes:
        flops = 2.0 * n ** 3
        for kind in args.kinds:
            a, b = inputs(kind, n, args.seed, args.device)
            strict = lambda: a @ b  # noqa: E731
            base = time_ms(strict, args.warmup, args.iters, cuda)
            forms = [("fp32", 1, 24, strict)]
            for count in args.moduli:
                form = Ozaki2(count, n)
                forms.append((f"ozaki2_k{count}", count, form.bits, lambda f=form: f(a, b)))
            for count in args.compile:
                form = Ozaki2(count, n)
                forms.append((f"ozaki2c_k{count}", count, form.bits,
                              lambda f=form.compiled(): f(a, b)))
            for label, products, bits, fn in forms:
                ms = base if label == "fp32" else time_ms(fn, args.warmup, args.iters, cuda)
                emax, emean = errors(fn(), a, b)
                writer.writerow([label, kind, n, products, bits, f"{ms:.4f}",
                                 f"{flops / ms / 1e9:.1f}" if cuda else "",
                                 f"{base / ms:.3f}" if cuda else "",
                                 f"{emax:.3f}", f"{emean:.4f}"])
                out.flush()
    if out is not sys.stdout:
        out.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
