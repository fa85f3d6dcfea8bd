#!/usr/bin/env python3
"""A small MLP trained three ways in one process, against an FP64 run:

  torch FP32         torch's default: cuBLAS, strict FP32
  torch TF32         torch.backends.cuda.matmul.allow_tf32 = True
  pipegemm emulated  the same model inside pipegemm.torch.use("emulated"):
                     every matmul, forward and backward, on auto_emulated

    python3 python/examples/train.py [--hidden 4096] [--layers 2] [--batch 4096]
                                     [--steps 20] [--warmup 3] [--lr 1e-3]

The three FP32 models start from the same weights and see the same batches;
their steps alternate (one step of each in turn), so that clocks and
temperature drift over all of them alike. A row's step time is the median of
its timed steps (CUDA events around forward, backward and the SGD update).
The FP64 run is the same model in float64, trained afterwards: each row
prints how far its final loss, its first step's weight gradients (the
largest |g - g64| over the largest |g64|) and its final weights (the largest
|w - w64| over the largest |w64 - w0|, against what training moved them by)
are from it, the worst layer shown. The weights also carry FP32's rounding
of each SGD update, alike in every row; the gradients show the matmuls.
"""
import argparse
import copy
import statistics

import torch

import pipegemm


def arguments():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--hidden", type=int, default=4096, help="width of every layer (4096)")
    parser.add_argument("--layers", type=int, default=2, help="Linear layers (2)")
    parser.add_argument("--batch", type=int, default=4096, help="rows per step (4096)")
    parser.add_argument("--steps", type=int, default=20, help="timed steps (20)")
    parser.add_argument("--warmup", type=int, default=3, help="steps before timing (3)")
    parser.add_argument("--lr", type=float, default=1e-3, help="SGD learning rate")
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    for name in ("hidden", "layers", "batch", "steps"):
        if getattr(args, name) < 1:
            parser.error(f"--{name} must be at least 1")
    if args.warmup < 0:
        parser.error("--warmup must be at least 0")
    return args


def model_of(args):
    layers = []
    for i in range(args.layers):
        layers.append(torch.nn.Linear(args.hidden, args.hidden))
        if i + 1 < args.layers:
            layers.append(torch.nn.GELU())
    return torch.nn.Sequential(*layers)


def batches(args, count):
    generator = torch.Generator(device="cuda").manual_seed(args.seed + 1)
    shape = (args.batch, args.hidden)
    return [(torch.randn(shape, device="cuda", generator=generator),
             torch.randn(shape, device="cuda", generator=generator)) for _ in range(count)]


class Run:
    """One way to train: its model, its optimizer, how its matmuls run."""

    def __init__(self, label, model, setup):
        self.label, self.model, self.setup = label, model, setup
        self.optimizer = torch.optim.SGD(model.parameters(), lr=ARGS.lr)
        self.times, self.loss, self.first_grads = [], None, None

    def step(self, x, target, timed):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        with self.setup():
            start.record()
            self.optimizer.zero_grad(set_to_none=True)
            loss = torch.nn.functional.mse_loss(self.model(x), target)
            loss.backward()
            if self.first_grads is None:
                self.first_grads = [p.grad.detach().double().clone()
                                    for name, p in self.model.named_parameters()
                                    if name.endswith("weight")]
            self.optimizer.step()
            end.record()
        end.synchronize()
        if timed:
            self.times.append(start.elapsed_time(end))
        self.loss = loss.item()


class TorchMatmul:
    """torch's own matmuls, with TF32 on or off for the block."""

    def __init__(self, tf32):
        self.tf32 = tf32

    def __call__(self):
        return self

    def __enter__(self):
        self.before = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = self.tf32

    def __exit__(self, *exc):
        torch.backends.cuda.matmul.allow_tf32 = self.before


def weight_distance(model, reference, initial):
    """The largest |w - w64| over the largest |w64 - w0|, of the worst layer:
    how much of what FP64 training moved the weights by is off."""
    worst = 0.0
    for (name, w), w64, w0 in zip(model.named_parameters(), reference.parameters(),
                                  initial.parameters()):
        if name.endswith("weight"):
            moved = (w64 - w0.double()).abs().max().item() or 1.0
            worst = max(worst, (w.double() - w64).abs().max().item() / moved)
    return worst


def gradient_distance(run, reference):
    """The first step's weight gradients against FP64's: the largest
    |g - g64| over the largest |g64|, of the worst layer."""
    return max((g - g64).abs().max().item() / (g64.abs().max().item() or 1.0)
               for g, g64 in zip(run.first_grads, reference.first_grads))


def main():
    torch.manual_seed(ARGS.seed)
    initial = model_of(ARGS).cuda()
    data = batches(ARGS, ARGS.warmup + ARGS.steps)
    runs = [Run("torch FP32", copy.deepcopy(initial), TorchMatmul(False)),
            Run("torch TF32", copy.deepcopy(initial), TorchMatmul(True)),
            Run("pipegemm emulated", copy.deepcopy(initial),
                lambda: pipegemm.torch.use(precision="emulated"))]
    flops = 3 * 2 * ARGS.batch * ARGS.hidden * ARGS.hidden * ARGS.layers
    print(f"MLP: {ARGS.layers} x Linear({ARGS.hidden}, {ARGS.hidden}), batch {ARGS.batch}, "
          f"SGD lr {ARGS.lr}, {ARGS.warmup} + {ARGS.steps} steps on "
          f"{torch.cuda.get_device_name()}; matmul work {flops / 1e9:.0f} GFLOP a step", flush=True)
    for i, (x, target) in enumerate(data):
        for run in runs:
            run.step(x, target, timed=i >= ARGS.warmup)
    reference = Run("FP64", copy.deepcopy(initial).double(), TorchMatmul(False))
    for x, target in data:
        reference.step(x.double(), target.double(), timed=False)
    base = statistics.median(runs[0].times)
    print(f"{'':18} {'step ms':>9} {'vs FP32':>8} {'matmul TFLOP/s':>15} "
          f"{'final loss':>12} {'|loss-loss64|':>14} {'grads vs FP64':>14} "
          f"{'weights vs FP64':>16}")
    for run in runs:
        ms = statistics.median(run.times)
        print(f"{run.label:18} {ms:9.3f} {base / ms:7.2f}x {flops / ms / 1e9:15.1f} "
              f"{run.loss:12.8f} {abs(run.loss - reference.loss):14.3e} "
              f"{gradient_distance(run, reference):14.3e} "
              f"{weight_distance(run.model, reference.model, initial):16.3e}")
    print(f"{'torch FP64':18} {'':>9} {'':>8} {'':>15} {reference.loss:12.8f}")


if __name__ == "__main__":
    ARGS = arguments()
    main()
