#!/usr/bin/env python3
"""Communication exposed or hidden behind compute: a 2-rank NCCL job.

    torchrun --standalone --nproc-per-node 2 test/apps/torch_nccl_overlap.py \
        [problem|fixed] [--steps S] [--reps M] [--compute ew|mm] [--op NAME] [--elems N]

Each rank uses its own GPU (LOCAL_RANK).  A step computes BUCKETS buckets
of a gradient, each M compute kernels and one that writes the bucket
(32 MiB of float32), and all-reduces each bucket (SUM, NCCL):

  problem  the all-reduces run after the step's compute, one after another,
           and the compute of the next step waits for them (a gradient
           all-reduced after the backward pass): the NCCL kernels run alone.
  fixed    the same kernels and the same all-reduces, overlapped as DDP's
           buckets are: each bucket's all-reduce is launched (async_op) as
           soon as the bucket is written and runs on NCCL's stream while
           the next bucket's compute runs; a bucket waits for its previous
           all-reduce only before it is written again, a step later.  Only
           the last all-reduce of the last step has nothing beside it.

The compute kernels (--compute ew, the default) are PyTorch elementwise
kernels (--op, torch.lgamma by default) over --elems float32 values (8M:
32 MiB in and out, about an H100's or H200's L2): many short blocks, so an NCCL kernel gets
its SMs as soon as it may run and both share the GPU, and compute-bound,
so that the all-reduce beside them slows them little (on an H200, sin over
128 MiB, memory-bound, let the overlap save 0.52 of the NCCL time alone;
lgamma over 4M values 0.75, its stake then within 12% of the saving; at
4M a kernel ran 12 us on the GPU, less than PyTorch takes to launch one
on some hosts, and the GPU idled between them).  A kernel's time is
calibrated over 10 launched back to back, not one: around one, CUDA's
events also time its launch.  With --compute mm they are
bf16 matrix products; cuBLAS's Hopper GEMMs may hold every SM for the whole
product (persistent kernels), so NCCL then waits for them and the overlap
saves less (real overlap of GEMMs needs an SM carve-out).  Both modes run
NCCL on a high-priority stream with at most 4 CTAs (NCCL_MAX_CTAS, unless
set): the communication takes little from the compute beside it.

M is calibrated on the ranks (the larger of their times) so that a bucket's
compute takes three times its all-reduce alone (the all-reduce beside it
runs longer than alone: twice left some of it in the open), and S so that the steps'
all-reduces take about a second in all, unless given; the twin is given
the problem's S and M, so both do the same work.  The S steps are measured
after 5 warm-up steps, between torch.cuda.profiler.start() and stop()
(`gpuprof run --capture-range=cudaProfilerApi` records only them), bounded
by torch.cuda.synchronize() and a barrier before.

Prints, for its rank r:
  TRUTH nccl.r.wall_ns     wall time of the S measured steps
  TRUTH nccl.r.steps       S
  TRUTH nccl.r.reps        M
  TRUTH nccl.r.buckets     buckets per step
  TRUTH nccl.r.comm_ns     one bucket's all-reduce alone (calibration, max of ranks)
  TRUTH nccl.r.kernel_ns   one compute kernel alone (calibration, max of ranks)
  TRUTH nccl.r.line        line of this file that launches the measured all-reduces
or "SKIP reason" without 2 GPUs, CUDA or NCCL.
"""
import math
import os
import sys
import time

BUCKETS = 4
BUCKET_ELEMS = 8 << 20          # 32 MiB of float32 per bucket
WORK_ELEMS = 8 << 20            # compute kernels read and write 32 MiB each
KERNEL_BATCH = 10               # kernels launched back to back to time one
WARMUP = 5
RATIO = 3.0                     # a bucket's compute / its all-reduce alone
TARGET_COMM_S = 1.0             # the measured steps' all-reduces, in all


def arg(name, default):
    if name in sys.argv:
        return sys.argv[sys.argv.index(name) + 1]
    return default


def line_of(tag):
    """The line of this file holding the comment "site: TAG"."""
    with open(os.path.abspath(__file__)) as f:
        for n, text in enumerate(f, 1):
            if text.rstrip().endswith("# site: " + tag):
                return n
    raise RuntimeError("no line tagged " + tag)


def say(text):
    # One write(2) of whole lines: the ranks share the pipe, and a write of
    # less than PIPE_BUF bytes is never interleaved with another.
    sys.stdout.flush()
    os.write(1, text.encode())


mode = "fixed" if "fixed" in sys.argv[1:] else "problem"
compute = arg("--compute", "ew")
rank = int(os.environ.get("RANK", "0"))
try:
    import torch
    import torch.distributed as dist
