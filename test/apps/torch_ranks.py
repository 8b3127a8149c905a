#!/usr/bin/env python3
"""A 2-rank torchrun job with CUDA work per rank and NVTX steps.

    torchrun --nproc-per-node 2 test/apps/torch_ranks.py [gloo|nccl]

Each rank runs STEPS steps, each an NVTX range "step" holding ADDS
x.add_ kernels; rank 1 works longer in step 1 (more adds), so the report
names it the slowest there.  With gloo the ranks share one GPU and
all-reduce a CPU tensor (no NCCL kernels); with nccl each rank needs its
own GPU and every step all-reduces a CUDA tensor (one NCCL kernel each),
and the final barrier is one more.
Prints "TRUTH rank.<r>.add <n>" and "TRUTH rank.<r>.nccl <n>" lines.
"""
import os
import sys

import torch
import torch.distributed as dist

backend = sys.argv[1] if len(sys.argv) > 1 else "gloo"
rank = int(os.environ["RANK"])
dev = rank % torch.cuda.device_count() if backend == "nccl" else 0
torch.cuda.set_device(dev)
dist.init_process_group(backend)
STEPS, ADDS = 4, 50
x = torch.ones(1 << 20, device="cuda")
t = torch.ones(16, device="cuda" if backend == "nccl" else "cpu")
adds = nccl = 0
for step in range(STEPS):
    torch.cuda.nvtx.range_push("step")
    n = ADDS * (8 if (rank == 1 and step == 1) else 1)
    for _ in range(n):
        x.add_(1.0)
    adds += n
    torch.cuda.synchronize()
    dist.all_reduce(t)
    nccl += backend == "nccl"
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
dist.barrier()
nccl += backend == "nccl"  # NCCL's barrier is an all-reduce of its own: one kernel
# One write(2) of whole lines: the ranks share the pipe, and a write of less
# than PIPE_BUF bytes is never interleaved with another.
sys.stdout.flush()
os.write(1, ("TRUTH rank.%d.add %d\nTRUTH rank.%d.nccl %d\n" % (rank, adds, rank, nccl)).encode())
dist.destroy_process_group()
