#!/usr/bin/env python3
"""gpuprof overhead benchmarks.

    python3 bench/bench.py BUILD_DIR [--only NAME[,NAME...]] [--quick]
                           [--json PATH] [--dry-run] [--report-from PATH]

Runs each workload under each profiler configuration, interleaved per
repetition (A B C ... A B C ...), and prints one markdown report (medians,
ratios taken within this run, trace sizes, memory, analyzer speed, targets)
to stdout and to BUILD_DIR/bench/results.md; every run's numbers go to
BUILD_DIR/bench/raw.csv.  The programs must already be built
(bench/build.sh BUILD_DIR).

Workloads (--only takes these names): launch, launch-mt, torch, train,
graph, long, metrics, analyzer.  Only "analyzer" runs without a GPU.

Two more rows run only when --only names them (bench/sampling.py says
how they measure): "overtime", --gpu-metrics and --gpu-telemetry against
tracing alone on the launch loop and the training step, side by side with
nsys --gpu-metrics-devices=all; "fleet", --sample=1s/60s and 1s/2s against
no tool and --start=dormant.  Both together share their common runs.
--json PATH writes every run of them (and the raw rows of the others) as
JSON; --report-from PATH prints their report again from such a file;
--dry-run prints the commands they would run and the time they would take,
and runs nothing (no GPU needed).  Their environment:
  BENCH_OT_REPS=N (4; quick 2), BENCH_OT_TORCH_REPS=N (2; quick 1),
  BENCH_OT_REF_REPS=N (nsys on the launch loop, 1), BENCH_OT_TORCH_REF_REPS=N
  (nsys on the training step, 1; quick 0), BENCH_OT_LAUNCHES=N (200000),
  BENCH_OT_STEPS=N (60), BENCH_OT_WARMUP=N (3), BENCH_OT_SETTLE_S=S (1.5),
  BENCH_OT_BUDGET_S=S (345; quick 150), BENCH_NSYS_GM_FREQ=HZ (nsys's
  --gpu-metrics-frequency; default nsys's own), BENCH_OT_CONFIGS=A,B (only these
  configurations, e.g. none,gp-sample with BENCH_OT_LAUNCHES sized for loops of
  a minute and more: --sample=1s/60s measured over whole periods),
  BENCH_OT_WORKLOADS=A,B (only these workloads: launch, train)

"metrics" is the cost of hardware metrics (--metrics) on the training step
(train_step.py): the first steps, where every kernel and launch
configuration is profiled once, and the steps after, against tracing
alone; side by side with Nsight Compute (ncu --section SpeedOfLight
--section SpeedOfLight_RooflineChart) on the same program, per profiled
kernel.  The launch workload's "gp-mx-idle" configuration is --metrics
with a kernel filter that matches nothing: the cost of the metrics hooks
when no launch is profiled.

Environment:
  BENCH_QUICK=1         fewer repetitions, smaller workloads, no multi-thread
                        launch loop, no reference tools on the PyTorch
                        workloads (same as --quick)
  BENCH_REPS=N          repetitions of the CUDA C workloads (default 5, quick 3)
  BENCH_REF_REPS=N      ... of nsys on them (default 3, quick 1)
  BENCH_TORCH_REPS=N    repetitions of the PyTorch workloads (default 3, quick 1);
                        each run pays ~5-10 s of PyTorch start-up
  BENCH_TORCH_REF_REPS=N  ... of torch.profiler and nsys on them (default 1,
                        quick 0)
  BENCH_BUDGET_S=S      wall-time budget of the measurements in seconds
                        (default 430, quick 150); a repetition that would not
                        fit is left out and the report says so
  BENCH_CONFIGS=A,B   run only these configurations (e.g. none,gp-default,
                      gp-dormant,gp-flight: the always-on rows); "none" is
                      always run, every ratio needs it
  BENCH_NSYS=PATH     nsys binary (default: searched)
  BENCH_NCU=PATH      ncu binary (default: searched under /opt/nvidia)
  BENCH_NCU_KERNELS=N kernels ncu profiles in the metrics comparison
                      (default 60, quick 30)
  BENCH_MX_REPS=N     runs of no tool, tracing only and --metrics in the
                      metrics comparison, interleaved; medians (default 3,
                      quick 1)
  BENCH_PYTHON=PATH   Python with PyTorch (default: this interpreter)
  BENCH_KEEP=1        keep the per-run working directories (traces)

Python 3.8+, standard library only.
"""

import argparse
import csv
import datetime
import glob
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import sampling

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HERE = os.path.join(ROOT, "bench")
CUDA_HOME = os.environ.get("CUDA_HOME", "/usr/local/cuda")

# Environment that would change how (or whether) a program is traced.
SCRUB_ENV = ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH",
             "BENCH_TORCH_PROFILER", "MINCUPTI_GRAPH")

# Limits the targets table checks.
RSS_ADDED_MAX_MIB = 64
RSS_FLAT_MAX_MIB = 8     # "flat": growth 200k -> end beyond the unprofiled run's
ANALYZER_MIN_RATE = 20e6
ANALYZER_MAX_BPR = 24
SQLITE_MIN_RATE = 1e6    # rows/s of export --format sqlite
PERFETTO_MIN_RATE = 5e6  # records/s of export --format perfetto
PERFETTO_MAX_BPK = 40.0  # bytes of its output per kernel slice, kernel-only trace

CONFIG_ORDER = ["none", "mincupti", "mincupti-graph", "gp-device", "gp-default",
                "gp-graph", "gp-bt", "gp-py", "gp-dormant", "gp-flight", "gp-mx-idle", "torch.profiler",
                "nsys", "nsys-node"]
# nsys-node: nsys with --cuda-graph-trace=node, the per-node peer of gpuprof's
# default graph mode (nsys's own default traces whole graphs).
REFERENCE = ("nsys", "nsys-node", "torch.profiler")
GPUPROF_CONFIGS = ("gp-device", "gp-default", "gp-graph", "gp-bt", "gp-py", "gp-dormant", "gp-flight",
                   "gp-mx-idle")
# gp-mx-idle: --metrics with a kernel filter that matches nothing (the hooks, no replay).
MX_IDLE_FILTER = "^no_kernel_has_this_name$"
# The metrics comparison: profiled kernels per tool, and the target.
MX_TARGET_RATIO = 0.1
MX_STEPS, MX_WARMUP = 20, 3
# gp-dormant: loaded with --start=dormant and never started (writes nothing);
# gp-flight: --flight-recorder=FLIGHT_SIZE, one dump at exit.
FLIGHT_SIZE = "256M"
# The long run's flight recorder: small enough to fill within the first
# half of the run (about 7 bytes per launch with API records), so that the
# second half shows its memory staying flat.
LONG_FLIGHT_SIZE = "8M"
LONG_FLIGHT_MIB = 8


def log(msg):
    sys.stderr.write(msg + "\n")
    sys.stderr.flush()


def env_int(name, default):
    v = os.environ.get(name)
    if v is None or v == "":
        return default
    try:
        return int(v)
    except ValueError:
        log("bench: ignoring %s=%r (not an integer)" % (name, v))
        return default


class NotAvailable(Exception):
    """A configuration cannot run here; the message says why."""


# ------------------------------------------------------------------ processes

class Result:
    def __init__(self):
        self.rc = None
        self.out = ""
        self.err = ""
        self.wall = 0.0
        self.maxrss_kib = 0
        self.timed_out = False
        self.stopped = False     # killed on purpose after stop_regex matched


def run_proc(argv, env=None, cwd=None, timeout=60, keep_stdout=True, stop_regex=None,
             grace=3.0):
    """Runs argv in its own session with stdout/stderr in temporary files.

    Returns a Result; wall is the wall time from spawn to exit, maxrss_kib
    the child's peak RSS (wait4).  On timeout the process group is killed.
    With stop_regex, the group is also killed grace seconds after stdout
    first matches it, if it has not exited by then."""
    res = Result()
    with tempfile.TemporaryFile() as fo, tempfile.TemporaryFile() as fe:
        t0 = time.perf_counter()
        try:
            p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                                 stdout=fo if keep_stdout else subprocess.DEVNULL,
                                 stderr=fe, env=env, cwd=cwd, start_new_session=True)
        except OSError as e:
            res.rc = 127
            res.err = "cannot run %s: %s" % (argv[0], e)
            return res
        done = threading.Event()

        def kill():
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except OSError:
                pass

        def watch():
            kill_at = None
            pat = re.compile(stop_regex.encode(), re.M) if stop_regex else None
            while not done.wait(0.2):
                now = time.perf_counter()
                if now - t0 > timeout:
                    res.timed_out = True
                    kill()
                    return
                if pat and kill_at is None:
                    size = os.fstat(fo.fileno()).st_size
                    if size and pat.search(os.pread(fo.fileno(), min(size, 1 << 20), 0)):
                        kill_at = now + grace
                if kill_at is not None and now >= kill_at:
                    res.stopped = True
                    kill()
                    return

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        try:
            _, status, ru = os.wait4(p.pid, 0)
        finally:
            done.set()
            watcher.join()
        res.wall = time.perf_counter() - t0
        if os.WIFSIGNALED(status):
            p.returncode = -os.WTERMSIG(status)
        else:
            p.returncode = os.WEXITSTATUS(status)
        # Leftovers of the program's process group (helpers it started).
        kill()
        res.rc = p.returncode
        res.maxrss_kib = ru.ru_maxrss
        fo.seek(0)
        fe.seek(0)
        res.out = fo.read().decode(errors="replace")
        res.err = fe.read().decode(errors="replace")
    return res