except ImportError as e:
    say("SKIP no PyTorch (%s)\n" % e)
    sys.exit(0)
if not torch.cuda.is_available() or torch.cuda.device_count() < 2:
    say("SKIP NCCL needs a GPU per rank; %d here\n"
        % (torch.cuda.device_count() if torch.cuda.is_available() else 0))
    sys.exit(0)
if not dist.is_available() or not dist.is_nccl_available():
    say("SKIP this PyTorch has no NCCL\n")
    sys.exit(0)

# The communication takes few SMs, and is scheduled ahead of queued compute
# blocks: what overlapping it costs the compute stays small.
os.environ.setdefault("NCCL_MAX_CTAS", "4")
os.environ.setdefault("NCCL_MAX_NCHANNELS", "4")  # NCCL before 2.17
dev = int(os.environ.get("LOCAL_RANK", rank)) % torch.cuda.device_count()
torch.cuda.set_device(dev)
try:
    opts = dist.ProcessGroupNCCL.Options()
    opts.is_high_priority_stream = True
    dist.init_process_group("nccl", pg_options=opts)
except (AttributeError, TypeError):
    dist.init_process_group("nccl")
world = dist.get_world_size()

grads = [torch.zeros(BUCKET_ELEMS, device="cuda") for _ in range(BUCKETS)]
if compute == "mm":
    n = 4096
    a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16) * 0.01
    w = torch.randn(n, n, device="cuda", dtype=torch.bfloat16) * 0.01
    out = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)

    def kernel():
        torch.mm(a, w, out=out)

    def write(b):
        torch.mul(out.view(-1)[:BUCKET_ELEMS], 1.0, out=grads[b])
else:
    elems = int(arg("--elems", WORK_ELEMS))
    src = torch.rand(elems, device="cuda")
    dst = torch.empty(elems, device="cuda")
    op = getattr(torch, arg("--op", "lgamma"))

    def kernel():
        op(src, out=dst)

    def write(b):
        n = min(elems, BUCKET_ELEMS)
        torch.mul(dst[:n], 0.5, out=grads[b][:n])


def step_problem(reps, pending):
    for b in range(BUCKETS):
        for _ in range(reps):
            kernel()
        write(b)
    for b in range(BUCKETS):
        dist.all_reduce(grads[b])  # site: problem


def step_fixed(reps, pending):
    for b in range(BUCKETS):
        if pending[b] is not None:
            pending[b].wait()   # the bucket's last all-reduce, before it is written again
        for _ in range(reps):
            kernel()
        write(b)
        pending[b] = dist.all_reduce(grads[b], async_op=True)  # site: fixed


def drain(pending):
    for b in range(BUCKETS):
        if pending[b] is not None:
            pending[b].wait()
            pending[b] = None
    torch.cuda.synchronize()


def timed(fn, n):
    """Median time of fn on the GPU, in ns, over n runs."""
    ts = []
    for _ in range(n):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        dist.barrier()
        torch.cuda.synchronize()
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) * 1e6)
    return sorted(ts)[n // 2]


step = step_fixed if mode == "fixed" else step_problem
pending = [None] * BUCKETS
# NCCL's communicators, the kernels' first launches.
step(1, pending)
drain(pending)

# Calibration, the larger time of the ranks.
comm_ns = timed(lambda: dist.all_reduce(grads[0]), 7)
kernel_ns = timed(lambda: [kernel() for _ in range(KERNEL_BATCH)], 7) / KERNEL_BATCH
t = torch.tensor([comm_ns, kernel_ns], device="cuda", dtype=torch.float64)
dist.all_reduce(t, op=dist.ReduceOp.MAX)
comm_ns, kernel_ns = float(t[0]), float(t[1])
reps = int(arg("--reps", 0)) or max(2, math.ceil(RATIO * comm_ns / kernel_ns))
steps = int(arg("--steps", 0)) or max(20, min(2000, math.ceil(TARGET_COMM_S * 1e9 /
                                                              (BUCKETS * comm_ns))))

for _ in range(WARMUP):
    step(reps, pending)
drain(pending)
dist.barrier()
torch.cuda.synchronize()
torch.cuda.profiler.start()
t0 = time.perf_counter_ns()
for _ in range(steps):
    step(reps, pending)
drain(pending)
wall = time.perf_counter_ns() - t0
torch.cuda.profiler.stop()

say("".join("TRUTH nccl.%d.%s %d\n" % (rank, k, v) for k, v in (
    ("wall_ns", wall), ("steps", steps), ("reps", reps), ("buckets", BUCKETS),
    ("comm_ns", comm_ns), ("kernel_ns", kernel_ns), ("line", line_of(mode)))))
dist.barrier()
dist.destroy_process_group()
