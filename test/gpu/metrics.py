"""GPU tests of hardware metrics (gpuprof run --metrics), run by run.py.

tests(h) returns the (name, function) pairs; h is run.py's namespace
(traced, check_run, Fail, ...).  Truth comes from test/apps/metrics_truth.cu
(exact FLOPs per precision, tensor-core FLOPs of mma.sync, bytes of a
streaming copy) and test/apps/torch_metrics.py (a 4096^3 half-precision
GEMM).  Each test also requires that the program's output is the same with
and without --metrics.  The Nsight Compute tests run ncu (found under
/opt/nvidia or CUDA_HOME) on the same kernels with --clock-control none and
the same metric names, and require every count within 2% of ncu's, except
DRAM and L2 bytes of kernels that are not memory-bound (see NCU_CACHE_TOL).
The cache tests fill a --metrics-cache directory, read it back, damage a
file, and fill one from two processes at once; the privileges test runs
as an unprivileged user (and says so when the driver lets every user read
the counters, so that the restricted case cannot be made).
"""

import csv
import glob
import io
import os
import pwd
import re
import shutil
import subprocess
import sys
import tempfile
import time

FLOP_TOL = 0.001        # FLOP counts: within 0.1%
BYTE_TOL = 0.05         # DRAM bytes: within 5%
NCU_TOL = 0.02          # every count against Nsight Compute's: within 2%
# Except DRAM and L2 bytes of kernels that are not memory-bound: there they
# are the cache state the replay leaves (write-backs of lines its memory
# restore dirtied) and L1 hit timing, not the kernel's work: on an H100 the
# L2 bytes of one such kernel differed by up to 11% between two gpuprof runs
# of the same program, and by 10.5% from ncu's in one run (mma_tf32).  They
# are held to NCU_CACHE_TOL of ncu's value or of the kernel's L1 bytes.
NCU_CACHE_TOL = 0.15
CACHE_STATE = ("dram__bytes", "lts__t_bytes")
PREC = {"fma_f64": "fp64", "fma_f32": "fp32", "fma_f16": "fp16"}
# mma.sync kernels and the tensor class their FLOPs belong to.
MMA = {"mma_f16f32": "tensor_fp16", "mma_bf16f32": "tensor_fp16",
       "mma_f16f16": "tensor_fp16", "mma_tf32": "tensor_tf32"}
TRUTH_KERNELS = sorted(PREC) + sorted(MMA) + ["stream_copy"]
UNPRIVILEGED = "gpuprof-nopriv"


def find_ncu():
    """Path of Nsight Compute's ncu, or None."""
    cands = sorted(glob.glob("/opt/nvidia/nsight-compute/*/ncu"), reverse=True)
    cands += [os.path.join(os.environ.get("CUDA_HOME", "/usr/local/cuda"), "bin", "ncu"),
              shutil.which("ncu") or ""]
    for c in cands:
        if c and os.path.isfile(c) and os.access(c, os.X_OK):
            return c
    return None


def ncu_number(v):
    v = v.strip().replace(",", "") if re.fullmatch(r"[\d,]+(\.\d*)?([eE][-+]?\d+)?", v.strip()) \
        else v.strip()
    try:
        return float(v)
    except ValueError:
        return None


def parse_ncu_raw(text):
    """Rows of `ncu --page raw --csv` as [{column: value}] (the units row dropped)."""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    rows = list(csv.reader(io.StringIO("\n".join(lines))))
    if len(rows) < 2:
        return []
    head = rows[0]
    out = []
    for r in rows[1:]:
        if len(r) != len(head) or r[0] == "":
            continue            # the units row has an empty ID
        out.append(dict(zip(head, r)))
    return out


def counts_of(values):
    """The metric names of a kernel that are counts (not rates or time)."""
    return sorted(n for n in values if n.endswith(".sum") and not n.startswith("gpu__time"))


