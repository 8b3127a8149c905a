"""GPU tests of the roofline (run by run.py): a PyTorch transformer step
under --metrics=roofline (output unchanged, GEMMs compute-bound near the
tensor-core peak, elementwise kernels memory-bound near DRAM bandwidth,
one dot per kernel in --roofline-svg), the same step's loop under
--metrics-replay=launches (every repeating kernel in every group, FLOPs
equal to kernel replay's), and gpuprof calibrate (measured
peaks plausible against the specifications, stored, used by reports).

tests(h) returns the (name, function) pairs; h is run.py's namespace.
"""

import os
import re
import sys
import tempfile
import xml.etree.ElementTree as ET

GEMM_MIN_PCT = 30       # % of the tensor-core roof the largest GEMM reaches at least
SVG_NS = "{http://www.w3.org/2000/svg}"
LAUNCHES_STEPS = 17     # training steps for the launches mode (prime: the loop's kernels
                        # are those launched a multiple of it times)


def svg_dots(path):
    """(dots, ceiling names) of a --roofline-svg chart; fails on malformed XML."""
    root = ET.parse(path).getroot()
    dots = [e for e in root.iter(SVG_NS + "circle") if e.get("class") == "kernel"]
    ceil = {e.get("data-ceiling") for e in root.iter(SVG_NS + "line")
            if "ceiling" in (e.get("class") or "")}
    return dots, ceil


