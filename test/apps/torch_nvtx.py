"""NVTX from PyTorch with known structure, for the NVTX tests.

A range pushed before CUDA starts, then 3 "step" ranges each holding a
"forward" range with 10 x.add_ launches and one mark, then a start/end range
around 5 x.mul_ launches.  Prints TRUTH lines with the expected counts.
"""
import torch

torch.cuda.nvtx.range_push("before_cuda")
x = torch.ones(1 << 20, device="cuda")
torch.cuda.synchronize()
torch.cuda.nvtx.range_pop()

STEPS, ADDS, MULS = 3, 10, 5
for step in range(STEPS):
    torch.cuda.nvtx.range_push("step")
    torch.cuda.nvtx.range_push("forward")
    for _ in range(ADDS):
        x.add_(1.0)
    torch.cuda.nvtx.range_pop()
    torch.cuda.nvtx.mark("step_done")
    torch.cuda.nvtx.range_pop()
r = torch.cuda.nvtx.range_start("startend")
for _ in range(MULS):
    x.mul_(1.0)
torch.cuda.nvtx.range_end(r)
torch.cuda.synchronize()
print(f"TRUTH nvtx.step.count {STEPS}")
print(f"TRUTH nvtx.step.kernels {STEPS * ADDS}")
print(f"TRUTH nvtx.forward.count {STEPS}")
print(f"TRUTH nvtx.forward.kernels {STEPS * ADDS}")
print(f"TRUTH nvtx.startend.kernels {MULS}")
print(f"TRUTH nvtx.mark.count {STEPS}")
