#!/usr/bin/env python3
"""A GPU-bound training step: 4 transformer encoder layers (d_model 1024,
16 heads, feed-forward 4096), batch 16 x sequence 512, bf16 autocast, AdamW;
forward + backward + optimizer step.

AdamW is written out with torch._foreach ops: the math and the kernels of
torch.optim.AdamW(foreach=True), without torch.optim's first-call import of
torch._dynamo (several seconds per process, paid once per configuration and
repetition).

    python3 train_step.py [--careful] [STEPS] [WARMUP]      (defaults 200 and 20)

Prints "BENCH ms_per_step X": host wall time of STEPS steps between two
torch.cuda.synchronize() calls, after WARMUP steps (their time, the first
step's kernel selection and any profiler's first encounters included, is
"BENCH warmup_s"; "BENCH loop_t0_ns" and "BENCH loop_t1_ns" are the timed
steps' start and end on CLOCK_REALTIME, the trace clock).  BENCH_SETTLE_S=S
sleeps S seconds after the model is on the GPU, before the warm-up.  With
BENCH_MARKS=N prints "BENCH marks" after the loop: the host's seconds for
each N timed steps (where the loop stalled; no synchronization added).  With
BENCH_TORCH_PROFILER=1 the warm-up and the timed steps run inside
torch.profiler.profile(activities=[CPU, CUDA]) and nothing is exported.

--careful marks the steady state for a profiler: the timed steps run
between torch.cuda.profiler.start() and stop() (cudaProfilerStart/Stop),
so that `gpuprof run --capture-range=cudaProfilerApi` records them and
not the warm-up (module loading, kernel selection, the allocator's first
growth).  The loop itself never synchronizes with the host (no .item(), no
copies to the CPU) in either mode.  A careful run also gives the GPU enough
work per launch to stay ahead of Python (a batch of 4 x BATCH sequences): with
16, the host's time to launch a step (autograd, the optimizer) exceeds the
GPU's, and the GPU waits on the interpreter between kernels.
"""

import contextlib
import math
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


class AdamW:
    """torch.optim.AdamW (decoupled weight decay, bias correction), foreach form."""

    def __init__(self, params, lr=1e-4, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        self.params = [p for p in params if p.requires_grad]
        self.lr, self.b1, self.b2 = lr, betas[0], betas[1]
        self.eps, self.wd = eps, weight_decay
        self.m = [torch.zeros_like(p) for p in self.params]
        self.v = [torch.zeros_like(p) for p in self.params]
        self.t = 0

    @torch.no_grad()
    def step(self):
        self.t += 1
        grads = [p.grad for p in self.params]
        torch._foreach_mul_(self.params, 1 - self.lr * self.wd)
        torch._foreach_lerp_(self.m, grads, 1 - self.b1)
        torch._foreach_mul_(self.v, self.b2)
        torch._foreach_addcmul_(self.v, grads, grads, 1 - self.b2)
        bc1 = 1 - self.b1 ** self.t
        bc2 = 1 - self.b2 ** self.t
        denom = torch._foreach_sqrt(self.v)
        torch._foreach_div_(denom, math.sqrt(bc2))
        torch._foreach_add_(denom, self.eps)
        torch._foreach_addcdiv_(self.params, self.m, denom, -self.lr / bc1)

    def zero_grad(self):
        for p in self.params:
            p.grad = None


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
    args = [a for a in sys.argv[1:] if a != "--careful"]
    careful = len(args) < len(sys.argv) - 1
    steps = int(args[0]) if len(args) > 0 else 200
    warmup = int(args[1]) if len(args) > 1 else 20
    torch.manual_seed(0)
    dev = torch.device("cuda")
    with dev:
        model = torch.nn.Sequential(*[
            torch.nn.TransformerEncoderLayer(d_model=D_MODEL, nhead=HEADS,
                                             dim_feedforward=FFN, batch_first=True)
            for _ in range(LAYERS)])
        x = torch.randn(BATCH * 4 if careful else BATCH, SEQ, D_MODEL)
    opt = AdamW(model.parameters(), lr=1e-4)
    model.train()

    def step():
        with torch.autocast(device_type="cuda", dtype=torch.bfloat16):
            out = model(x)
            loss = out.float().pow(2).mean()
        loss.backward()
        opt.step()
        opt.zero_grad()

    settle = float(os.environ.get("BENCH_SETTLE_S") or 0)
    if 0 < settle <= 60:
        torch.cuda.synchronize()
        time.sleep(settle)

    with profiler_context():
        torch.cuda.synchronize()
        tw = time.perf_counter()
        for _ in range(warmup):
            step()
        torch.cuda.synchronize()
        if careful:
            torch.cuda.profiler.start()
        every = int(os.environ.get("BENCH_MARKS") or 0)
        marks = []
        r0 = time.time_ns()
        t0 = time.perf_counter()
        for i in range(steps):
            step()
            if every > 0 and (i + 1) % every == 0:
                marks.append(time.perf_counter())
        torch.cuda.synchronize()
        t1 = time.perf_counter()
        r1 = time.time_ns()
        if careful:
            torch.cuda.profiler.stop()
        print("BENCH ms_per_step %.4f" % ((t1 - t0) * 1e3 / steps))
        print("BENCH loop_s %.4f" % (t1 - t0))
        print("BENCH warmup_s %.4f" % (t0 - tw))
        print("BENCH loop_t0_ns %d\nBENCH loop_t1_ns %d" % (r0, r1), flush=True)
        if marks:
            print("BENCH marks " + " ".join("%.4f" % (b - a) for a, b in zip([t0] + marks, marks)))
        finish()


if __name__ == "__main__":
    main()
