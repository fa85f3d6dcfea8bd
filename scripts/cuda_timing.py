"""The timer the torch-based scripts share (peers-emulated.py, ozaki2.py):
the median milliseconds of calls, each between CUDA events on torch's
current stream.

The calls are enqueued back to back and waited for once at the end, as a
program that keeps the GPU busy runs them: the host's cost of a call (a
Python binding's, a library's planning) counts only where it exceeds the
GPU's time, not added to every call as a wait after each one would add it."""
import statistics

import torch


def time_events(fn, warmup, iters):
    """Median milliseconds of fn() over `iters` calls after `warmup`, each
    between CUDA events on torch's stream, with no wait between calls."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(iters)]
    for start, end in events:
        start.record()
        fn()
        end.record()
    torch.cuda.synchronize()
    return statistics.median(start.elapsed_time(end) for start, end in events)
