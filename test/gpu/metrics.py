"""GPU tests of hardware metrics (gpuprof run --metrics), run by run.py.

tests(h) returns the (name, function) pairs; h is run.py's namespace
(traced, check_run, Fail, ...).  Truth comes from test/apps/metrics_truth.cu
(exact FLOPs per precision, bytes of a streaming copy) and
test/apps/torch_metrics.py (a 4096^3 half-precision GEMM).  Each test also
requires that the program's output is the same with and without --metrics.
"""

import os
import re
import sys

FLOP_TOL = 0.001        # FLOP counts: within 0.1%
BYTE_TOL = 0.05         # DRAM bytes: within 5%
PREC = {"fma_f64": "fp64", "fma_f32": "fp32", "fma_f16": "fp16"}


def tests(h):
    Fail = h["Fail"]

    def results(out):
        return [l for l in out.splitlines() if l.startswith("RESULT ")]

    def plain(argv):
        rc, out, err = h["run_cmd"](argv, h["clean_env"](), h["TORCH_TIMEOUT"])
        if rc != 0:
            raise Fail("%s without gpuprof exited %d: %s" % (argv[-1], rc, h["tail"](err)))
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
        if mx.get("profiled") != 4:
            errs.append("%s launches profiled, expected 4 (first of each)" % mx.get("profiled"))
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
        if mx.get("profiled") != 7:
            errs.append("%s launches profiled, expected 7" % mx.get("profiled"))
        replayed_times(js, errs)
        if errs:
            raise Fail("; ".join(errs))

    def t_filter_inject(tools):
        app = tools.app("metrics_truth")
        run = h["traced"](tools, [app], how="inject",
                          env={"GPUPROF_METRICS": "dram__bytes_read.sum,"
                               "sm__sass_thread_inst_executed_op_ffma_pred_on.sum",
                               "GPUPROF_METRICS_KERNELS": "^stream_copy$|f32"})
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

    return [
        ("metrics-roofline", t_roofline),
        ("metrics-all-launches", t_all),
        ("metrics-filter-inject", t_filter_inject),
        ("metrics-unknown-name", t_unknown),
        ("metrics-torch", t_torch),
    ]
