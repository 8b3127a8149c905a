"""PyTorch under gpuprof run --metrics: a 4096^3 half-precision GEMM
(2 * 4096^3 tensor-core FLOPs), elementwise ops, and a CUDA graph that is
captured and replayed (its launches are never profiled).  Prints RESULT
lines to compare runs with and without --metrics."""
import torch

torch.manual_seed(1)
a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
c = a @ b
x = torch.arange(4096, device="cuda", dtype=torch.float32)
y = x.sin()
s = torch.cuda.Stream()
s.wait_stream(torch.cuda.current_stream())
with torch.cuda.stream(s):
    z = x.cos() * 2
torch.cuda.current_stream().wait_stream(s)
g = torch.cuda.CUDAGraph()
with torch.cuda.graph(g):
    z = x.cos() * 2
g.replay()
g.replay()
torch.cuda.synchronize()
print("RESULT gemm", c.float().sum().item(), c[17, 4000].item())
print("RESULT sin", y.sum().item())
print("RESULT graph", z.sum().item())