def tail(text, lines=4):
    t = [ln for ln in text.strip().splitlines() if ln.strip()]
    return " | ".join(t[-lines:])[-400:]


def parse_bench(out):
    vals = {}
    for m in re.finditer(r"^BENCH (\S+) (\S+)\s*$", out, re.M):
        try:
            vals[m.group(1)] = float(m.group(2))
        except ValueError:
            pass
    return vals


# ------------------------------------------------------------------ formatting

# One formatting for every table of RESULTS.md: sampling.py's.
fmt = sampling.fmt
fmt_ratio = sampling.fr
md_table = sampling.md_table
median = sampling.median


def mx_median(rs):
    """One configuration's runs of the metrics comparison as one: the
    medians of its numbers over the runs that succeeded (all its walls
    kept in "walls"), or its first failure."""
    good = [r for r in rs if r["status"] == "ok"]
    if not good:
        return rs[0]
    out = dict(good[0])
    out["walls"] = [r["wall"] for r in good]
    out["wall"] = median(out["walls"])
    for k in ("profiled", "cached", "cost_ns"):
        xs = [r[k] for r in good if r.get(k) is not None]
        out[k] = median(xs) if xs else None
    out["vals"] = {k: median([r["vals"][k] for r in good if k in r["vals"]])
                   for k in good[0]["vals"]}
    return out


# ------------------------------------------------------------------ environment

def gpu_absent():
    try:
        p = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        listed = p.returncode == 0 and re.search(rb"^GPU \d+", p.stdout, re.M)
    except (OSError, subprocess.SubprocessError):
        listed = False
    return not listed or not os.path.exists("/dev/nvidia0")


def cmd_output(argv, timeout=60, env=None):
    try:
        p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           stdin=subprocess.DEVNULL, timeout=timeout, env=env)
        return p.returncode, p.stdout.decode(errors="replace")
    except (OSError, subprocess.SubprocessError) as e:
        return None, str(e)


def find_nsys():
    cands = []
    if os.environ.get("BENCH_NSYS"):
        cands.append(os.environ["BENCH_NSYS"])
    w = shutil.which("nsys")
    if w:
        cands.append(w)
    for pat in (CUDA_HOME + "/bin/nsys",
                "/opt/nvidia/nsight-systems/*/bin/nsys",
                "/opt/nvidia/nsight-systems/*/target-linux-x64/nsys",
                "/opt/nvidia/nsight-systems-cli/*/bin/nsys",
                "/opt/nvidia/nsight-systems-cli/*/target-linux-x64/nsys",
                "/opt/nvidia/nsight-compute/*/host/target-linux-x64/nsys",
                CUDA_HOME + "/nsight-systems*/bin/nsys",
                "/usr/local/cuda*/nsight-systems*/bin/nsys"):
        cands.extend(sorted(glob.glob(pat), reverse=True))
    for c in cands:
        if os.path.isfile(c) and os.access(c, os.X_OK):
            rc, out = cmd_output([c, "--version"], timeout=60)
            if rc == 0:
                return c, out.strip().splitlines()[-1] if out.strip() else "?"
    return None, None


# ------------------------------------------------------------------ the bench

