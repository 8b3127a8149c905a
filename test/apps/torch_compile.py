#!/usr/bin/env python3
"""Launch sites of code compiled by torch.compile: Inductor's generated
Triton kernels are launched through Triton's and Inductor's launchers; the
report folds those frames so that a site starts at the generated code and
the user's own line follows.

Truth (test/gpu/run.py, --backtrace=python):

  compile.site.FILE:LINE.FUNC N  the user's line that calls the compiled
                                function, N times in the loop (every Triton
                                kernel launched there comes from it)

The last line, "result ...", is the same with and without the recorder.
Prints "SKIP <reason>" and exits 0 without PyTorch, a GPU or a working
torch.compile (Triton needs a C compiler).
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

CALLS = 50
HERE = os.path.abspath(__file__)


def fused(x, y):
    return torch.relu(x * y + 1.0).sin() * 0.5


compiled = torch.compile(fused)


def step(x, y):
    return compiled(x, y)  # the user's line: COMPILE_SITE


def main():
    x = torch.randn(1 << 20, device="cuda")
    y = torch.randn(1 << 20, device="cuda")
    try:
        step(x, y)  # compiles and warms up
    except Exception as e:  # no compiler, no Triton
        print("SKIP torch.compile failed: %s" % str(e).splitlines()[0][:200])
        sys.exit(0)
    torch.cuda.synchronize()
    line = next(i for i, l in enumerate(open(HERE), 1) if l.rstrip().endswith("COMPILE_SITE"))
    print("TRUTH compile.site.%s:%d.step %d" % (os.path.basename(HERE), line, CALLS))
    out = None
    for _ in range(CALLS):
        out = step(x, y)
    torch.cuda.synchronize()
    print("result %.4f" % float(out[:1024].sum().item()))


if __name__ == "__main__":
    main()
