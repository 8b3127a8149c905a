#!/usr/bin/env python3
"""torch.profiler beside gpuprof: prints the CUDA events torch.profiler saw.

Two profiling sessions (torch.profiler.profile with CPU and CUDA
activities) around a known workload, each inside an NVTX range
"profiled_N" so that gpuprof's trace can be cut to the same window.
Prints one line per session:

  EVENTS <session> <json list of [name, count] of CUDA kernel and memory events>

and "TRUTH kineto.kernels.<session> N".  test/gpu/run.py runs it with and
without gpuprof: the lists must be equal, and gpuprof's kernels inside
profiled_N must equal torch.profiler's kernels of session N.
With TORCH_PROFILER_EARLY=1 a first session, "early", starts before any
CUDA call (torch.profiler's CUPTI set-up then comes before CUDA's
initialization) and creates the tensors inside it.
Prints "SKIP <reason>" and exits 0 without PyTorch or a GPU.
"""
import collections
import json
import os
import sys

try:
    import torch
    from torch.profiler import ProfilerActivity, profile
except Exception as e:  # noqa: BLE001
    print("SKIP no PyTorch (%s)" % e)
    sys.exit(0)
EARLY = os.environ.get("TORCH_PROFILER_EARLY") == "1"


def report(session, prof):
    cuda = [e for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    names = collections.Counter(e.name for e in cuda)
    print("EVENTS %s %s" % (session, json.dumps(sorted(names.items()))))
    kernels = [e for e in cuda if not e.name.startswith(("Memcpy", "Memset"))]
    print("TRUTH kineto.kernels.%s %d" % (session, len(kernels)))
    sys.stdout.flush()


def tensors():
    x = torch.ones(1 << 20, device="cuda")
    a = torch.randn(256, 256, device="cuda")
    torch.cuda.synchronize()
    return x, a


if EARLY:
    # Nothing has touched CUDA yet (is_available would initialize it).
    torch.cuda.nvtx.range_push("profiled_early")
    try:
        with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
            x, a = tensors()
            for _ in range(4):
                x.add_(1.0)
            torch.cuda.synchronize()
    except RuntimeError as e:
        print("SKIP no CUDA device (%s)" % e)
        sys.exit(0)
    torch.cuda.nvtx.range_pop()
    report("early", prof)
else:
    if not torch.cuda.is_available():
        print("SKIP no CUDA device")
        sys.exit(0)
    x, a = tensors()


def work(n):
    for _ in range(n):
        x.add_(1.0)
    for _ in range(3):
        a.mul_(1.0)
    b = a @ a
    c = b.cpu()
    torch.cuda.synchronize()
    return c


work(5)  # warm-up: lazy loading, cuBLAS handles
for session, n in ((0, 20), (1, 7)):
    torch.cuda.nvtx.range_push("profiled_%d" % session)
    with profile(activities=[ProfilerActivity.CPU, ProfilerActivity.CUDA]) as prof:
        work(n)
    torch.cuda.nvtx.range_pop()
    report(session, prof)
