#!/usr/bin/env python3
"""Python launch sites: two Python functions, each launching a known number
of kernels from one line, and a backward pass (kernels launched by
autograd's own thread, with no Python frame).

Truth (test/gpu/run.py, --backtrace=python and mixed):

  pysite.FILE:LINE.FUNC N   exactly N kernel launches come from that line of
                            that function (x.add_(1.0) and x.mul_(1.0) on a
                            contiguous float32 CUDA tensor are one
                            elementwise kernel each).
  backward.runs N           backward passes run (their kernels come from
                            autograd's device thread).
  backward_nvtx.FILE:LINE.FUNC N
                            backward passes run under emit_nvtx whose
                            forward ops are on that line: at least N of
                            their kernels (one per pass for the product's
                            gradient) belong to that forward site.

The last line, "result ...", is the same with and without the recorder.
Prints "SKIP <reason>" and exits 0 without PyTorch or a GPU.
"""
import os
import sys

try:
    import torch
except ImportError:
    print("SKIP PyTorch is not installed")
    sys.exit(0)
if not torch.cuda.is_available():
    print("SKIP torch.cuda.is_available() is False")
    sys.exit(0)

N_A = 37
N_B = 23
BACKWARD = 3
BACKWARD_NVTX = 4
HERE = os.path.abspath(__file__)


def marked(tag):
    """The line of this file that ends with the comment '# @tag'."""
    with open(HERE, encoding="utf-8") as f:
        for i, line in enumerate(f, 1):
            if line.rstrip().endswith("# @" + tag):
                return i
    raise SystemExit("marker %s missing" % tag)


def adds(x, n):
    for _ in range(n):
        x.add_(1.0)  # @adds


def muls(x, n):
    for _ in range(n):
        x.mul_(1.0)  # @muls


def main():
    x = torch.zeros(1 << 16, device="cuda")
    w = torch.ones(1 << 10, device="cuda", requires_grad=True)
    torch.cuda.synchronize()
    adds(x, N_A)
    muls(x, N_B)
    for _ in range(BACKWARD):
        (w * 2.0).sum().backward()
    torch.cuda.synchronize()
    with torch.autograd.profiler.emit_nvtx():
        for _ in range(BACKWARD_NVTX):
            (w * 3.0).sum().backward()  # @fwd
        torch.cuda.synchronize()
    base = os.path.basename(HERE)
    print("TRUTH pysite.%s:%d.adds %d" % (base, marked("adds"), N_A))
    print("TRUTH pysite.%s:%d.muls %d" % (base, marked("muls"), N_B))
    print("TRUTH backward.runs %d" % BACKWARD)
    print("TRUTH backward_nvtx.%s:%d.main %d" % (base, marked("fwd"), BACKWARD_NVTX))
    print("result x=%.1f grad=%.1f" % (x[0].item(), w.grad[0].item()), flush=True)


if __name__ == "__main__":
    main()