class Bench:
    def __init__(self, build, only, quick):
        self.build = os.path.abspath(build)
        self.out_dir = os.path.join(self.build, "bench")
        self.work = os.path.join(self.out_dir, "work")
        self.quick = quick
        self.only = only
        self.reps = max(1, env_int("BENCH_REPS", 3 if quick else 5))
        self.ref_reps = max(0, min(self.reps, env_int("BENCH_REF_REPS", 1 if quick else 3)))
        self.torch_reps = max(1, env_int("BENCH_TORCH_REPS", 1 if quick else 3))
        self.configs = set(os.environ.get("BENCH_CONFIGS", "").split(",")) - {""}
        self.torch_ref_reps = max(0, min(self.torch_reps,
                                         env_int("BENCH_TORCH_REF_REPS", 0 if quick else 1)))
        self.budget = env_int("BENCH_BUDGET_S", 150 if quick else 430)
        self.last_wall = {}     # (workload, config) -> seconds its last run took
        self.keep = os.environ.get("BENCH_KEEP") == "1"
        self.t_start = time.time()
        self.deadline = self.t_start + self.budget
        self.gpuprof = os.path.join(self.build, "bin", "gpuprof")
        self.analyzer = os.path.join(self.build, "bin", "gpuprof-analyze")
        self.lib = os.path.join(self.build, "lib", "libgpuprof.so")
        self.mincupti = os.path.join(self.out_dir, "libmincupti.so")
        self.python = os.environ.get("BENCH_PYTHON") or sys.executable or "python3"
        self.runs = {}          # (workload, config) -> list of run dicts
        self.by_rep = {}        # (workload, config) -> {repetition: metric}
        self.cpu_by_rep = {}    # (workload, config) -> {repetition: cpu_us_per_op}
        self.state = {}         # (workload, config) -> {"fails": n, "skip": reason}
        self.traces = {}        # (workload, config) -> trace info dict
        self.inspected = set()
        self.mincupti_counts = {}
        self.errors = []        # (workload, config, rep, message)
        self.raw = []
        self.info = {}
        self.reps_done = 0
        self.stop_reason = None
        self.long = {}
        self.mx = {}            # the metrics comparison: config -> numbers
        self.analyzer_res = {}
        self.flight_size = None  # the long run sets its own
        self.sampling = None    # the overtime and fleet rows (bench/sampling.py)
        self.base_env = {k: v for k, v in os.environ.items()
                         if k not in SCRUB_ENV and not k.startswith("GPUPROF_")}

    # ---------------------------------------------------------- setup

    def bin(self, name):
        return os.path.join(self.out_dir, name)

    def probe(self, gpu):
        info = self.info
        info["host"] = socket.gethostname()
        info["date"] = datetime.datetime.now(datetime.timezone.utc).strftime(
            "%Y-%m-%d %H:%M:%S UTC")
        try:
            with open("/proc/cpuinfo") as f:
                m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
            info["cpu"] = "%s (%d CPUs)" % (m.group(1).strip() if m else "?",
                                            os.cpu_count() or 0)
        except OSError:
            info["cpu"] = "?"
        rc, out = cmd_output([os.path.join(CUDA_HOME, "bin", "nvcc"), "--version"])
        m = re.search(r"release ([\d.]+), (V[\d.]+)", out or "")
        info["cuda"] = "%s (%s)" % (m.group(1), m.group(2)) if m else "?"
        if os.path.exists(self.gpuprof):
            rc, out = cmd_output([self.gpuprof, "--version"])
            info["gpuprof"] = out.strip().splitlines()[0] if rc == 0 and out.strip() else "?"
        else:
            info["gpuprof"] = "not built"
        if not gpu:
            return
        rc, out = cmd_output(["nvidia-smi", "--query-gpu=name,driver_version,pci.bus_id",
                              "--format=csv,noheader"])
        gpus = [ln.strip() for ln in (out or "").splitlines() if ln.strip()] if rc == 0 else []
        info["gpu"] = "; ".join(gpus) if gpus else "?"
        rc, out = cmd_output(["nvidia-smi"])
        m = re.search(r"CUDA Version:\s*([\d.]+)", out or "")
        info["driver_cuda"] = m.group(1) if m else "?"
        self.nsys, nsys_ver = find_nsys()
        info["nsys"] = ("%s (%s)" % (self.nsys, nsys_ver)) if self.nsys else "not found"
        self.has_gpuprof = all(os.path.exists(p) for p in (self.gpuprof, self.lib, self.analyzer))
        self.has_bt = self.has_py = False
        if self.has_gpuprof:
            rc, out = cmd_output([self.gpuprof, "run", "--help"])
            self.has_bt = "--backtrace" in (out or "")
            self.has_py = "(python)" in (out or "")
        self.torch_reason = None
        if self.wants("torch") or self.wants("train") or self.wants("metrics"):
            rc, out = cmd_output(
                [self.python, "-c",
                 "import torch,sys;print('torch', torch.__version__, 'cuda', torch.version.cuda);"
                 "sys.exit(0 if torch.cuda.is_available() else 3)"],
                timeout=300, env=self.base_env)
            if rc == 0:
                info["torch"] = out.strip().splitlines()[-1]
            else:
                self.torch_reason = "no PyTorch with CUDA"
                info["torch"] = "unavailable (%s)" % tail(out or "", 1)
        else:
            info["torch"] = "not used"

    def wants(self, name):
        return not self.only or name in self.only

    # ---------------------------------------------------------- configurations

    def command(self, cfg, prog, workdir):
        """(argv, extra env) running prog under configuration cfg."""
        extra = {}
        if cfg == "none":
            return prog, extra
        if cfg in ("mincupti", "mincupti-graph"):
            if not os.path.exists(self.mincupti):
                raise NotAvailable("mincupti not built")
            extra["CUDA_INJECTION64_PATH"] = self.mincupti
            if cfg == "mincupti-graph":
                extra["MINCUPTI_GRAPH"] = "1"
            return prog, extra
        if cfg in GPUPROF_CONFIGS:
            if not self.has_gpuprof:
                raise NotAvailable("gpuprof not built")
            opts = {"gp-device": ["--trace=kernel,memcpy,memset"],
                    "gp-default": [],
                    "gp-graph": ["--graph-trace=graph"],
                    "gp-bt": ["--backtrace=kernel"],
                    "gp-py": ["--backtrace=python"],
                    "gp-dormant": ["--start=dormant"],
                    "gp-flight": ["--flight-recorder=" + (self.flight_size or FLIGHT_SIZE)],
                    "gp-mx-idle": ["--metrics=roofline",
                                   "--metrics-kernels=" + MX_IDLE_FILTER]}[cfg]
            if (cfg == "gp-bt" and not self.has_bt) or (cfg == "gp-py" and not self.has_py):
                raise NotAvailable("not built")
            return ([self.gpuprof, "run", "--report=none", "-f", "-o",
                     os.path.join(workdir, "trace-%p")] + opts + ["--"] + prog), extra
        if cfg == "torch.profiler":
            extra["BENCH_TORCH_PROFILER"] = "1"
            return prog, extra
        if cfg in ("nsys", "nsys-node"):
            if not self.nsys:
                raise NotAvailable("nsys not found")
            # Its temporary files (tens of MB per run) go to workdir too.
            extra["TMPDIR"] = workdir
            node = ["--cuda-graph-trace=node"] if cfg == "nsys-node" else []
            return ([self.nsys, "profile", "-t", "cuda"] + node + ["-o",
                     os.path.join(workdir, "nsys"), "--force-overwrite", "true"] + prog), extra
        raise NotAvailable("unknown configuration")

    # ---------------------------------------------------------- workloads

    def workloads(self):
        q = self.quick
        py = self.python
        ws = [
            dict(name="launch", title="1 empty launches, 1 thread", metric="us_per_launch",
                 unit="µs/launch", timeout=90, trace_size=True,
                 prog=[self.bin("launch_loop"), "st", "100000" if q else "200000"],
                 configs=["none", "mincupti", "gp-device", "gp-default", "gp-bt", "gp-dormant",
                          "gp-flight", "gp-mx-idle", "nsys"]),
            dict(name="launch-mt", title="1 empty launches, 8 threads × 8 streams",
                 metric="us_per_launch", unit="µs/launch", timeout=90,
                 prog=[self.bin("launch_loop"), "mt", "12500" if q else "25000", "8"],
                 configs=["none", "mincupti", "gp-device", "gp-default", "gp-bt", "nsys"],
                 skip_quick=True),
            dict(name="torch", title="2 torch x.add_(1) loop", metric="us_per_op",
                 unit="µs/op", timeout=240, torch=True,
                 prog=[py, os.path.join(HERE, "torch_loop.py"), "25000" if q else "50000"],
                 configs=["none", "mincupti", "gp-device", "gp-default", "gp-bt", "gp-py",
                          "torch.profiler", "nsys"]),
            dict(name="train", title="3 transformer train step", metric="ms_per_step",
                 unit="ms/step", timeout=300, torch=True, trace_size=True,
                 prog=[py, os.path.join(HERE, "train_step.py"), "50" if q else "100",
                       "5" if q else "10"],
                 configs=["none", "mincupti", "gp-device", "gp-default", "gp-bt", "gp-dormant",
                          "gp-flight", "torch.profiler", "nsys"]),
            dict(name="graph", title="4 graph replay (100 kernels)", metric="us_per_replay",
                 unit="µs/replay", timeout=120,
                 prog=[self.bin("graph_replay"), "1000" if q else "2000", "100"],
                 configs=["none", "mincupti", "mincupti-graph", "gp-device", "gp-default",
                          "gp-graph", "gp-bt", "nsys", "nsys-node"]),
        ]
        return [w for w in ws if self.wants(w["name"]) and not (q and w.get("skip_quick"))]

    def reps_for(self, w, cfg):
        if w.get("torch"):
            return self.torch_ref_reps if cfg in REFERENCE else self.torch_reps
        return self.ref_reps if cfg in REFERENCE else self.reps

    def workdir(self, tag):
        d = os.path.join(self.work, tag)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        return d

    def cleanup(self, d):
        if not self.keep:
            shutil.rmtree(d, ignore_errors=True)

    def add_raw(self, w, cfg, rep, status, res, vals):
        base = [w, cfg, rep, status, res.rc if res else "", "%.3f" % res.wall if res else ""]
        if vals:
            for k, v in sorted(vals.items()):
                self.raw.append(base + [k, v])
        else:
            self.raw.append(base + ["", ""])

    def note_error(self, w, cfg, rep, msg):
        self.errors.append((w, cfg, rep, msg))
        log("bench: %s/%s rep %d: %s" % (w, cfg, rep, msg))

    def export_json(self, path, timeout=180):
        res = run_proc([self.analyzer, "export", "--format", "json", path],
                       env=self.base_env, timeout=timeout)
        if res.rc != 0:
            raise RuntimeError("export failed: " + tail(res.err, 2))
        return json.loads(res.out)

    def trace_files(self, res, workdir):
        files = re.findall(r"^gpuprof: trace written to (.*)$", res.err, re.M)
        files = [f for f in files if os.path.exists(f)]
        return files or sorted(glob.glob(os.path.join(workdir, "*.gpuprof")))

    def inspect_trace(self, w, cfg, rep, res, workdir, vals):
        """First successful gpuprof run of (w, cfg): size, counts, losses."""
        files = self.trace_files(res, workdir)
        if not files:
            self.note_error(w, cfg, rep, "no trace file written")
            return
        try:
            j = self.export_json(files[0])
        except (RuntimeError, ValueError) as e:
            self.note_error(w, cfg, rep, str(e))
            return
        counts = j.get("counts", {})
        self.traces[(w, cfg)] = dict(
            files=len(files), bytes=sum(os.path.getsize(f) for f in files),
            kernel=counts.get("kernel", 0), graph=counts.get("graph", 0),
            api=counts.get("api", 0), records=counts.get("records", 0),
            lost=j.get("lost", {}).get("total", 0),
            launched=vals.get("launched"), graph_launches=vals.get("graph_launches"))

    def run_one(self, w, cfg, rep):
        key = (w["name"], cfg)
        tag = "%s-%s-%d" % (w["name"], cfg, rep)
        d = self.workdir(tag)
        try:
            argv, extra = self.command(cfg, w["prog"], d)
        except NotAvailable as e:
            self.state.setdefault(key, {})["skip"] = "n/a (%s)" % e
            self.cleanup(d)
            return
        env = dict(self.base_env)
        env.update(extra)
        timeout = max(30, min(w["timeout"], self.deadline + 60 - time.time()))
        # nsys spends from seconds to minutes after the program is done
        # (writing and importing its capture); the measurement is out by then.
        stop = r"^BENCH %s " % re.escape(w["metric"]) if cfg.startswith("nsys") else None
        t0 = time.time()
        res = run_proc(argv, env=env, cwd=d, timeout=timeout, stop_regex=stop)
        vals = parse_bench(res.out)
        metric = vals.get(w["metric"])
        ok = metric is not None and (cfg.startswith("nsys") or (res.rc == 0 and not res.timed_out))
        st = self.state.setdefault(key, {"fails": 0})
        if res.timed_out:
            status = "timeout"
        elif ok:
            status = "ok"
        else:
            status = "error"
        self.add_raw(w["name"], cfg, rep, status, res, vals)
        if ok:
            self.runs.setdefault(key, []).append(metric)
            self.by_rep.setdefault(key, {})[rep] = metric
            if vals.get("cpu_us_per_op") is not None:
                self.cpu_by_rep.setdefault(key, {})[rep] = vals["cpu_us_per_op"]
            log("  %-9s %-14s rep %d: %s %s (%.1f s)" % (
                w["name"], cfg, rep, fmt(metric), w["unit"], res.wall))
            m = re.search(r"mincupti: (\d+) records \((\d+) kernel, (\d+) graph, (\d+) dropped\)",
                          res.err)
            if m and key not in self.mincupti_counts:
                self.mincupti_counts[key] = dict(
                    records=int(m.group(1)), kernel=int(m.group(2)),
                    graph=int(m.group(3)), dropped=int(m.group(4)),
                    launched=vals.get("launched"), graph_launches=vals.get("graph_launches"))
            if cfg in GPUPROF_CONFIGS and cfg != "gp-dormant" and key not in self.inspected:
                self.inspected.add(key)
                self.inspect_trace(w["name"], cfg, rep, res, d, vals)
            self.last_wall[key] = time.time() - t0
        else:
            st["fails"] = st.get("fails", 0) + 1
            why = "timed out after %d s" % timeout if res.timed_out else \
                "exit %s, no %s line" % (res.rc, w["metric"]) if metric is None else \
                "exit %s" % res.rc
            self.note_error(w["name"], cfg, rep, "%s; stderr: %s" % (why, tail(res.err)))
            if res.timed_out or st["fails"] >= 2:
                st["skip"] = "timeout" if res.timed_out else "error"
        self.cleanup(d)

    def scheduled(self, ws, rep):
        """(workload, config) pairs that repetition rep (1-based) runs."""
        return [(w, cfg) for w in ws for cfg in w["configs"]
                if rep <= self.reps_for(w, cfg)
                and (not self.configs or cfg in self.configs or cfg == "none")
                and not self.state.get((w["name"], cfg), {}).get("skip")]

    def estimate(self, ws, rep):
        return sum(self.last_wall.get((w["name"], c), w["timeout"] / 4.0)
                   for w, c in self.scheduled(ws, rep))

    def run_reps(self):
        ws = self.workloads()
        for w in ws:
            if w.get("torch") and self.torch_reason:
                for cfg in w["configs"]:
                    self.state[(w["name"], cfg)] = {"skip": "n/a (%s)" % self.torch_reason}
        nreps = max([self.reps_for(w, c) for w in ws for c in w["configs"]] or [0])
        for rep in range(1, nreps + 1):
            todo = self.scheduled(ws, rep)
            if not todo:
                break
            if rep > 1:
                need = self.estimate(ws, rep) * 1.05 + self.long_reserve()
                if time.time() + need > self.deadline:
                    self.stop_reason = ("stopped after repetition %d: repetition %d and what "
                                        "follows it (~%.0f s) would exceed the %d s budget" % (
                                            rep - 1, rep, need, self.budget))
                    log("bench: " + self.stop_reason)
                    break
            log("bench: repetition %d of %d" % (rep, nreps))
            for w, cfg in todo:
                if not self.state.get((w["name"], cfg), {}).get("skip"):
                    self.run_one(w, cfg, rep)
            self.reps_done = rep

    # ---------------------------------------------------------- long run

    def long_n(self, cfg):
        if cfg == "gp-flight":
            return 3000000 if self.quick else 10000000
        n = 1000000 if self.quick else 5000000
        # Without a profiler the peak RSS is reached in the first batches;
        # the baseline run need not be as long.
        return min(n, 1000000) if cfg == "none" else n

    def long_reserve(self):
        if not self.wants("long"):
            return 0
        t = 15.0
        for c in ("none", "gp-default", "gp-flight"):
            us = median(self.runs.get(("launch", c), [])) or 8.0
            t += self.long_n(c) * us * 1e-6 * 1.2 + 3
        return t

    def run_long(self):
        out = self.long
        for cfg in ("none", "gp-default", "gp-flight"):
            n = self.long_n(cfg)
            out["n_" + cfg] = n
            d = self.workdir("long-" + cfg)
            try:
                self.flight_size = LONG_FLIGHT_SIZE if cfg == "gp-flight" else None
                argv, extra = self.command(cfg, [self.bin("long_run"), str(n)], d)
                self.flight_size = None
            except NotAvailable as e:
                out[cfg] = {"status": "n/a (%s)" % e}
                self.cleanup(d)
                continue
            env = dict(self.base_env)
            env.update(extra)
            timeout = max(60, min(n * 60e-6 + 60, self.deadline + 90 - time.time()))
            log("bench: long run (%d launches) under %s" % (n, cfg))
            res = run_proc(argv, env=env, cwd=d, timeout=timeout)
            vals = parse_bench(res.out)
            ok = res.rc == 0 and "rss_kib_end" in vals and not res.timed_out
            self.add_raw("long", cfg, 1, "ok" if ok else ("timeout" if res.timed_out else "error"),
                         res, vals)
            r = {"status": "ok" if ok else "error", "vals": vals}
            if not ok:
                self.note_error("long", cfg, 1, "exit %s%s; stderr: %s" % (
                    res.rc, " (timed out)" if res.timed_out else "", tail(res.err)))
            elif cfg != "none":
                files = self.trace_files(res, d)
                if files:
                    try:
                        j = self.export_json(files[0], timeout=300)
                        r["lost"] = j.get("lost", {}).get("total")
                        r["kernel"] = j.get("counts", {}).get("kernel")
                        r["bytes"] = sum(os.path.getsize(f) for f in files)
                    except (RuntimeError, ValueError) as e:
                        self.note_error("long", cfg, 1, str(e))
                else:
                    self.note_error("long", cfg, 1, "no trace file written")
            out[cfg] = r
            self.cleanup(d)

    # ---------------------------------------------------------- metrics

    def find_ncu(self):
        cands = [os.environ.get("BENCH_NCU", "")]
        cands += sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True)
        cands += [CUDA_HOME + "/bin/ncu", shutil.which("ncu") or ""]
        for c in cands:
            if c and os.path.isfile(c) and os.access(c, os.X_OK):
                return c
        return None

    def run_metrics(self):
        """The training step under: nothing, gpuprof defaults, gpuprof --metrics
        (first launch of each kernel and configuration), the same again
        with a metrics cache filled by a first run, and ncu's SpeedOfLight
        sections on the first K kernels."""
        mx = self.mx
        if self.torch_reason:
            mx["status"] = "n/a (%s)" % self.torch_reason
            return
        steps, warmup = (MX_STEPS // 2, MX_WARMUP) if self.quick else (MX_STEPS, MX_WARMUP)
        k_ncu = env_int("BENCH_NCU_KERNELS", 30 if self.quick else 60)
        mx.update(steps=steps, warmup=warmup, k_ncu=k_ncu)
        prog = [self.python, os.path.join(HERE, "train_step.py"), str(steps), str(warmup)]
        ncu = self.find_ncu()
        mx["ncu"] = ncu
        cache = os.path.join(self.work, "metrics-cache")
        shutil.rmtree(cache, ignore_errors=True)
        mx_runs = {"none": None, "gp-default": [],
                   "gp-metrics": ["--metrics=roofline", "--metrics-launches=first"],
                   "gp-metrics-launches": ["--metrics=roofline", "--metrics-launches=first",
                                           "--metrics-replay=launches"],
                   "gp-metrics-fill": ["--metrics=roofline", "--metrics-cache=" + cache],
                   "gp-metrics-cached": ["--metrics=roofline", "--metrics-cache=" + cache],
                   "ncu": "ncu"}
        # The process wall of one run varies by a second between runs: the
        # configurations compared by it run several times, interleaved.
        reps = env_int("BENCH_MX_REPS", 1 if self.quick else 3)
        order = ["none", "gp-default", "gp-metrics", "gp-metrics-launches"] * reps
        order += ["gp-metrics-fill", "gp-metrics-cached", "ncu"]
        got = {}
        for i, cfg in enumerate(order):
            opts = mx_runs[cfg]
            d = self.workdir("metrics-%s-%d" % (cfg, i))
            env = dict(self.base_env)
            if opts == "ncu":
                if not ncu:
                    mx[cfg] = {"status": "n/a (ncu not found)"}
                    continue
                env["TMPDIR"] = d
                argv = [ncu, "--section", "SpeedOfLight", "--section",
                        "SpeedOfLight_RooflineChart", "--launch-count", str(k_ncu)] + prog
            elif opts is None:
                argv = prog
            else:
                if not self.has_gpuprof:
                    mx[cfg] = {"status": "n/a (gpuprof not built)"}
                    continue
                argv = [self.gpuprof, "run", "--report=none", "-f", "-o",
                        os.path.join(d, "trace-%p")] + opts + ["--"] + prog
            log("bench: metrics: training step under %s" % cfg)
            res = run_proc(argv, env=env, cwd=d, timeout=max(60, min(
                600, self.deadline + 300 - time.time())))
            vals = parse_bench(res.out)
            ok = res.rc == 0 and not res.timed_out and "ms_per_step" in vals
            rep = len(got.get(cfg, [])) + 1
            self.add_raw("metrics", cfg, rep, "ok" if ok else "error", res, vals)
            r = {"status": "ok" if ok else "error", "vals": vals, "wall": res.wall}
            if not ok:
                self.note_error("metrics", cfg, rep, "exit %s%s; %s" % (
                    res.rc, " (timed out)" if res.timed_out else "", tail(res.err + res.out)))
            elif opts == "ncu":
                r["profiled"] = len(re.findall(r"^==PROF== Profiling ", res.out + res.err, re.M))
            elif opts:
                files = self.trace_files(res, d)
                try:
                    j = self.export_json(files[0], timeout=300) if files else {}
                    m = j.get("metrics") or {}
                    r["profiled"] = m.get("profiled")
                    r["cached"] = m.get("cached")
                    r["cost_ns"] = m.get("cost_ns")
                    r["passes"] = m.get("passes")
                except (RuntimeError, ValueError) as e:
                    self.note_error("metrics", cfg, rep, str(e))
            got.setdefault(cfg, []).append(r)
            self.cleanup(d)
        for cfg, rs in got.items():
            mx[cfg] = mx_median(rs)
        shutil.rmtree(cache, ignore_errors=True)

    def mx_numbers(self):
        """Derived figures of the metrics comparison (None where not measured)."""
        mx = self.mx

        def ok(c):
            return mx.get(c, {}).get("status") == "ok"

        def v(c, k):
            return mx[c]["vals"].get(k) if ok(c) else None

        out = {}
        for cfg, pre in (("gp-metrics", ""), ("gp-metrics-launches", "l_")):
            if not (ok(cfg) and ok("gp-default")):
                continue
            n = mx[cfg].get("profiled") or 0
            out[pre + "profiled"] = n
            out[pre + "once_s"] = v(cfg, "warmup_s") - v("gp-default", "warmup_s") \
                if v(cfg, "warmup_s") is not None else None
            out[pre + "per_step_ms"] = v(cfg, "ms_per_step") - v("gp-default", "ms_per_step")
            out[pre + "wall_added_s"] = mx[cfg]["wall"] - mx["gp-default"]["wall"]
            out[pre + "gp_per_kernel_s"] = out[pre + "wall_added_s"] / n if n else None
            cost = mx[cfg].get("cost_ns")
            out[pre + "gp_inside_per_kernel_s"] = cost / 1e9 / n if cost and n else None
        if ok("ncu") and ok("none"):
            n = mx["ncu"].get("profiled") or 0
            out["ncu_profiled"] = n
            out["ncu_added_s"] = mx["ncu"]["wall"] - mx["none"]["wall"]
            out["ncu_per_kernel_s"] = out["ncu_added_s"] / n if n else None
        if ok("gp-metrics-cached") and ok("gp-default"):
            out["cached_once_s"] = v("gp-metrics-cached", "warmup_s") - v("gp-default", "warmup_s")
            out["cached_n"] = mx["gp-metrics-cached"].get("cached")
        for pre in ("", "l_"):
            if out.get(pre + "gp_per_kernel_s") and out.get("ncu_per_kernel_s"):
                out[pre + "ratio"] = out[pre + "gp_per_kernel_s"] / out["ncu_per_kernel_s"]
        return out

    def report_metrics(self):
        mx = self.mx
        L = ["## Hardware metrics on the training step (%s steps after %s warm-up steps)"
             % (mx.get("steps", "?"), mx.get("warmup", "?")), ""]
        if mx.get("status"):
            return L + [mx["status"], ""]
        rows = []
        for cfg, what in (("none", "no tool"), ("gp-default", "gpuprof, tracing only"),
                          ("gp-metrics", "gpuprof --metrics=roofline --metrics-launches=first"),
                          ("gp-metrics-launches", "same, --metrics-replay=launches"),
                          ("gp-metrics-fill", "same, --metrics-cache=DIR (empty: filled)"),
                          ("gp-metrics-cached", "same, --metrics-cache=DIR (filled: no replay)"),
                          ("ncu", "ncu --section SpeedOfLight --section "
                                  "SpeedOfLight_RooflineChart --launch-count %s"
                                  % mx.get("k_ncu"))):
            r = mx.get(cfg, {})
            if r.get("status") != "ok":
                rows.append([what, r.get("status", "not run")] + ["—"] * 4)
                continue
            vals = r["vals"]
            prof = r.get("profiled")
            if r.get("cached"):
                prof = "%s (+%s cached)" % (prof, r["cached"])
            wall = "%.1f" % r["wall"]
            if len(r.get("walls", [])) > 1:
                wall += " (%s)" % " ".join("%.1f" % w for w in r["walls"])
            rows.append([what, wall, fmt(vals.get("warmup_s")),
                         fmt(vals.get("ms_per_step")), "—" if prof is None else prof,
                         "—" if not r.get("cost_ns") else "%.2f" % (r["cost_ns"] / 1e9)])
        L.append(md_table(["configuration", "process wall (s): median (runs)", "warm-up steps (s)",
                           "ms/step after", "kernels profiled", "inside launch calls (s)"], rows))
        n = self.mx_numbers()
        L.append("")
        for pre, what, unit, inside in (
                ("", "--metrics", "kernel launches profiled (one per kernel and launch "
                 "configuration)", "inside the launch calls"),
                ("l_", "--metrics --metrics-replay=launches", "kernels measured (each group "
                 "of counters on one launch, no replay)", "in counter sessions")):
            if n.get(pre + "profiled") is None:
                continue
            L.append("- gpuprof %s: %d %s; one-time cost in the warm-up steps %s s; added per "
                     "step once all are profiled %s ms; process wall added %s s, i.e. %s s per "
                     "profiled kernel (%s s of it %s)" % (
                         what, n[pre + "profiled"], unit, fmt(n.get(pre + "once_s")),
                         fmt(n.get(pre + "per_step_ms")), fmt(n.get(pre + "wall_added_s")),
                         fmt(n.get(pre + "gp_per_kernel_s")),
                         fmt(n.get(pre + "gp_inside_per_kernel_s")), inside))
        if n.get("ncu_profiled") is not None:
            L.append("- ncu: %d kernels profiled, process wall added %s s against no tool, i.e. "
                     "%s s per profiled kernel" % (n["ncu_profiled"], fmt(n.get("ncu_added_s")),
                                                   fmt(n.get("ncu_per_kernel_s"))))
        if n.get("cached_once_s") is not None:
            L.append("- with the cache filled by an earlier run: %s launches from the cache, "
                     "warm-up steps %s s slower than tracing only" % (
                         n.get("cached_n"), fmt(n["cached_once_s"])))
        for pre, what in (("", "kernel replay"), ("l_", "--metrics-replay=launches")):
            if n.get(pre + "ratio") is not None:
                L.append("- gpuprof ÷ ncu per profiled kernel, %s: %.3f (target ≤ %.1f)"
                         % (what, n[pre + "ratio"], MX_TARGET_RATIO))
        L.append("")
        return L

    # ---------------------------------------------------------- analyzer

    def perfetto_export(self, path, n, pre):
        """export --format perfetto of a synthetic trace of n records: rate, size."""
        a = self.analyzer_res
        out = path + ".pftrace"
        walls = []
        for i in range(1 if self.quick else 3):
            res = run_proc([self.analyzer, "export", "--format", "perfetto", "-o", out, path],
                           env=self.base_env, timeout=600, keep_stdout=False)
            ok = res.rc == 0 and not res.timed_out
            self.add_raw("analyzer", pre + "export-perfetto", i + 1, "ok" if ok else "error",
                         res, {"wall_s": res.wall, "maxrss_kib": res.maxrss_kib})
            if not ok:
                self.note_error("analyzer", pre + "export-perfetto", i + 1,
                                "exit %s; stderr: %s" % (res.rc, tail(res.err)))
                break
            walls.append(res.wall)
            a[pre + "pf_rss_kib"] = res.maxrss_kib
        if walls:
            a[pre + "pf_wall"] = median(walls)
            a[pre + "pf_rate"] = n / a[pre + "pf_wall"]
            a[pre + "pf_bytes"] = os.path.getsize(out)
            log("  analyzer export --format perfetto%s: %.2f s, %.1f MB"
                % (" (mixed trace)" if pre else "", a[pre + "pf_wall"], a[pre + "pf_bytes"] / 1e6))
        if os.path.exists(out):
            os.remove(out)

    def run_analyzer(self):
        n = env_int("BENCH_ANALYZER_RECORDS", 10000000)
        reps = 1 if self.quick else 3
        a = self.analyzer_res
        a["n"] = n
        synth = self.bin("synth_trace")
        if not os.path.exists(synth):
            a["status"] = "error (synth_trace not built)"
            return
        if not os.path.exists(self.analyzer):
            a["status"] = "error (gpuprof-analyze not built)"
            return
        d = self.workdir("analyzer")
        path = os.path.join(d, "synth.gpuprof")
        log("bench: analyzer: writing a %d-record trace" % n)
        res = run_proc([synth, str(n), path], env=self.base_env, timeout=600)
        if res.rc != 0:
            a["status"] = "error"
            self.note_error("analyzer", "synth_trace", 1, tail(res.err))
            self.cleanup(d)
            return
        a["gen_s"] = res.wall
        a["bytes"] = os.path.getsize(path)
        try:
            j = self.export_json(path, timeout=600)
            a["kernel"] = j.get("counts", {}).get("kernel")
            if a["kernel"] != n:
                self.note_error("analyzer", "export", 1,
                                "synthetic trace reads back %s kernels, not %d" % (a["kernel"], n))
        except (RuntimeError, ValueError) as e:
            self.note_error("analyzer", "export", 1, str(e))
        walls, rss = [], []
        for i in range(reps):
            res = run_proc([self.analyzer, "report", path], env=self.base_env,
                           timeout=600, keep_stdout=False)
            ok = res.rc == 0 and not res.timed_out
            self.add_raw("analyzer", "report", i + 1, "ok" if ok else "error", res,
                         {"wall_s": res.wall, "maxrss_kib": res.maxrss_kib})
            if not ok:
                self.note_error("analyzer", "report", i + 1,
                                "exit %s; stderr: %s" % (res.rc, tail(res.err)))
                continue
            walls.append(res.wall)
            rss.append(res.maxrss_kib)
            log("  analyzer report rep %d: %.2f s, %d KiB peak" % (i + 1, res.wall, res.maxrss_kib))
        # The SQLite export: one row per kernel record.
        db = os.path.join(d, "synth.sqlite")
        res = run_proc([self.analyzer, "export", "--format", "sqlite", "-o", db, path],
                       env=self.base_env, timeout=600, keep_stdout=False)
        ok = res.rc == 0 and not res.timed_out
        self.add_raw("analyzer", "export-sqlite", 1, "ok" if ok else "error", res,
                     {"wall_s": res.wall, "maxrss_kib": res.maxrss_kib})
        if ok:
            a["sqlite_wall"] = res.wall
            a["sqlite_rate"] = n / res.wall
            a["sqlite_rss_kib"] = res.maxrss_kib
            a["sqlite_bytes"] = os.path.getsize(db)
            log("  analyzer export --format sqlite: %.2f s, %d KiB peak" % (res.wall, res.maxrss_kib))
        else:
            self.note_error("analyzer", "export-sqlite", 1,
                            "exit %s; stderr: %s" % (res.rc, tail(res.err)))
        # The CSV export: every row, sorted by start time through temporary runs.
        out_csv = os.path.join(d, "synth.csv")
        res = run_proc([self.analyzer, "export", "--format", "csv", "-o", out_csv, path],
                       env=self.base_env, timeout=600, keep_stdout=False)
        ok = res.rc == 0 and not res.timed_out
        self.add_raw("analyzer", "export-csv", 1, "ok" if ok else "error", res,
                     {"wall_s": res.wall, "maxrss_kib": res.maxrss_kib})
        if ok:
            a["csv_wall"] = res.wall
            a["csv_rss_kib"] = res.maxrss_kib
            a["csv_bytes"] = os.path.getsize(out_csv)
            log("  analyzer export --format csv: %.2f s, %d KiB peak" % (res.wall, res.maxrss_kib))
        else:
            self.note_error("analyzer", "export-csv", 1,
                            "exit %s; stderr: %s" % (res.rc, tail(res.err)))
        if os.path.exists(out_csv):
            os.remove(out_csv)
        # The Perfetto export (protobuf, streamed): records/s and bytes per kernel slice.
        self.perfetto_export(path, n, "")
        # A mixed trace (launch calls and kernels, copies, allocations, metrics): the
        # report with its launch-latency table.
        mix = os.path.join(d, "mix.gpuprof")
        res = run_proc([synth, "--mix", str(n), mix], env=self.base_env, timeout=600)
        if res.rc == 0:
            self.perfetto_export(mix, n, "mix_")
            res = run_proc([self.analyzer, "report", mix], env=self.base_env, timeout=600,
                           keep_stdout=False)
            ok = res.rc == 0 and not res.timed_out
            self.add_raw("analyzer", "report-mixed", 1, "ok" if ok else "error", res,
                         {"wall_s": res.wall, "maxrss_kib": res.maxrss_kib})
            if ok:
                a["mix_wall"] = res.wall
                a["mix_rss_kib"] = res.maxrss_kib
                log("  analyzer report (mixed trace): %.2f s, %d KiB peak"
                    % (res.wall, res.maxrss_kib))
            else:
                self.note_error("analyzer", "report-mixed", 1,
                                "exit %s; stderr: %s" % (res.rc, tail(res.err)))
        else:
            self.note_error("analyzer", "synth_trace --mix", 1, tail(res.err))
        self.cleanup(d)
        if walls:
            a["status"] = "ok"
            a["wall"] = median(walls)
            a["rate"] = n / a["wall"]
            a["rss_kib"] = max(rss)
            a["bpr"] = a["rss_kib"] * 1024.0 / n
            a["reps"] = len(walls)
        else:
            a["status"] = "error"

    # ---------------------------------------------------------- report

    def med(self, w, cfg):
        return median(self.runs.get((w, cfg), []))

    def ratio(self, w, a, b):
        x, y = self.med(w, a), self.med(w, b)
        return x / y if x is not None and y else None

    def ratio_paired(self, w, a, b):
        """Median over the repetitions of a's run ÷ b's run of the same
        repetition (runs next to each other in time)."""
        ra, rb = self.by_rep.get((w, a), {}), self.by_rep.get((w, b), {})
        rs = [ra[k] / rb[k] for k in ra if k in rb and rb[k]]
        return statistics.median(rs) if rs else None

    def ratio_min(self, w, a, b):
        xa, xb = self.runs.get((w, a), []), self.runs.get((w, b), [])
        return min(xa) / min(xb) if xa and xb and min(xb) else None

    def cell(self, w, cfg):
        vals = self.runs.get((w["name"], cfg), [])
        st = self.state.get((w["name"], cfg), {})
        if not vals:
            if st.get("skip"):
                return st["skip"]
            if st.get("fails"):
                return "error"
            return "skipped (quick)" if self.reps_for(w, cfg) == 0 else "—"
        m = median(vals)
        s = fmt(m)
        if len(vals) > 1 and m:
            s += " ±%.1f%%" % ((max(vals) - min(vals)) / 2 / m * 100)
        planned = min(self.reps_for(w, cfg), self.reps_done)
        if len(vals) < planned or len(vals) == 1:
            s += " (n=%d)" % len(vals)
        return s

    def report(self):
        L = []
        i = self.info
        L.append("# gpuprof overhead benchmarks")
        L.append("")
        L.append("- GPU: %s" % i.get("gpu", "none"))
        L.append("- driver CUDA version: %s; toolkit: CUDA %s" % (
            i.get("driver_cuda", "?"), i.get("cuda", "?")))
        L.append("- host: %s, %s" % (i.get("host"), i.get("cpu")))
        L.append("- date: %s" % i.get("date"))
        L.append("- gpuprof: %s; PyTorch: %s; nsys: %s" % (
            i.get("gpuprof"), i.get("torch", "not used"), i.get("nsys", "not used")))
        mode = "quick (BENCH_QUICK=1)" if self.quick else "full"
        if self.reps_done:
            L.append("- mode: %s; repetitions planned: CUDA C workloads %d (nsys %d), PyTorch "
                     "workloads %d (torch.profiler and nsys %d); configurations interleaved per "
                     "repetition; wall time %.0f s" % (
                         mode, self.reps, self.ref_reps, self.torch_reps, self.torch_ref_reps,
                         time.time() - self.t_start))
            L.append("- nsys: the program's own timing is used; nsys is stopped 3 s after the "
                     "program prints it (its capture post-processing is not measured)")
        else:
            L.append("- mode: %s; wall time %.0f s" % (mode, time.time() - self.t_start))
        if self.stop_reason:
            L.append("- note: " + self.stop_reason)
        L.append("")
        ws = self.workloads()
        if ws and self.reps_done:
            cfgs = [c for c in CONFIG_ORDER if any(c in w["configs"] for w in ws)]
            L.append("## Medians (± half the min–max spread)")
            L.append("")
            rows = []
            for w in ws:
                rows.append([w["title"], w["unit"]] +
                            [self.cell(w, c) if c in w["configs"] else "—" for c in cfgs])
            L.append(md_table(["workload", "unit"] + cfgs, rows))
            L.append("")
            for base in ("none", "mincupti"):
                L.append("## Ratio of medians to `%s`" % base)
                L.append("")
                rc = [c for c in cfgs if c != base and c != "none"]
                rows = []
                for w in ws:
                    rows.append([w["title"]] + [
                        fmt_ratio(self.ratio(w["name"], c, base)) if c in w["configs"] else "—"
                        for c in rc])
                L.append(md_table(["workload"] + rc, rows))
                L.append("")
            # Interference on a shared host only ever adds time, and it came
            # in bursts that moved single runs by 10-30%: the fastest of the
            # interleaved runs is the steadier estimate of what each
            # configuration itself costs.
            L.append("## Ratio of minimums to `mincupti` (fastest run of each configuration)")
            L.append("")
            rc = [c for c in cfgs if c not in ("none", "mincupti")]
            rows = []
            for w in ws:
                rows.append([w["title"]] + [
                    fmt_ratio(self.ratio_min(w["name"], c, "mincupti")) if c in w["configs"]
                    else "—" for c in rc])
            L.append(md_table(["workload"] + rc, rows))
            L.append("")
            L.extend(self.report_records(ws))
        if self.long:
            L.extend(self.report_long())
        if self.mx:
            L.extend(self.report_metrics())
        if self.analyzer_res:
            L.extend(self.report_analyzer())
        if self.sampling:
            L.extend(self.sampling.report())
        L.extend(self.report_targets())
        if self.errors:
            L.append("## Failures")
            L.append("")
            seen = set()
            for w, cfg, rep, msg in self.errors:
                if (w, cfg, msg) in seen:
                    continue
                seen.add((w, cfg, msg))
                L.append("- %s / %s (rep %d): %s" % (w, cfg, rep, msg.replace("|", "\\|")))
            L.append("")
        return "\n".join(L) + "\n"

    def report_records(self, ws):
        L = []
        rows = []
        for w in ws:
            for c in w["configs"]:
                t = self.traces.get((w["name"], c))
                if not t:
                    continue
                recorded = t["graph"] if c == "gp-graph" else t["kernel"]
                expected = t["graph_launches"] if c == "gp-graph" else t["launched"]
                what = "graph" if c == "gp-graph" else "kernel"
                bpk = t["bytes"] / t["kernel"] if t["kernel"] else None
                rows.append([w["title"], c, "%d %s / %s launched" % (
                    recorded, what, "%d" % expected if expected else "?"),
                    t["api"], t["lost"], "%.2f MB" % (t["bytes"] / 1e6),
                    fmt(bpk) if bpk is not None else "n/a"])
            for c in ("mincupti", "mincupti-graph"):
                m = self.mincupti_counts.get((w["name"], c))
                if not m:
                    continue
                recorded = m["graph"] if c == "mincupti-graph" else m["kernel"]
                expected = m["graph_launches"] if c == "mincupti-graph" else m["launched"]
                rows.append([w["title"], c, "%d %s / %s launched" % (
                    recorded, "graph" if c == "mincupti-graph" else "kernel",
                    "%d" % expected if expected else "?"), "—", m["dropped"], "—", "—"])
        if rows:
            L.append("## Records (first repetition of each configuration)")
            L.append("")
            L.append("Torch workloads launch more kernels than the counted ops (set-up, "
                     "fills); the program's count is a lower bound there.")
            L.append("")
            L.append(md_table(["workload", "configuration", "recorded / launched", "API records",
                               "lost", "trace size", "bytes per kernel record"], rows))
            L.append("")
        return L

    def report_long(self):
        lg = self.long
        L = ["## Long run (empty launches, sync every 100k; gp-flight: --flight-recorder=%s)"
             % LONG_FLIGHT_SIZE, ""]
        rows = []
        for cfg in ("none", "gp-default", "gp-flight"):
            r = lg.get(cfg, {})
            v = r.get("vals", {})
            if r.get("status") != "ok":
                rows.append([cfg, "%d" % lg.get("n_" + cfg, 0), r.get("status", "not run")] +
                            ["—"] * 5)
                continue
            rows.append([cfg, "%d" % lg["n_" + cfg], fmt(v.get("us_per_launch")),
                         "%.1f" % (v.get("rss_kib_200k", 0) / 1024.0),
                         "%.1f" % (v.get("rss_kib_end", 0) / 1024.0),
                         "%s" % r.get("kernel", "—"), "%s" % r.get("lost", "—"),
                         ("%.2f" % (r["bytes"] / r["kernel"])) if r.get("kernel") else "—"])
        L.append(md_table(["configuration", "launches", "µs/launch", "peak RSS at 200k (MiB)",
                           "peak RSS at end (MiB)", "kernel records", "lost",
                           "bytes per kernel record"], rows))
        f = lg.get("gp-flight", {})
        if f.get("status") == "ok":
            v = f["vals"]
            marks = sorted((int(k[8:-1]), val) for k, val in v.items()
                           if re.match(r"rss_kib_\d+k$", k))
            L.append("")
            L.append("gp-flight peak RSS (MiB) by launches: " + ", ".join(
                "%dM %.1f" % (k // 1000, val / 1024.0) for k, val in marks if k % 1000 == 0))
        L.append("")
        return L

    def long_numbers(self):
        """(added MiB, growth beyond the unprofiled run in MiB, lost) or Nones."""
        a, b = self.long.get("none", {}), self.long.get("gp-default", {})
        if a.get("status") != "ok" or b.get("status") != "ok":
            return None, None, b.get("lost")
        va, vb = a["vals"], b["vals"]
        added = (vb["rss_kib_end"] - va["rss_kib_end"]) / 1024.0
        grow = ((vb["rss_kib_end"] - vb.get("rss_kib_200k", 0)) -
                (va["rss_kib_end"] - va.get("rss_kib_200k", 0))) / 1024.0
        return added, grow, b.get("lost")

    def flight_numbers(self):
        """(RSS added over the unprofiled run, growth from the middle mark
        to the end, that mark in launches), MiB."""
        a, f = self.long.get("none", {}), self.long.get("gp-flight", {})
        if a.get("status") != "ok" or f.get("status") != "ok":
            return None, None, None
        va, vf = a["vals"], f["vals"]
        added = (vf["rss_kib_end"] - va["rss_kib_end"]) / 1024.0
        half = self.long.get("n_gp-flight", 0) // 2 // 1000000 * 1000
        mid = vf.get("rss_kib_%dk" % half) if half else None
        grow = None if mid is None else (vf["rss_kib_end"] - mid) / 1024.0
        return added, grow, half

    def report_analyzer(self):
        a = self.analyzer_res
        L = ["## Analyzer (`gpuprof-analyze report` on a synthetic %d-kernel trace)" % a["n"], ""]
        if a.get("status") != "ok":
            L.append("analyzer benchmark: %s" % a.get("status", "not run"))
            L.append("")
            return L
        L.append(md_table(
            ["trace size", "bytes per record on disk", "write time (synth)", "report wall time",
             "records/s", "peak RSS", "bytes per record (peak RSS)"],
            [["%.1f MB" % (a["bytes"] / 1e6), "%.2f" % (a["bytes"] / a["n"]),
              "%.2f s" % a["gen_s"], "%.2f s (median of %d)" % (a["wall"], a["reps"]),
              "%.1f M" % (a["rate"] / 1e6), "%.1f MiB" % (a["rss_kib"] / 1024.0),
              "%.1f" % a["bpr"]]]))
        L.append("")
        if "sqlite_rate" in a:
            L.append(md_table(
                ["export --format sqlite", "rows/s", "peak RSS", "database size"],
                [["%.2f s" % a["sqlite_wall"], "%.2f M" % (a["sqlite_rate"] / 1e6),
                  "%.1f MiB" % (a["sqlite_rss_kib"] / 1024.0),
                  "%.1f MB" % (a["sqlite_bytes"] / 1e6)]]))
            L.append("")
        if "csv_wall" in a:
            L.append(md_table(
                ["export --format csv (sorted by start)", "peak RSS", "output size"],
                [["%.2f s" % a["csv_wall"], "%.1f MiB" % (a["csv_rss_kib"] / 1024.0),
                  "%.1f MB" % (a["csv_bytes"] / 1e6)]]))
            L.append("")
        if "pf_rate" in a:
            rows = [["kernels only", "%.2f s" % a["pf_wall"], "%.2f M" % (a["pf_rate"] / 1e6),
                     "%.1f MB" % (a["pf_bytes"] / 1e6), "%.1f" % (a["pf_bytes"] / a["n"])]]
            if "mix_pf_rate" in a:
                rows.append(["mixed (launch calls, copies, metrics)",
                             "%.2f s" % a["mix_pf_wall"], "%.2f M" % (a["mix_pf_rate"] / 1e6),
                             "%.1f MB" % (a["mix_pf_bytes"] / 1e6),
                             "%.1f" % (a["mix_pf_bytes"] / a["n"])])
            L.append(md_table(["export --format perfetto", "wall (median)", "records/s",
                               "output size", "bytes per record"], rows))
            L.append("")
        if "mix_wall" in a:
            L.append(md_table(
                ["report of a mixed %d-record trace (with launch latency)" % a["n"], "peak RSS"],
                [["%.2f s" % a["mix_wall"], "%.1f MiB" % (a["mix_rss_kib"] / 1024.0)]]))
            L.append("")
        return L

    def report_targets(self):
        rows = []

        def add(target, workload, measured, ok, by_min=""):
            if measured is None or measured == "n/a":
                rows.append([target, workload, "n/a", "n/a", by_min])
            else:
                rows.append([target, workload, measured,
                             "reference" if ok is None else "MET" if ok else "MISSED", by_min])

        def min_check(w, a, b, limit):
            r = self.ratio_min(w, a, b)
            return "" if r is None else "%s %s" % (fmt_ratio(r), "MET" if r <= limit else "MISSED")

        titles = {w["name"]: w["title"] for w in self.workloads()}
        dev_ws = [w for w in ("launch", "launch-mt", "torch", "graph") if w in titles]
        for w in dev_ws:
            r = self.ratio(w, "gp-device", "mincupti")
            add("device-activity-only ÷ mincupti ≤ 1.03", titles[w], fmt_ratio(r),
                r is not None and r <= 1.03, min_check(w, "gp-device", "mincupti", 1.03))
        for w in dev_ws:
            r = self.ratio(w, "gp-default", "mincupti")
            add("defaults ÷ mincupti ≤ 1.10", titles[w], fmt_ratio(r),
                r is not None and r <= 1.10, min_check(w, "gp-default", "mincupti", 1.10))
        for w in dev_ws:
            # Per-node graph tracing (the default) against nsys doing the same.
            refs = (["nsys-node"] if w == "graph" else ["nsys"]) + \
                (["torch.profiler"] if w == "torch" else [])
            for ref in refs:
                g, n = self.med(w, "gp-default"), self.med(w, ref)
                add("defaults below %s" % ref, titles[w],
                    None if g is None or n is None else "%s vs %s" % (fmt(g), fmt(n)),
                    g is not None and n is not None and g < n)
        for w in ("launch", "launch-mt"):
            if w not in titles:
                continue
            b, d = self.med(w, "gp-bt"), self.med(w, "gp-default")
            add("--backtrace=kernel ≤ defaults + 0.5 µs/launch", titles[w],
                None if b is None or d is None else "%+.3f µs" % (b - d),
                b is not None and d is not None and b - d <= 0.5)
        if "torch" in titles:
            b, d = self.med("torch", "gp-py"), self.med("torch", "gp-default")
            xb, xd = self.runs.get(("torch", "gp-py"), []), self.runs.get(("torch", "gp-default"), [])
            by_min = "" if not xb or not xd else "%+.3f µs %s" % (
                min(xb) - min(xd), "MET" if min(xb) - min(xd) <= 1.0 else "MISSED")
            add("--backtrace=python ≤ defaults + 1 µs/launch", titles["torch"],
                None if b is None or d is None else "%+.3f µs" % (b - d),
                b is not None and d is not None and b - d <= 1.0, by_min)
            # Runs of one repetition are adjacent in time: their difference
            # cancels the drift between repetitions.
            rp, rd = self.by_rep.get(("torch", "gp-py"), {}), self.by_rep.get(("torch", "gp-default"), {})
            pairs = [rp[r] - rd[r] for r in sorted(rp) if r in rd]
            p = median(pairs) if pairs else None
            add("--backtrace=python ≤ defaults + 1 µs/launch (median of per-repetition differences)",
                titles["torch"], None if p is None else "%+.3f µs (%d pairs)" % (p, len(pairs)),
                p is not None and p <= 1.0)
            # The launching thread's CPU time: what the host's scheduling adds is left out.
            cp = self.cpu_by_rep.get(("torch", "gp-py"), {})
            cd = self.cpu_by_rep.get(("torch", "gp-default"), {})
            pairs = [cp[r] - cd[r] for r in sorted(cp) if r in cd]
            p = median(pairs) if pairs else None
            add("--backtrace=python ≤ defaults + 1 µs/launch (launching thread's CPU time, "
                "median of per-repetition differences)", titles["torch"],
                None if p is None else "%+.3f µs (%d pairs; defaults %s µs)" % (
                    p, len(pairs), fmt(median(list(cd.values())))),
                p is not None and p <= 1.0)
        if "train" in titles:
            r = self.ratio("train", "gp-default", "none")
            add("defaults ÷ none ≤ 1.02", titles["train"], fmt_ratio(r),
                r is not None and r <= 1.02, min_check("train", "gp-default", "none", 1.02))
        if "graph" in titles:
            r = self.ratio("graph", "gp-graph", "none")
            add("whole-graph (--graph-trace=graph) ÷ none ≤ 1.05", titles["graph"],
                fmt_ratio(r), r is not None and r <= 1.05,
                min_check("graph", "gp-graph", "none", 1.05))
            r = self.ratio("graph", "mincupti-graph", "none")
            add("whole-graph floor: mincupti-graph ÷ none", titles["graph"], fmt_ratio(r), None)
            g, n = self.med("graph", "gp-graph"), self.med("graph", "nsys")
            add("whole-graph below nsys (graph-level)", titles["graph"],
                None if g is None or n is None else "%s vs %s" % (fmt(g), fmt(n)),
                g is not None and n is not None and g < n)
        if self.long:
            added, grow, lost = self.long_numbers()
            t = "5 long run"
            add("RSS added ≤ %d MiB" % RSS_ADDED_MAX_MIB, t,
                None if added is None else "%.1f MiB" % added,
                added is not None and added <= RSS_ADDED_MAX_MIB)
            add("RSS flat 200k → end (growth beyond unprofiled ≤ %d MiB)" % RSS_FLAT_MAX_MIB, t,
                None if grow is None else "%+.1f MiB" % grow,
                grow is not None and grow <= RSS_FLAT_MAX_MIB)
            add("0 LOST", t, None if lost is None else "%d" % lost, lost == 0)
            added, grow, half = self.flight_numbers()
            add("flight recorder RSS added ≤ %d MiB + %d MiB" % (LONG_FLIGHT_MIB, RSS_ADDED_MAX_MIB),
                t, None if added is None else "%.1f MiB" % added,
                added is not None and added <= LONG_FLIGHT_MIB + RSS_ADDED_MAX_MIB)
            add("flight recorder RSS flat %sk launches → end (≤ %d MiB)"
                % (half if half is not None else "?", RSS_FLAT_MAX_MIB), t,
                None if grow is None else "%+.1f MiB" % grow,
                grow is not None and grow <= RSS_FLAT_MAX_MIB)
        for w in ("launch", "train"):
            if w not in titles:
                continue
            for a, b, target in (("gp-dormant", "none", "dormant ÷ none ≤ 1.02"),
                                 ("gp-flight", "gp-default", "flight recorder ÷ defaults ≤ 1.02")):
                r = self.ratio(w, a, b)
                p = self.ratio_paired(w, a, b)
                add(target, titles[w], None if r is None else "%s (pairs: %s)" % (
                    fmt_ratio(r), fmt_ratio(p)), r is not None and r <= 1.02,
                    min_check(w, a, b, 1.02))
        # File bytes over kernel records: with defaults the file also holds
        # an API record per launch, so both configurations are shown.
        for w, limit, cfgs in (("launch", 4, ("gp-device", "gp-default")),
                               ("train", 12, ("gp-default",))):
            if w not in titles:
                continue
            for cfg in cfgs:
                tr = self.traces.get((w, cfg))
                bpk = tr["bytes"] / tr["kernel"] if tr and tr["kernel"] else None
                what = "device activity" if cfg == "gp-device" else "defaults (with API records)"
                add("%s: ≤ %d bytes per kernel record on disk" % (what, limit), titles[w],
                    None if bpk is None else "%.2f" % bpk, bpk is not None and bpk <= limit)
        if "launch" in titles:
            r = self.ratio("launch", "gp-mx-idle", "gp-default")
            add("--metrics hooks, no kernel selected ÷ defaults ≤ 1.03 (noise)", titles["launch"],
                fmt_ratio(r), r is not None and r <= 1.03,
                min_check("launch", "gp-mx-idle", "gp-default", 1.03))
        if self.mx:
            n = self.mx_numbers()
            for pre, what in (("", "kernel replay"), ("l_", "--metrics-replay=launches")):
                r = n.get(pre + "ratio")
                add("--metrics (%s) per profiled kernel ≤ %.1f × ncu's" % (what, MX_TARGET_RATIO),
                    "3 transformer train step", None if r is None else "%.3f" % r,
                    r is not None and r <= MX_TARGET_RATIO)
        a = self.analyzer_res
        if a:
            ok = a.get("status") == "ok"
            add("analyzer ≥ %d M records/s" % (ANALYZER_MIN_RATE / 1e6), "analyzer",
                "%.1f M/s" % (a["rate"] / 1e6) if ok else None,
                ok and a["rate"] >= ANALYZER_MIN_RATE)
            add("analyzer peak RSS ≤ %d bytes per record" % ANALYZER_MAX_BPR, "analyzer",
                "%.1f" % a["bpr"] if ok else None, ok and a["bpr"] <= ANALYZER_MAX_BPR)
            sr = a.get("sqlite_rate")
            add("export --format sqlite ≥ %d M rows/s" % (SQLITE_MIN_RATE / 1e6), "analyzer",
                "%.2f M/s" % (sr / 1e6) if sr else None, sr is not None and sr >= SQLITE_MIN_RATE)
            pr = a.get("pf_rate")
            add("export --format perfetto ≥ %d M records/s" % (PERFETTO_MIN_RATE / 1e6),
                "analyzer", "%.2f M/s" % (pr / 1e6) if pr else None,
                pr is not None and pr >= PERFETTO_MIN_RATE)
            bpk = a["pf_bytes"] / a["n"] if pr else None
            add("export --format perfetto ≤ %d bytes per kernel slice" % PERFETTO_MAX_BPK,
                "analyzer", "%.1f" % bpk if bpk else None,
                bpk is not None and bpk <= PERFETTO_MAX_BPK)
        if not rows:
            return []
        return ["## Targets", "",
                "Results on medians; the last column takes the fastest run of each "
                "configuration instead (ratio targets only).  \"pairs\": the median of the "
                "per-repetition ratios (the two runs of a repetition are close in time).", "",
                md_table(["target", "workload", "measured", "result", "by minimum"], rows), ""]

    def write_outputs(self):
        os.makedirs(self.out_dir, exist_ok=True)
        text = self.report()
        sys.stdout.write(text)
        sys.stdout.flush()
        with open(os.path.join(self.out_dir, "results.md"), "w") as f:
            f.write(text)
        with open(os.path.join(self.out_dir, "raw.csv"), "w", newline="") as f:
            wr = csv.writer(f)
            wr.writerow(["workload", "config", "rep", "status", "rc", "wall_s", "metric", "value"])
            wr.writerows(self.raw)
        log("bench: wrote %s and %s" % (os.path.join(self.out_dir, "results.md"),
                                        os.path.join(self.out_dir, "raw.csv")))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="build directory (holds bin/, lib/ and bench/)")
    ap.add_argument("--only", action="append", default=[], metavar="NAME[,NAME]",
                    help="run only these workloads: launch, launch-mt, torch, train, "
                         "graph, long, metrics, analyzer; overtime and fleet run only when "
                         "named")
    ap.add_argument("--quick", action="store_true", help="same as BENCH_QUICK=1")
    ap.add_argument("--json", metavar="PATH",
                    help="write the runs of the overtime and fleet rows and the raw rows "
                         "of the others to PATH as JSON")
    ap.add_argument("--dry-run", action="store_true",
                    help="overtime, fleet: print the commands and the time they would "
                         "take; run nothing")
    ap.add_argument("--report-from", metavar="PATH",
                    help="print the overtime and fleet report from a --json file")
    args = ap.parse_args()
    known = {"launch", "launch-mt", "torch", "train", "graph", "long", "metrics", "analyzer",
             "overtime", "fleet"}
    only = set()
    for o in args.only:
        only.update(x for x in o.split(",") if x)
    if only - known:
        ap.error("unknown workload %s" % ", ".join(sorted(only - known)))
    quick = args.quick or os.environ.get("BENCH_QUICK") == "1"
    rows = only & {"overtime", "fleet"}
    if args.report_from:
        with open(args.report_from) as f:
            data = json.load(f)
        if not data.get("sampling"):
            ap.error("%s holds no overtime or fleet runs" % args.report_from)
        sys.stdout.write("\n".join(sampling.report_lines(data["sampling"])) + "\n")
        return 0
    if args.dry_run:
        if not rows:
            ap.error("--dry-run: name the rows, --only overtime and/or --only fleet")
        b = Bench(args.build, only, quick)
        sampling.Sampling(b, rows, sys.modules[__name__]).dry_run()
        return 0

    gpu = not gpu_absent()
    if not gpu and only != {"analyzer"}:
        print("bench: no NVIDIA GPU found; nothing measured")
        return 0
    b = Bench(args.build, only, quick)
    os.makedirs(b.work, exist_ok=True)
    b.probe(gpu)
    try:
        if b.wants("analyzer"):
            b.run_analyzer()
        if gpu:
            b.run_reps()
            if b.wants("long"):
                b.run_long()
            if b.wants("metrics"):
                b.run_metrics()
            if rows:
                b.sampling = sampling.Sampling(b, rows, sys.modules[__name__])
                b.sampling.run()
    except KeyboardInterrupt:
        log("bench: interrupted; reporting what was measured")
        b.stop_reason = "interrupted"
    b.write_outputs()
    if args.json:
        cols = ["workload", "config", "rep", "status", "rc", "wall_s", "metric", "value"]
        out = {"info": b.info, "sampling": b.sampling.data() if b.sampling else None,
               "raw": [dict(zip(cols, r)) for r in b.raw]}
        with open(args.json, "w") as f:
            json.dump(out, f, indent=1)
            f.write("\n")
        log("bench: wrote %s" % args.json)
    if not b.keep:
        shutil.rmtree(b.work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
