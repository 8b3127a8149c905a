#!/usr/bin/env python3
"""A GPU-bound training step: 4 transformer encoder layers (d_model 1024,
16 heads, feed-forward 4096), batch 16 x sequence 512, bf16 autocast, AdamW;
forward + backward + optimizer step.

    python3 train_step.py [STEPS] [WARMUP]      (defaults 200 and 20)

Prints "BENCH ms_per_step X": host wall time of STEPS steps between two
torch.cuda.synchronize() calls, after WARMUP untimed steps.  With
BENCH_TORCH_PROFILER=1 the warm-up and the timed steps run inside
torch.profiler.profile(activities=[CPU, CUDA]) and nothing is exported.
"""

import contextlib
import os
import sys
import time

import torch

LAYERS = 4
D_MODEL = 1024
HEADS = 16
FFN = 4096
BATCH = 16
SEQ = 512


def profiler_context():
    if os.environ.get("BENCH_TORCH_PROFILER") != "1":
        return contextlib.nullcontext()
    from torch.profiler import ProfilerActivity, profile
    return profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA])


def finish():
    sys.stdout.flush()
    if os.environ.get("BENCH_TORCH_PROFILER") == "1":
        # Measurement done; skip torch.profiler's post-processing.
        os._exit(0)


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    warmup = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    torch.manual_seed(0)
    dev = torch.device("cuda")
    with dev:
        model = torch.nn.Sequential(*[
            torch.nn.TransformerEncoderLayer(d_model=D_MODEL, nhead=HEADS,
                                             dim_feedforward=FFN, batch_first=True)
            for _ in range(LAYERS)])
        x = torch.randn(BATCH, SEQ, D_MODEL)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
    model.train()

    def step():
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            out = model(x)
            loss = out.float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    with profiler_context():
        for _ in range(warmup):
            step()
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        print("BENCH ms_per_step %.4f" % ((t1 - t0) * 1e3 / steps))
        print("BENCH loop_s %.4f" % (t1 - t0))
        finish()


if __name__ == "__main__":
    main()
