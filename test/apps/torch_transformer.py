"""A small transformer block, forward and backward in bf16, for hardware
metrics and the roofline (gpuprof run --metrics): attention written out as
matrix products and a softmax (every kernel deterministic), a GELU MLP,
layer norms and residual adds.  8192 tokens of width 1024 (MLP 4096): the
GEMMs are large enough to be compute-bound, the elementwise kernels work
on 64 MB tensors (more than an H100's L2), so they are memory-bound.

Three optimizer steps (plain SGD; TRANSFORMER_STEPS=N for N) in NVTX
ranges step > forward, backward, optimizer (with TRANSFORMER_EMIT_NVTX=1,
under torch.autograd.profiler.emit_nvtx(): every op a range too, the
backward pass's on autograd's thread, and TRUTH lines of the ranges' counts
follow); prints RESULT lines with the loss of
each step and a checksum of the bits of the final weights and gradients
(integer arithmetic on the GPU: exact), so runs with and without gpuprof
can be compared bit for bit."""
import contextlib
import os

os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

BATCH, SEQ, WIDTH, HEADS, MLP = 16, 512, 1024, 8, 4096
STEPS = int(os.environ.get("TRANSFORMER_STEPS", "3"))
DT = torch.bfloat16

torch.manual_seed(1234)
torch.use_deterministic_algorithms(True, warn_only=True)
torch.backends.cuda.matmul.allow_tf32 = False


def param(*shape, scale=None):
    scale = scale if scale is not None else shape[-1] ** -0.5
    return (torch.randn(*shape, device="cuda") * scale).to(DT).requires_grad_()


p = {
    "ln1_w": torch.ones(WIDTH, device="cuda", dtype=DT, requires_grad=True),
    "ln1_b": torch.zeros(WIDTH, device="cuda", dtype=DT, requires_grad=True),
    "qkv": param(3 * WIDTH, WIDTH),
    "proj": param(WIDTH, WIDTH),
    "ln2_w": torch.ones(WIDTH, device="cuda", dtype=DT, requires_grad=True),
    "ln2_b": torch.zeros(WIDTH, device="cuda", dtype=DT, requires_grad=True),
    "fc1": param(MLP, WIDTH),
    "fc2": param(WIDTH, MLP),
}


def block(x):
    h = F.layer_norm(x, (WIDTH,), p["ln1_w"], p["ln1_b"])
    q, k, v = F.linear(h, p["qkv"]).split(WIDTH, dim=-1)
    hd = WIDTH // HEADS

    def heads(t):
        return t.view(BATCH, SEQ, HEADS, hd).transpose(1, 2)

    q, k, v = heads(q), heads(k), heads(v)
    att = torch.softmax((q @ k.transpose(-2, -1)) * hd ** -0.5, dim=-1)
    y = (att @ v).transpose(1, 2).reshape(BATCH, SEQ, WIDTH)
    x = x + F.linear(y, p["proj"])
    h = F.layer_norm(x, (WIDTH,), p["ln2_w"], p["ln2_b"])
    return x + F.linear(F.gelu(F.linear(h, p["fc1"])), p["fc2"])


x = torch.randn(BATCH, SEQ, WIDTH, device="cuda", dtype=DT)
target = torch.randn(BATCH, SEQ, WIDTH, device="cuda", dtype=DT)
nvtx = torch.cuda.nvtx
emit = os.environ.get("TRANSFORMER_EMIT_NVTX") == "1"
with torch.autograd.profiler.emit_nvtx() if emit else contextlib.nullcontext():
    for step in range(STEPS):
        nvtx.range_push("step")
        nvtx.range_push("forward")
        out = block(x)
        loss = (out.float() - target.float()).pow(2).mean()
        nvtx.range_pop()
        nvtx.range_push("backward")
        loss.backward()
        nvtx.range_pop()
        nvtx.range_push("optimizer")
        with torch.no_grad():
            for t in p.values():
                t -= 1e-2 * t.grad
        nvtx.range_pop()
        nvtx.range_pop()
        print("RESULT loss", step, repr(loss.item()))
        if step < STEPS - 1:
            for t in p.values():
                t.grad = None
    torch.cuda.synchronize()


def bits_sum(t):
    b = t.detach().contiguous().view(torch.int16).flatten().to(torch.int64)
    w = torch.arange(b.numel(), device="cuda", dtype=torch.int64) % 65521 + 1
    return int((b * w).sum().item())


for name in sorted(p):
    print("RESULT checksum", name, bits_sum(p[name]), bits_sum(p[name].grad))
if emit:
    for name in ("step", "forward", "backward", "optimizer"):
        print("TRUTH nvtx.%s.count %d" % (name, STEPS))
