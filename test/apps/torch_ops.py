#!/usr/bin/env python3
"""PyTorch workload with ground truth that holds whatever kernels PyTorch picks.

PyTorch chooses kernel names, extra helper kernels and library (cuBLAS)
kernels itself, so this script does not predict names or totals.  It issues
operations whose activity is exact one-for-one and prints truth keys that
test/gpu/run.py checks in a name-agnostic way:

  kernel.match.add.count N      some kernel whose name contains "add" ran
                                exactly N times.  x.add_(1.0) on a contiguous
                                float32 CUDA tensor is one elementwise kernel
                                (CUDAFunctorOnSelf_add in current PyTorch);
                                nothing else here adds, and an exact count
                                cannot be matched by accident by cuBLAS
                                kernels whose names contain "Add".
  kernel.match.add.in_graph G   of those, G ran inside CUDA graph replays.
  kernel.match.mul.count N      same for x.mul_(1.0) (MulFunctor).
  kernel.total.min N            at least N kernel records (adds, muls, one
                                or more kernels per torch.mm, fills).
  memcpy.<kind>.size.<bytes> N  exactly N copies of that kind had exactly that
                                size: x.cpu() is one DtoH copy of the whole
                                tensor, .cuda() / .to(non_blocking=True) one
                                HtoD copy, clone() of a contiguous tensor one
                                DtoD cudaMemcpyAsync.  Other copies PyTorch
                                makes (e.g. .item()) have other sizes.

Prints "SKIP <reason>" and exits 0 without PyTorch or a GPU.
"""
import sys

try:
    import torch
except ImportError:
    print("SKIP PyTorch is not installed")
    sys.exit(0)
if not torch.cuda.is_available():
    print("SKIP torch.cuda.is_available() is False")
    sys.exit(0)

N_ELEM = 1 << 20          # float32 elements: 4 MiB
N_ADD = 1000              # eager x.add_(1.0)
N_MUL = 300               # eager x.mul_(1.0)
N_MM = 16                 # torch.mm
GRAPH_ADDS = 4            # x.add_(1.0) captured into one CUDA graph
GRAPH_REPLAYS = 25
CPU_COPIES = 3            # x.cpu()
H2D_PAGEABLE = 2
H2D_PINNED = 2
CLONES = 2
H2D_ELEM = 3 << 18        # 3 MiB, a size no other copy here has

adds = muls = 0
dev = torch.device("cuda")

x = torch.ones(N_ELEM, device=dev)

# Warm-up: first use of each op (module loading, cuBLAS handle).  Counted.
x.add_(1.0)
adds += 1
x.mul_(1.0)
muls += 1
a = torch.randn(512, 512, device=dev)
b = torch.randn(512, 512, device=dev)
c = torch.mm(a, b)
torch.cuda.synchronize()

for _ in range(N_ADD):
    x.add_(1.0)
adds += N_ADD
for _ in range(N_MUL):
    x.mul_(1.0)
muls += N_MUL
for _ in range(N_MM):
    c = torch.mm(a, b)
torch.cuda.synchronize()

# CUDA graph: captured launches do not run; each replay runs GRAPH_ADDS.
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    for _ in range(GRAPH_ADDS):
        x.add_(1.0)
for _ in range(GRAPH_REPLAYS):
    g.replay()
adds += GRAPH_ADDS * GRAPH_REPLAYS
torch.cuda.synchronize()

for _ in range(CPU_COPIES):
    y = x.cpu()
src = torch.arange(H2D_ELEM, dtype=torch.float32)
for _ in range(H2D_PAGEABLE):
    d = src.cuda()
pinned = src.pin_memory()
for _ in range(H2D_PINNED):
    d = pinned.to(dev, non_blocking=True)
for _ in range(CLONES):
    z = x.clone()
torch.cuda.synchronize()

# x started at 1, each add +1, mul by 1 keeps it
expect = 1.0 + adds
assert y[0].item() == expect, (y[0].item(), expect)
assert z[-1].item() == expect
assert d[-1].item() == float(H2D_ELEM - 1)

truth = {
    "kernel.match.add.count": adds,
    "kernel.match.add.in_graph": GRAPH_ADDS * GRAPH_REPLAYS,
    "kernel.match.mul.count": muls,
    "kernel.total.min": adds + muls + 1 + N_MM + 1,
    "memcpy.DtoH.size.%d" % (N_ELEM * 4): CPU_COPIES,
    "memcpy.HtoD.size.%d" % (H2D_ELEM * 4): H2D_PAGEABLE + H2D_PINNED,
    "memcpy.DtoD.size.%d" % (N_ELEM * 4): CLONES,
}
for k, v in truth.items():
    print("TRUTH %s %d" % (k, v))
sys.stdout.flush()
