#!/usr/bin/env python3
"""PyTorch op loop: N x `x.add_(1)` on a 256-element CUDA tensor.

    python3 torch_loop.py [N]          (default 50000)

Prints "BENCH us_per_op X": host wall time of the N ops between two
torch.cuda.synchronize() calls, after 1000 warm-up ops; and "BENCH
cpu_us_per_op X": CPU time the launching thread spent issuing them (its
time descheduled on a busy host left out; the final synchronize too).  With
BENCH_TORCH_PROFILER=1 the warm-up and the timed loop run inside
torch.profiler.profile(activities=[CPU, CUDA]) and nothing is exported.
"""

import contextlib
import os
import sys
import time

import torch

WARMUP = 1000


def profiler_context():
    if os.environ.get("BENCH_TORCH_PROFILER") != "1":
        return contextlib.nullcontext()
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])


def finish():
    sys.stdout.flush()
    if os.environ.get("BENCH_TORCH_PROFILER") == "1":
        # The measurement is done; skip torch.profiler's post-processing of
        # every event (seconds of Python work that would only cost bench time).
        os._exit(0)


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 50000
    x = torch.zeros(256, device="cuda")
    torch.cuda.synchronize()
    with profiler_context():
        for _ in range(WARMUP):
            x.add_(1)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        c0 = time.thread_time()
        for _ in range(n):
            x.add_(1)
        c1 = time.thread_time()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        print("BENCH us_per_op %.4f" % ((t1 - t0) * 1e6 / n))
        print("BENCH cpu_us_per_op %.4f" % ((c1 - c0) * 1e6 / n))
        print("BENCH loop_s %.4f" % (t1 - t0))
        print("BENCH launched %d" % (n + WARMUP), flush=True)
        finish()


if __name__ == "__main__":
    main()