def tests(h):
    Fail = h["Fail"]

    def results(out):
        return [l for l in out.splitlines() if l.startswith("RESULT ")]

    def plain(argv, env=None, timeout=None):
        """The program's stdout without gpuprof (env added to a clean one)."""
        e = h["clean_env"]()
        e.update(env or {})
        rc, out, err = h["run_cmd"](argv, e, timeout or h["TORCH_TIMEOUT"])
        if rc != 0:
            raise Fail("%s without gpuprof (%s) exited %d: %s"
                       % (argv[-1], env or "", rc, h["tail"](err)))
        return out

    def standard(truth):
        return {k: v for k, v in truth.items()
                if not k.startswith(("flops.", "bytes.", "graph."))}

    def metrics_of(js):
        mx = js.get("metrics")
        if not mx:
            raise Fail("export json has no \"metrics\" object")
        return mx, {k["name"]: k for k in mx.get("kernels", [])}

    def near(got, want, tol):
        return want and abs(got - want) <= tol * want

    def show(tools, files):
        rep = tools.report(files)
        m = re.search(r"^Metrics:.*?(?=^CUDA activity summary)", rep, re.M | re.S)
        r = re.search(r"^Roofline.*?^Metrics are warm-cache.*?$", rep, re.M | re.S)
        for part in (m, r):
            for line in (part.group(0).rstrip("\n").splitlines() if part else []):
                print("# " + line)
        return rep

    def same_output(run, ref, errs):
        if results(run.out) != results(ref):
            errs.append("program output differs with --metrics: %s vs %s"
                        % (results(run.out), results(ref)))

    def truth_checks(run, js, errs, launches):
        mx, ks = metrics_of(js)
        t = run.truth
        for name, prec in sorted(PREC.items()):
            k = ks.get(name)
            if not k:
                errs.append("%s not profiled" % name)
                continue
            if k["launches"] != launches:
                errs.append("%s: %d launches profiled, expected %d" % (name, k["launches"], launches))
            want = t["flops." + name] * k["launches"]
            got = k["flops"][prec]
            if not near(got, want, FLOP_TOL):
                errs.append("%s %s FLOPs %.0f, expected %.0f (within 0.1%%)" % (name, prec, got, want))
            other = sum(v for p, v in k["flops"].items() if p != prec and v)
            if other > FLOP_TOL * want:
                errs.append("%s: %.0f FLOPs of other precisions" % (name, other))
            if not k["time_ns"] > 0:
                errs.append("%s: no profiled time" % name)
        for name, cls in sorted(MMA.items()):
            k = ks.get(name)
            if not k:
                errs.append("%s not profiled" % name)
                continue
            want = t["flops." + name] * k["launches"]
            got = k["flops"][cls]
            if not near(got, want, FLOP_TOL):
                errs.append("%s (mma.sync) %s FLOPs %.0f, expected %.0f (within 0.1%%)"
                            % (name, cls, got, want))
            other = sum(v for p, v in k["flops"].items() if p != cls and v)
            if other > FLOP_TOL * want:
                errs.append("%s: %.0f FLOPs of other classes" % (name, other))
        k = ks.get("stream_copy")
        if not k:
            errs.append("stream_copy not profiled")
        else:
            for what in ("read", "write"):
                want = t["bytes.stream_copy." + what]
                got = k["dram_" + what]
                if not near(got, want, BYTE_TOL):
                    errs.append("stream_copy DRAM %s %.0f bytes, expected %d (within 5%%)"
                                % (what, got, want))
            if k["bound"] != "memory-bound":
                errs.append("stream_copy verdict %s, expected memory-bound" % k["bound"])
        if mx.get("skipped_graph_launches") != t["graph.launches"]:
            errs.append("graph launches not profiled: %s, expected %d"
                        % (mx.get("skipped_graph_launches"), t["graph.launches"]))
        if mx.get("skipped_capture", 0) < 1:
            errs.append("the launch during stream capture was not counted as skipped")
        if mx.get("failed"):
            errs.append("%d replays failed" % mx["failed"])
        return mx, ks

    def replayed_times(js, errs):
        """Profiled launches stay in the kernel table with a duration close
        to that of the same kernel's unprofiled launch."""
        kern = h["kernels_by_base"](js)
        for name in PREC:
            k = kern.get(name)
            if not k or k["count"] != 2:
                errs.append("kernel table: %s count %s, expected 2" % (name, k and k["count"]))
            elif not (k["min_ns"] > 0 and k["max_ns"] <= 1.25 * k["min_ns"]):
                errs.append("kernel table: %s durations %d..%d ns differ by more than 25%%"
                            % (name, k["min_ns"], k["max_ns"]))

    def t_roofline(tools):
        app = tools.app("metrics_truth")
        ref = plain([app])
        run = h["traced"](tools, [app], opts=["--metrics"])
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        errs = []
        same_output(run, ref, errs)
        mx, ks = truth_checks(run, js, errs, 1)
        if mx.get("profiled") != 8:
            errs.append("%s launches profiled, expected 8 (first of each)" % mx.get("profiled"))
        replayed_times(js, errs)
        rep = show(tools, run.files)
        for name in sorted(ks):
            k = ks[name]
            print("# %s: launches %d, time %d ns, replay cost %.1f ms per launch, passes %d, "
                  "flops %s, dram r/w %.0f/%.0f" % (name, k["launches"], k["time_ns"],
                  k["cost_ns"] / 1e6 / max(1, k["launches"]), k["passes"],
                  {p: v for p, v in k["flops"].items() if v}, k["dram_read"], k["dram_write"]))
        if "Roofline" not in rep or "launches profiled by kernel replay" not in rep:
            errs.append("report lacks the roofline table or the Metrics line")
        if errs:
            raise Fail("; ".join(errs))

    def t_all(tools):
        app = tools.app("metrics_truth")
        run = h["traced"](tools, [app], opts=["--metrics", "--metrics-launches=all"])
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        errs = []
        mx, ks = truth_checks(run, js, errs, 2)
        if mx.get("profiled") != 11:
            errs.append("%s launches profiled, expected 11" % mx.get("profiled"))
        replayed_times(js, errs)
        if errs:
            raise Fail("; ".join(errs))

    def t_launches(tools):
        """--metrics-replay=launches: each kernel's single-pass groups from
        successive launches, many launches per counter setup; the same
        truth as kernel replay, one merged result per kernel."""
        # Groups go in phases, each ending after 128 launches without demand:
        # about 12 of these rounds of 11 launches per group.
        reps = 48
        app = tools.app("metrics_truth")
        env = {"METRICS_TRUTH_REPS": str(reps)}
        ref = plain([app], env)
        run = h["traced"](tools, [app], opts=["--metrics", "--metrics-replay=launches"], env=env)
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        errs = []
        same_output(run, ref, errs)
        mx, ks = truth_checks(run, js, errs, 1)
        if mx.get("replay") != "launches":
            errs.append("metrics replay %r, expected launches" % mx.get("replay"))
        if not 2 <= mx.get("passes", 0) <= 4:
            errs.append("%s single-pass groups; expected 2 to 4" % mx.get("passes"))
        for name in TRUTH_KERNELS:
            k = ks.get(name)
            if k and k["passes"] != mx.get("passes"):
                errs.append("%s measured in %s groups of %s" % (name, k["passes"], mx.get("passes")))
        # Every launch keeps a time: from its activity record or the profiler's duration.
        kern = h["kernels_by_base"](js)
        for name in PREC:
            k = kern.get(name)
            if not k or k["count"] != 2 * reps:
                errs.append("kernel table: %s count %s, expected %d" % (name, k and k["count"], 2 * reps))
            elif not (k["min_ns"] > 0 and k["max_ns"] <= 1.25 * k["min_ns"]):
                errs.append("kernel table: %s durations %d..%d ns differ by more than 25%%"
                            % (name, k["min_ns"], k["max_ns"]))
        if "WaitNs" in kern:
            errs.append("CUPTI's wait kernels (%d) are in the kernel table" % kern["WaitNs"]["count"])
        rep = show(tools, run.files)
        if "measured over successive launches" not in rep:
            errs.append("the report's Metrics line does not say how the values were taken")
        cost = mx.get("cost_ns", 0) / 1e6
        print("# launches mode: %d kernels, %.1f ms of counter sessions in all, %.1f ms per kernel"
              % (len(ks), cost, cost / max(1, len(ks))))
        if errs:
            raise Fail("; ".join(errs))

    def t_memory_full(tools):
        """A process holding most of the device memory: kernel replay would
        save it through host memory (minutes per launch, as much host memory),
        so those launches run unprofiled, with one line saying why; the
        launches mode, which saves nothing, measures every kernel."""
        app = tools.app("metrics_truth")
        env = {"METRICS_TRUTH_BALLAST": "0.6"}
        ref = plain([app], env)
        errs = []
        run = h["traced"](tools, [app], opts=["--metrics"], env=env)
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        same_output(run, ref, errs)
        mx, ks = metrics_of(js)
        said = [l for l in run.err.splitlines() if "GiB of device memory in use" in l]
        print("# kernel replay: %s profiled, %s not replayed; %s" % (mx.get("profiled"),
              mx.get("failed"), said[0][:200] if said else "nothing said"))
        if mx.get("profiled") or mx.get("failed", 0) < len(TRUTH_KERNELS) or not said:
            errs.append("kernel replay with most of the memory in use: %s profiled, %s not "
                        "replayed, said %s" % (mx.get("profiled"), mx.get("failed"), said[:1]))
        if "could not be replayed" not in show(tools, run.files):
            errs.append("the report does not count the launches left unprofiled")
        env["METRICS_TRUTH_REPS"] = "48"
        ref = plain([app], env)
        run = h["traced"](tools, [app], opts=["--metrics", "--metrics-replay=launches"], env=env)
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        same_output(run, ref, errs)
        mx, ks = truth_checks(run, js, errs, 1)
        print("# launches mode: %d kernels measured" % len(ks))
        if errs:
            raise Fail("; ".join(errs))

    def t_memory_kinds(tools):
        """Kernel replay restores memory of every kind between its passes: a
        read-modify-write kernel on cudaMalloc, pool (cudaMallocAsync),
        managed, mapped host and cuMemCreate memory, each profiled in 3
        passes, leaves the program's results bit-identical."""
        app = tools.app("replay_memory")
        ref = plain([app], timeout=h["RUN_TIMEOUT"])
        skip = [l[5:] for l in ref.splitlines() if l.startswith("SKIP ")]
        if skip:
            raise h["Skip"](skip[0])
        run = h["traced"](tools, [app], opts=["--metrics"])
        h["expect_status"](run, 0)
        h["expect_files"](run, 1)
        js = tools.export_json(run.files)
        errs = []
        if len(results(ref)) != 5:
            errs.append("replay_memory printed %d results, expected 5" % len(results(ref)))
        same_output(run, ref, errs)
        mx, ks = metrics_of(js)
        kinds = ("malloc", "pool", "managed", "mapped", "vmm")
        missing = [k for k in kinds if "rmw_" + k not in ks]
        if missing or mx.get("profiled") != len(kinds) or mx.get("failed"):
            errs.append("profiled %s, not replayed %s, kernels without values %s"
                        % (mx.get("profiled"), mx.get("failed"), missing))
        if mx.get("passes", 0) < 2:
            errs.append("%s passes: nothing was replayed" % mx.get("passes"))
        print("# %s launches profiled in %s passes each; results %s"
              % (mx.get("profiled"), mx.get("passes"), "unchanged" if not errs else "see below"))
        if errs:
            raise Fail("; ".join(errs))

    def t_threads(tools):
        """metrics_truth's kernels from 4 threads at once, each on its own
        stream, under kernel replay and the launches mode: every kernel's
        values exact, the kernel counts and the program's results unchanged,
        nothing lost, no hang."""
        app = tools.app("metrics_truth")
        for mode, reps in (("kernel", 1), ("launches", 16)):
            env = {"METRICS_TRUTH_THREADS": "4", "METRICS_TRUTH_REPS": str(reps)}
            ref = plain([app], env)
            run = h["traced"](tools, [app], opts=["--metrics", "--metrics-replay=" + mode],
                              env=env)
            js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
            errs = []
            same_output(run, ref, errs)
            if "RESULT threads_agree 1" not in run.out:
                errs.append("the threads' results differ from each other")
            mx, ks = truth_checks(run, js, errs, 1)
            if mx.get("skipped_other"):
                errs.append("%d launches skipped for want of room" % mx["skipped_other"])
            print("# %s replay, 4 threads: %d kernels, %.1f ms of counter work in all"
                  % (mode, len(ks), mx.get("cost_ns", 0) / 1e6))
            if errs:
                raise Fail("%s replay: %s" % (mode, "; ".join(errs)))

    def t_filter_inject(tools):
        app = tools.app("metrics_truth")
        run = h["traced"](tools, [app], how="inject",
                          env={"GPUPROF_METRICS": "dram__bytes_read.sum,"
                               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                               "GPUPROF_METRICS_KERNELS": "^stream_copy$|ma_f32"})
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        mx, ks = metrics_of(js)
        errs = []
        if sorted(ks) != ["fma_f32", "stream_copy"]:
            errs.append("profiled %s, expected fma_f32 and stream_copy" % sorted(ks))
        else:
            want = run.truth["flops.fma_f32"]
            if not near(ks["fma_f32"]["flops"]["fp32"], want, FLOP_TOL):
                errs.append("fma_f32 FLOPs %s, expected %d" % (ks["fma_f32"]["flops"]["fp32"], want))
            if not near(ks["stream_copy"]["dram_read"], run.truth["bytes.stream_copy.read"], BYTE_TOL):
                errs.append("stream_copy DRAM read %s" % ks["stream_copy"]["dram_read"])
        if errs:
            raise Fail("; ".join(errs))

    def t_regex(tools):
        """--metrics-kernels and --metrics-nvtx are PCRE2 patterns (Python re
        syntax).  One that does not compile turns metrics off with one line
        naming the option, the pattern and the offset, and the program runs
        on; nested repetitions that took glibc's regcomp minutes or gigabytes
        (a 22-character one stalled the program's start past 20 s) compile
        at once, and the alternatives beside them select what they name."""
        app = tools.app("metrics_truth")
        run = h["traced"](tools, [app], opts=["--metrics", "--metrics-kernels=(fma_f32"])
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        errs = []
        lines = [l for l in run.err.splitlines() if "regular expression" in l]
        want = ("gpuprof: --metrics-kernels (GPUPROF_METRICS_KERNELS): bad regular expression "
                "'(fma_f32': missing closing parenthesis at offset 8; metrics are off")
        if lines != [want]:
            errs.append("expected the line %r, got %s" % (want, lines))
        if (js.get("metrics") or {}).get("kernels"):
            errs.append("kernels profiled despite the refused pattern")
        nested = "(" * 18 + "q" + ")+" * 18     # no name here holds a 'q'
        for pat in (nested, "$((((((((%?)+)+)+)+)+)+)+)q"):
            t0 = time.monotonic()
            run = h["traced"](tools, [app], opts=["--metrics",
                                                 "--metrics-kernels=^fma_f(?:3)2$|" + pat])
            took = time.monotonic() - t0
            js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
            mx, ks = metrics_of(js)
            if sorted(ks) != ["fma_f32"]:
                errs.append("'%s': profiled %s, expected fma_f32" % (pat, sorted(ks)))
            print("# --metrics-kernels with '%s': %.1f s" % (pat, took))
            if took > 60:
                errs.append("'%s': the run took %.0f s" % (pat, took))
        # NVTX: the 6 launches of "inner" (inside "outer" and "app": nested ranges need
        # only one that matches), every launch profiled.
        nv = tools.app("nvtx_threads")
        run = h["traced"](tools, [nv], opts=["--metrics", "--metrics-launches=all",
                                             "--metrics-nvtx=^(?P<n>inn)er$|" + nested])
        js = h["check_run"](tools, run, "nvtx_threads",
                            truth=h["split_truth"](run.truth, "nvtx")[1])
        mx, ks = metrics_of(js)
        if mx.get("profiled") != 6:
            errs.append("--metrics-nvtx: %s launches profiled, expected the 6 of \"inner\""
                        % mx.get("profiled"))
        if [l for l in run.err.splitlines() if "stopped" in l or "regular expression" in l]:
            errs.append("unexpected lines: %s" % h["tail"](run.err))
        if errs:
            raise Fail("; ".join(errs))

    def t_unknown(tools):
        app = tools.app("metrics_truth")
        run = h["traced"](tools, [app], how="preload",
                          env={"GPUPROF_METRICS": "dram__byts_read.sum"})
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        lines = [l for l in run.err.splitlines() if "metric" in l]
        if len(lines) != 1 or not re.match(
                r"gpuprof: unknown metric 'dram__byts_read\.sum' on \w+; closest: "
                r"dram__bytes_read\.sum.*; metrics are off, tracing goes on$", lines[0]):
            raise Fail("expected one line naming the unknown metric and the closest names, got %s"
                       % lines)
        if js.get("metrics", {}).get("status") != 3:
            raise Fail("metrics status %s, expected 3 (unknown name)" % js.get("metrics"))

    def t_torch(tools):
        script = os.path.join(h["ROOT"], "test", "apps", "torch_metrics.py")
        ref = plain([sys.executable, script])
        run = h["traced"](tools, [sys.executable, script], opts=["--metrics"],
                          timeout=h["TORCH_TIMEOUT"])
        if run.rc != 0 or not run.files:
            raise Fail("exit %d, %d files; %s" % (run.rc, len(run.files), run.context()))
        js = tools.export_json(run.files)
        errs = h["health"](js)
        same_output(run, ref, errs)
        mx, ks = metrics_of(js)
        want = 2.0 * 4096 ** 3
        gemm = [k for k in ks.values() if abs(k["flops"]["tensor_fp16"] - want) <= FLOP_TOL * want]
        if not gemm:
            errs.append("no kernel with 2*4096^3 tensor fp16 FLOPs: %s"
                        % [(n[:60], k["flops"]["tensor_fp16"]) for n, k in ks.items()][:8])
        if mx.get("skipped_graph_launches", 0) < 1 or mx.get("skipped_capture", 0) < 1:
            errs.append("graph replay or captured launches not counted: %s" % mx)
        show(tools, run.files)
        if errs:
            raise Fail("; ".join(errs))

    # ---- the metrics cache

    def values_of(js):
        return {k["name"]: k["values_sum"] for k in js["metrics"]["kernels"]}

    def cache_files(d):
        return sorted(f for f in os.listdir(d) if f.endswith(".gpm"))

    def t_cache(tools):
        app = tools.app("metrics_truth")
        cdir = tempfile.mkdtemp(prefix="gpuprof-mcache.")
        tools.tmpdirs.append(cdir)
        opts = ["--metrics", "--metrics-cache=" + cdir]
        errs = []
        # First run: everything replayed, one file per kernel and configuration.
        r1 = h["traced"](tools, [app], opts=opts)
        js1 = h["check_run"](tools, r1, "metrics_truth", truth=standard(r1.truth))
        m1 = js1["metrics"]
        if m1.get("profiled") != 8 or m1.get("cached") != 0:
            errs.append("first run: %s replayed, %s cached; expected 8 and 0"
                        % (m1.get("profiled"), m1.get("cached")))
        files = cache_files(cdir)
        if len(files) != 8:
            errs.append("%d cache files after the first run, expected 8: %s" % (len(files), files))
        # Second run: nothing replayed, the same values, marked cached.
        r2 = h["traced"](tools, [app], opts=opts)
        js2 = h["check_run"](tools, r2, "metrics_truth", truth=standard(r2.truth))
        same_output(r2, r1.out, errs)
        m2 = js2["metrics"]
        if m2.get("profiled") != 0 or m2.get("cached") != 8:
            errs.append("second run: %s replayed, %s cached; expected 0 and 8"
                        % (m2.get("profiled"), m2.get("cached")))
        v1, v2 = values_of(js1), values_of(js2)
        if v1 != v2:
            errs.append("cached values differ from the measured ones: %s"
                        % sorted(n for n in v1 if v1[n] != v2.get(n)))
        truth_checks(r2, js2, errs, 1)
        for k in js2["metrics"]["kernels"]:
            if k["cached"] != k["launches"]:
                errs.append("%s: %d of %d launches cached" % (k["name"], k["cached"], k["launches"]))
        # Unreplayed, both launches of each FMA kernel have their activity times.
        kern = h["kernels_by_base"](js2)
        for name in PREC:
            kk = kern.get(name)
            if not kk or kk["count"] != 2 or not kk["min_ns"]:
                errs.append("kernel table: %s %s" % (name, kk))
        rep = tools.report(r2.files)
        if "8 from the metrics cache" not in rep or "(cached) " not in rep:
            errs.append("the report does not mark cached values")
        cost1, cost2 = m1.get("cost_ns", 0), sum(k["cost_ns"] for k in m2["kernels"])
        print("# replay cost %.1f ms in the first run, cache lookups %.3f ms in the second"
              % (cost1 / 1e6, cost2 / 1e6))
        if [l for l in r2.err.splitlines() if "metric" in l]:
            errs.append("second run printed: %s" % r2.err.strip()[-300:])
        # A damaged file: one line, that kernel replayed again, the file rewritten.
        with open(os.path.join(cdir, files[0]), "r+b") as f:
            f.seek(40)
            b = f.read(1)
            f.seek(40)
            f.write(bytes([b[0] ^ 0xff]))
        r3 = h["traced"](tools, [app], opts=opts)
        js3 = h["check_run"](tools, r3, "metrics_truth", truth=standard(r3.truth))
        lines = [l for l in r3.err.splitlines() if "metrics cache" in l]
        if len(lines) != 1 or files[0] not in lines[0] or "ignoring" not in lines[0]:
            errs.append("damaged cache file: expected one line naming it, got %s" % lines)
        m3 = js3["metrics"]
        if m3.get("profiled") != 1 or m3.get("cached") != 7:
            errs.append("after damage: %s replayed, %s cached; expected 1 and 7"
                        % (m3.get("profiled"), m3.get("cached")))
        v3 = values_of(js3)
        same = [k["name"] for k in m3["kernels"] if k["cached"]]
        if [n for n in same if v3[n] != v1[n]]:
            errs.append("cached values after the damaged file differ")
        r4 = h["traced"](tools, [app], opts=opts)
        js4 = h["check_run"](tools, r4, "metrics_truth", truth=standard(r4.truth))
        if js4["metrics"].get("cached") != 8 or [l for l in r4.err.splitlines() if "metrics" in l]:
            errs.append("the rewritten file was not used: %s cached; %s"
                        % (js4["metrics"].get("cached"), r4.err.strip()[-200:]))
        # A different metric set is another key.
        r5 = h["traced"](tools, [app], opts=["--metrics=dram__bytes_read.sum",
                                             "--metrics-cache=" + cdir])
        js5 = h["check_run"](tools, r5, "metrics_truth", truth=standard(r5.truth))
        if js5["metrics"].get("cached") != 0 or js5["metrics"].get("profiled") != 8:
            errs.append("another metric set: %s cached, %s replayed"
                        % (js5["metrics"].get("cached"), js5["metrics"].get("profiled")))
        if errs:
            raise Fail("; ".join(errs))

    def t_cache_ranks(tools):
        """Two processes filling one cache at once (ranks of a job)."""
        app = tools.app("metrics_truth")
        cdir = tempfile.mkdtemp(prefix="gpuprof-mcache.")
        out = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
        tools.tmpdirs += [cdir, out]
        env = h["clean_env"]()
        procs = []
        for r in range(2):
            cmd = [tools.wrapper, "run", "-o", os.path.join(out, "rank%d-%%p" % r), "--report=none",
                   "--metrics", "--metrics-cache=" + cdir, "--", app]
            procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE,
                                          stderr=subprocess.PIPE, stdin=subprocess.DEVNULL))
        errs = []
        outs = []
        for p in procs:
            o, e = p.communicate(timeout=h["RUN_TIMEOUT"])
            outs.append((p.returncode, o.decode(errors="replace"), e.decode(errors="replace")))
        for rc, o, e in outs:
            if rc != 0:
                errs.append("a rank exited %d: %s" % (rc, e.strip()[-300:]))
            bad = [l for l in e.splitlines() if "metrics cache" in l]
            if bad:
                errs.append("a rank saw a bad cache file: %s" % bad)
            print("# rank stderr: %s" % ([l for l in e.splitlines() if "gpuprof" in l][:3]))
        files = cache_files(cdir)
        leftovers = [f for f in os.listdir(cdir) if not f.endswith(".gpm")]
        if not files or leftovers:
            errs.append("cache holds %d entries (expected 8) and %s" % (len(files), leftovers))
        busy = sum(len([l for l in e.splitlines() if "HARDWARE_BUSY" in l]) for _, _, e in outs)
        print("# replays that found the counters busy after waiting: %d" % busy)
        run = h["traced"](tools, [app], opts=["--metrics", "--metrics-cache=" + cdir])
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        m = js["metrics"]
        if m.get("cached") + m.get("profiled") != 8 or m.get("cached") < 8 - busy:
            errs.append("after the ranks: %s cached, %s replayed" % (m.get("cached"),
                                                                    m.get("profiled")))
        truth_checks(run, js, errs, 1)
        if errs:
            raise Fail("; ".join(errs))

    # ---- Nsight Compute

    def ncu_run(tools, argv, names, extra=(), timeout=None):
        ncu = find_ncu()
        if not ncu:
            raise h["Skip"]("Nsight Compute (ncu) not found under /opt/nvidia or CUDA_HOME")
        tmp = tempfile.mkdtemp(prefix="gpuprof-ncu.")
        tools.tmpdirs.append(tmp)
        env = h["clean_env"]()
        env["TMPDIR"] = tmp
        cmd = [ncu, "--clock-control", "none", "--cache-control", "none",
               "--metrics", ",".join(names), "--page", "raw", "--csv", "--print-units", "base",
               "--print-kernel-base", "mangled"] + list(extra) + argv
        rc, out, err = h["run_cmd"](cmd, env, timeout or h["TORCH_TIMEOUT"])
        if rc != 0:
            raise Fail("ncu exited %d: %s" % (rc, h["tail"](err + out)))
        rows = parse_ncu_raw(out)
        if not rows:
            raise Fail("ncu printed no kernel rows: %s" % h["tail"](out))
        return ncu, rows

    def compare_ncu(name, values, row, errs, table, memory_bound):
        """Every count gpuprof recorded against ncu's value of the same name."""
        l1 = values.get("l1tex__t_bytes.sum", 0)
        for n in counts_of(values):
            want = ncu_number(row.get(n, ""))
            got = values[n]
            if want is None:
                errs.append("%s: ncu has no value of %s" % (name, n))
                continue
            if n.startswith(CACHE_STATE) and not memory_bound:
                ok = abs(got - want) <= NCU_CACHE_TOL * max(abs(want), l1)
                how = "cache state"
            else:
                ok = abs(got - want) <= NCU_TOL * abs(want) if want else got == 0
                how = "2%"
            table.append("%-12s %-66s gpuprof %16.0f ncu %16.0f %+7.2f%% %s %s"
                         % (name[:12], n, got, want, 100.0 * (got - want) / want if want else 0,
                            how, "ok" if ok else "DIFFERS"))
            if not ok:
                errs.append("%s %s: gpuprof %.0f, ncu %.0f" % (name, n, got, want))
        for n in ("gpu__time_duration.sum", "sm__cycles_elapsed.avg.per_second"):
            want = ncu_number(row.get(n, ""))
            if n in values and want:
                table.append("%-12s %-66s gpuprof %18.6g ncu %18.6g (ratio %.3f)"
                             % (name[:12], n, values[n], want, values[n] / want))

    def t_ncu(tools):
        app = tools.app("metrics_truth")
        run = h["traced"](tools, [app], opts=["--metrics"])
        js = h["check_run"](tools, run, "metrics_truth", truth=standard(run.truth))
        ks = {k["mangled"] or k["name"]: k for k in js["metrics"]["kernels"]}
        names = sorted(ks["fma_f32"]["values_sum"])
        ncu, rows = ncu_run(tools, [app], names, timeout=h["TORCH_TIMEOUT"])
        print("# %s" % ncu)
        first = {}
        for r in rows:
            first.setdefault(r.get("Kernel Name", ""), r)
        errs, table = [], []
        for name in TRUTH_KERNELS:
            if name not in ks or name not in first:
                errs.append("%s: gpuprof %s, ncu %s" % (name, name in ks, name in first))
                continue
            compare_ncu(name, ks[name]["values_sum"], first[name], errs, table,
                        ks[name]["bound"] == "memory-bound")
        for line in table:
            print("# " + line)
        if errs:
            raise Fail("; ".join(errs[:12]))

    def t_ncu_torch(tools):
        script = os.path.join(h["ROOT"], "test", "apps", "torch_metrics.py")
        run = h["traced"](tools, [sys.executable, script], opts=["--metrics"],
                          timeout=h["TORCH_TIMEOUT"])
        if run.rc != 0 or not run.files:
            raise Fail("exit %d, %d files; %s" % (run.rc, len(run.files), run.context()))
        js = tools.export_json(run.files)
        want = 2.0 * 4096 ** 3
        gemm = [k for k in js["metrics"]["kernels"]
                if abs(k["flops"]["tensor_fp16"] - want) <= FLOP_TOL * want]
        if len(gemm) != 1:
            raise Fail("expected one GEMM kernel with 2*4096^3 tensor FLOPs, found %d" % len(gemm))
        g = gemm[0]
        mangled = g["mangled"] or g["name"]
        ncu, rows = ncu_run(tools, [sys.executable, script], sorted(g["values_sum"]),
                            extra=["--kernel-name-base", "mangled",
                                   "--kernel-name", "regex:^" + re.escape(mangled) + "$",
                                   "--launch-count", "1"])
        errs, table = [], []
        compare_ncu(mangled[:40], g["values_sum"], rows[0], errs, table,
                    g["bound"] == "memory-bound")
        for line in table:
            print("# " + line)
        if errs:
            raise Fail("; ".join(errs[:12]))

    # ---- counters restricted to admins

    def t_privileges(tools):
        """Metrics as an unprivileged user: one line saying how to enable the
        counters where the driver restricts them, the trace as usual."""
        try:
            with open("/proc/driver/nvidia/params") as f:
                m = re.search(r"^RmProfilingAdminOnly:\s*(\d+)", f.read(), re.M)
        except OSError:
            m = None
        admin_only = m.group(1) if m else "?"
        if os.geteuid() != 0:
            raise h["Skip"]("needs root to create an unprivileged user")
        setpriv = shutil.which("setpriv")
        if not setpriv:
            raise h["Skip"]("no setpriv")
        try:
            pw = pwd.getpwnam(UNPRIVILEGED)
        except KeyError:
            rc = subprocess.call(["useradd", "--system", "--no-create-home", "--shell",
                                  "/usr/sbin/nologin", UNPRIVILEGED])
            if rc != 0:
                raise h["Skip"]("useradd failed (%d)" % rc)
            pw = pwd.getpwnam(UNPRIVILEGED)
        # Copies it can read, and a directory it can write.
        d = tempfile.mkdtemp(prefix="gpuprof-nopriv.")
        tools.tmpdirs.append(d)
        os.chmod(d, 0o755)
        for sub, files in (("bin", ["gpuprof", "gpuprof-analyze"]), ("lib", ["libgpuprof.so"])):
            os.makedirs(os.path.join(d, sub))
            for f in files:
                shutil.copy2(os.path.join(tools.build, sub, f), os.path.join(d, sub, f))
        app = os.path.join(d, "metrics_truth")
        shutil.copy2(tools.app("metrics_truth"), app)
        out = os.path.join(d, "out")
        os.makedirs(out)
        os.chown(out, pw.pw_uid, pw.pw_gid)
        env = h["clean_env"]()
        env["HOME"] = out
        cmd = [setpriv, "--reuid=%d" % pw.pw_uid, "--regid=%d" % pw.pw_gid, "--clear-groups",
               "--inh-caps=-all", os.path.join(d, "bin", "gpuprof"), "run", "-o",
               os.path.join(out, "trace-%p"), "--report=none", "--metrics", "--", app]
        rc, o, e = h["run_cmd"](cmd, env, h["RUN_TIMEOUT"])
        files = glob.glob(os.path.join(out, "*.gpuprof"))
        print("# RmProfilingAdminOnly: %s; as uid %d: exit %d; %s"
              % (admin_only, pw.pw_uid, rc, [l for l in e.splitlines() if "gpuprof" in l][:3]))
        if rc != 0 or len(files) != 1:
            raise Fail("as %s: exit %d, %d trace files: %s" % (UNPRIVILEGED, rc, len(files),
                                                                 h["tail"](e)))
        js = tools.export_json(files)
        errs = h["health"](js)
        kern = h["kernels_by_base"](js)
        if not kern.get("fma_f32") or kern["fma_f32"]["count"] != 2:
            errs.append("tracing did not go on: %s" % kern.get("fma_f32"))
        lines = [l for l in e.splitlines() if "metric" in l]
        mx = js.get("metrics", {})
        if admin_only == "1":
            if (len(lines) != 1 or "restricted to admin users" not in lines[0]
                    or "NVreg_RestrictProfilingToAdminUsers=0" not in lines[0]
                    or "run as root" not in lines[0]):
                errs.append("expected one line saying how to enable the counters, got %s" % lines)
            if mx.get("status") != 1:
                errs.append("metrics status %s, expected 1 (no permission)" % mx.get("status"))
        else:
            # Counters are open to every user here: metrics work unprivileged.
            print("# counters are open to all users on this machine (RmProfilingAdminOnly=%s): "
                  "the restricted case cannot be triggered" % admin_only)
            if lines or mx.get("status") != 0 or mx.get("profiled") != 8:
                errs.append("unprivileged metrics: status %s, %s profiled, %s"
                            % (mx.get("status"), mx.get("profiled"), lines))
        if errs:
            raise Fail("; ".join(errs))

    def t_denied(tools):
        """What these machines cannot produce, through a libcupti in front of
        the real one (test/shims/cuptideny.c): counters restricted to admins
        (CUPTI_ERROR_INSUFFICIENT_PRIVILEGES at Enable) and a GPU the profiler
        does not support.  Each gives one line on stderr saying why (and for
        the first how to enable the counters), a trace with every kernel, the
        metrics status in the trace, and the program's results unchanged."""
        app = tools.app("metrics_truth")
        shim = os.path.join(tools.build, "test", "shims", "libcuptideny.so")
        if not os.path.exists(shim):
            raise h["Skip"]("%s missing (make apps)" % shim)
        rc, ref, err = h["run_cmd"]([app], h["clean_env"](), h["RUN_TIMEOUT"])
        if rc != 0:
            raise Fail("metrics_truth without gpuprof exited %d: %s" % (rc, h["tail"](err)))
        errs = []
        for deny, status, want in (
                ("privileges", 1, r"^gpuprof: metrics are off: GPU performance counters are "
                 r"restricted to admin users \(ERR_NVGPUCTRPERM\); run as root or with "
                 r"CAP_SYS_ADMIN, or load the nvidia module with "
                 r"NVreg_RestrictProfilingToAdminUsers=0 .*; tracing goes on$"),
                ("unsupported", 2, r"^gpuprof: metrics are off: device 0 \(\w+\) does not "
                 r"support the CUPTI profiler \(its architecture: unsupported\); tracing goes on$")):
            run = h["traced"](tools, [app], opts=["--metrics"],
                              env={"GPUPROF_CUPTI_PATH": shim, "CUPTIDENY": deny})
            if run.rc != 0:
                errs.append("%s: exit %d: %s" % (deny, run.rc, h["tail"](run.err)))
                continue
            lines = [l for l in run.err.splitlines() if "metric" in l]
            if len(lines) != 1 or not re.match(want, lines[0]):
                errs.append("%s: expected one line matching %r, got %s" % (deny, want, lines))
            same_output(run, ref, errs)
            js = tools.export_json(run.files)
            errs += ["%s: %s" % (deny, e) for e in h["health"](js)]
            kern = h["kernels_by_base"](js)
            for name in PREC:
                if not kern.get(name) or kern[name]["count"] != 2:
                    errs.append("%s: tracing did not go on: %s %s" % (deny, name, kern.get(name)))
            mx = js.get("metrics", {})
            if mx.get("status") != status or mx.get("profiled"):
                errs.append("%s: metrics status %s, %s profiled; expected status %d, none"
                            % (deny, mx.get("status"), mx.get("profiled"), status))
            print("# %s: %s" % (deny, lines[0] if lines else None))
        if errs:
            raise Fail("; ".join(errs))

    return [
        ("metrics-denied", t_denied),
        ("metrics-roofline", t_roofline),
        ("metrics-all-launches", t_all),
        ("metrics-launches-mode", t_launches),
        ("metrics-threads", t_threads),
        ("metrics-memory-full", t_memory_full),
        ("metrics-memory-kinds", t_memory_kinds),
        ("metrics-filter-inject", t_filter_inject),
        ("metrics-unknown-name", t_unknown),
        ("metrics-regex", t_regex),
        ("metrics-torch", t_torch),
        ("metrics-cache", t_cache),
        ("metrics-cache-ranks", t_cache_ranks),
        ("metrics-ncu", t_ncu),
        ("metrics-ncu-torch", t_ncu_torch),
        ("metrics-privileges", t_privileges),
    ]