def tests(h):
    Fail = h["Fail"]

    def results(out):
        return [l for l in out.splitlines() if l.startswith("RESULT ")]

    def analyze(tools, args):
        rc, out, err = h["run_cmd"]([tools.analyzer] + args, h["clean_env"](), h["TOOL_TIMEOUT"])
        if rc != 0:
            raise Fail("gpuprof-analyze %s exited %d: %s" % (" ".join(args[:2]), rc, h["tail"](err)))
        return out

    def t_transformer(tools):
        script = os.path.join(h["ROOT"], "test", "apps", "torch_transformer.py")
        rc, ref, err = h["run_cmd"]([sys.executable, script], h["clean_env"](), h["TORCH_TIMEOUT"])
        if rc != 0:
            raise Fail("torch_transformer.py without gpuprof exited %d: %s" % (rc, h["tail"](err)))
        run = h["traced"](tools, [sys.executable, script], opts=["--metrics=roofline"],
                          timeout=h["TORCH_TIMEOUT"])
        if run.rc != 0 or not run.files:
            raise Fail("exit %d, %d files; %s" % (run.rc, len(run.files), run.context()))
        errs = []
        if results(run.out) != results(ref) or not results(ref):
            errs.append("program output differs with --metrics: %s vs %s"
                        % (results(run.out), results(ref)))
        js = tools.export_json(run.files)
        errs += h["health"](js)
        mx = js.get("metrics") or {}
        ks = mx.get("kernels", [])
        if mx.get("failed"):
            errs.append("%d replays failed" % mx["failed"])
        gemms = sorted((k for k in ks if k["flops"].get("tensor_fp16", 0) > 0),
                       key=lambda k: -k["flops"]["tensor_fp16"])
        elem = sorted((k for k in ks if "elementwise" in k["name"]
                       and not k["flops"].get("tensor_fp16") and k.get("dram_bytes")),
                      key=lambda k: -k["dram_bytes"])
        for k in gemms + elem[:8]:
            print("# %-13s %5s%% %-45s %8.1f TFLOP/s %8.1f GB/s AI %s" % (
                k["bound"], "%.0f" % k["pct_of_roof"] if k.get("pct_of_roof") is not None else "-",
                k["name"][:45], (k.get("flop_s") or 0) / 1e12, (k.get("dram_bytes_s") or 0) / 1e9,
                "%.3g" % k["intensity"] if k.get("intensity") is not None else "-"))
        if not gemms:
            errs.append("no kernel with tensor-core FLOPs")
        else:
            g = gemms[0]
            if g["bound"] != "compute-bound" or g["dominant"] != "tensor_fp16":
                errs.append("largest GEMM %s: %s (%s), expected compute-bound on tensor_fp16"
                            % (g["name"][:60], g["bound"], g["dominant"]))
            elif not g["pct_of_roof"] >= GEMM_MIN_PCT:
                errs.append("largest GEMM at %.0f%% of the tensor-core roof, expected >= %d%%"
                            % (g["pct_of_roof"], GEMM_MIN_PCT))
            # GEMMs right of the tensor-core ridge (their data reused enough):
            # most of them compute-bound.  Left of it (attention's short
            # products, re-read operands) a GEMM is fairly memory-bound.
            dev = (mx.get("devices") or [{}])[0]
            bw = dev.get("peak_dram_bytes_s") or 0
            ridge = (dev.get("peak_flop_s") or {}).get("tensor_fp16", 0) / bw if bw else 0
            right = [k for k in gemms if ridge and (k.get("intensity") or 0) >= ridge]
            cb = sum(1 for k in right if k["bound"] == "compute-bound")
            print("# %d GEMMs, %d right of the ridge (%.0f FLOP/B), %d of them compute-bound"
                  % (len(gemms), len(right), ridge, cb))
            if not right or cb * 2 < len(right):
                errs.append("%d of %d GEMMs right of the ridge compute-bound" % (cb, len(right)))
        big = [k for k in elem if k["dram_bytes"] >= 64e6]
        if not big:
            errs.append("no elementwise kernel moving >= 64 MB of DRAM")
        else:
            if big[0]["bound"] != "memory-bound":
                errs.append("largest elementwise kernel %s: %s, expected memory-bound"
                            % (big[0]["name"][:60], big[0]["bound"]))
            mb = sum(1 for k in big if k["bound"] == "memory-bound")
            if mb * 2 < len(big):
                errs.append("only %d of %d large elementwise kernels memory-bound" % (mb, len(big)))
        # The chart: one dot per profiled kernel, the ceilings of the device.
        svg = os.path.join(tools.tmpdirs[-1], "roof.svg")
        analyze(tools, ["report", "--spec-peaks", "--roofline-svg", svg] + run.files)
        dots, ceil = svg_dots(svg)
        if len(dots) != len(ks):
            errs.append("%d dots in the chart for %d profiled kernels" % (len(dots), len(ks)))
        for c in ("DRAM", "FP32", "FP64", "FP16", "Tensor FP16/BF16"):
            if c not in ceil:
                errs.append("chart lacks the %s ceiling (has %s)" % (c, sorted(ceil)))
        if errs:
            raise Fail("; ".join(errs))

    def t_transformer_launches(tools):
        """--metrics-replay=launches on a training loop: every kernel that
        repeats gets every group, none is skipped, the FLOPs equal kernel
        replay's, and the program's results are unchanged."""
        script = os.path.join(h["ROOT"], "test", "apps", "torch_transformer.py")
        env = {"TRANSFORMER_STEPS": str(LAUNCHES_STEPS)}
        e = h["clean_env"]()
        e.update(env)
        rc, ref, err = h["run_cmd"]([sys.executable, script], e, h["TORCH_TIMEOUT"])
        if rc != 0:
            raise Fail("torch_transformer.py without gpuprof exited %d: %s" % (rc, h["tail"](err)))
        runs = {}
        for mode, opts in (("kernel", []), ("launches", ["--metrics-replay=launches"])):
            run = h["traced"](tools, [sys.executable, script], opts=["--metrics=roofline"] + opts,
                              env=env, timeout=h["TORCH_TIMEOUT"])
            if run.rc != 0 or not run.files:
                raise Fail("%s replay: exit %d, %d files; %s"
                           % (mode, run.rc, len(run.files), run.context()))
            runs[mode] = (run, tools.export_json(run.files))
        run, js = runs["launches"]
        errs = h["health"](js)
        if results(run.out) != results(ref) or not results(ref):
            errs.append("program output differs with --metrics-replay=launches")
        mx = js.get("metrics") or {}
        for key in ("failed", "skipped_other"):
            if mx.get(key):
                errs.append("%s %d, expected 0: %s" % (key, mx[key], h["tail"](run.err)))
        counts = {k["name"]: k["count"] for k in js.get("kernels", [])}
        ks = {k["name"]: k for k in mx.get("kernels", [])}
        kr = {k["name"]: k for k in (runs["kernel"][1].get("metrics") or {}).get("kernels", [])}
        if sorted(ks) != sorted(kr):
            errs.append("kernels measured differ from kernel replay's: %s more, %s fewer"
                        % ([n[:50] for n in set(ks) - set(kr)], [n[:50] for n in set(kr) - set(ks)]))
        full = 0
        for name, k in ks.items():
            if k["passes"] == mx.get("passes"):
                full += 1
            elif counts.get(name, 0) % LAUNCHES_STEPS == 0:
                # The same number of launches in every step: the loop's kernels
                # (not the set-up's or the final checksums', which come in a burst).
                errs.append("%s launched %d times, measured in %d of %d groups"
                            % (name[:60], counts[name], k["passes"], mx.get("passes")))
            if k["passes"] != mx.get("passes") or name not in kr:
                continue
            for prec, v in kr[name]["flops"].items():
                w = k["flops"].get(prec, 0)
                if abs(w - v) > 1e-3 * max(v, 1):
                    errs.append("%s %s FLOPs %s, kernel replay %s" % (name[:50], prec, w, v))
        print("# launches mode: %d kernels, %d in every group, %d partial; %.1f ms of counter "
              "sessions, %.1f ms per kernel" % (len(ks), full, mx.get("partial", 0),
                                                 mx.get("cost_ns", 0) / 1e6,
                                                 mx.get("cost_ns", 0) / 1e6 / max(1, len(ks))))
        gemms = sorted((k for k in ks.values() if k["flops"].get("tensor_fp16", 0) > 0),
                       key=lambda k: -k["flops"]["tensor_fp16"])
        if not gemms or gemms[0]["bound"] != "compute-bound":
            errs.append("largest GEMM not compute-bound: %s"
                        % (gemms and (gemms[0]["name"][:60], gemms[0]["bound"])))
        if errs:
            raise Fail("; ".join(errs))

    def t_calibrate(tools):
        cal = os.path.join(tools.build, "bin", "gpuprof-calibrate")
        if not os.access(cal, os.X_OK):
            raise Fail("%s is missing (make builds it when nvcc is found)" % cal)
        pdir = tempfile.mkdtemp(prefix="gpuprof-gpu-test.peaks.")
        tools.tmpdirs.append(pdir)
        rc, out, err = h["run_cmd"]([tools.wrapper, "calibrate", "--device", "0", "--peaks-dir",
                                     os.path.join(pdir, "sub")], h["clean_env"](), 300)
        for line in out.splitlines():
            print("# " + line)
        if rc != 0:
            raise Fail("gpuprof calibrate exited %d: %s" % (rc, h["tail"](err)))
        errs = []
        pct = {}
        for line in out.splitlines():
            m = re.match(r"\s+(.+?)\s{2,}\s*([\d.]+) (TF/s|GB/s)\s+([\d.]+) (TF/s|GB/s)\s+(\d+)%", line)
            if m:
                pct[m.group(1)] = int(m.group(6))
        for row in ("FP32 FMA", "DRAM (copy)", "FP64 FMA"):
            if row not in pct:
                errs.append("no measured %s row" % row)
            elif not 50 <= pct[row] <= 110:
                errs.append("%s measured at %d%% of spec, expected 50-110%%" % (row, pct[row]))
        tc = [v for k, v in pct.items() if k.startswith("Tensor FP16")]
        if not tc or not 30 <= max(tc) <= 110:
            errs.append("tensor-core FP16 at %s%% of spec, expected 30-110%%" % tc)
        files = [f for f in os.listdir(os.path.join(pdir, "sub")) if f.endswith(".peaks")]
        if len(files) != 1:
            errs.append("peaks files %s, expected one" % files)
        else:
            mode = os.stat(os.path.join(pdir, "sub")).st_mode & 0o777
            if mode != 0o700:
                errs.append("peaks directory mode %o, expected 700" % mode)
        # A report of a trace of the same GPU says its peaks were measured.
        app = tools.app("metrics_truth")
        run = h["traced"](tools, [app], opts=["--metrics"])
        rep = analyze(tools, ["report", "--peaks-dir", os.path.join(pdir, "sub")] + run.files)
        line = [l for l in rep.splitlines() if l.startswith("Ceilings of")]
        for l in line:
            print("# " + l)
        if not line or "measured by gpuprof calibrate on" not in line[0]:
            errs.append("report does not say the peaks were measured: %s" % line)
        rep = analyze(tools, ["report", "--spec-peaks", "--peaks-dir", os.path.join(pdir, "sub")]
                      + run.files)
        if "from specifications" not in rep:
            errs.append("report --spec-peaks does not say 'from specifications'")
        if errs:
            raise Fail("; ".join(errs))

    return [
        ("roofline-transformer", t_transformer),
        ("roofline-transformer-launches", t_transformer_launches),
        ("calibrate", t_calibrate),
    ]
