"""The timer the torch-based scripts share (peers-emulated.py, ozaki2.py):
the median milliseconds of calls, each between CUDA events on torch's
current stream."""
import statistics

import torch


def time_events(fn, warmup, iters):
    """Median milliseconds of fn() over `iters` calls after `warmup`, each
    between CUDA events on torch's stream."""
    for _ in range(warmup):
        fn()
    times = []
    for _ in range(iters):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)
