#!/usr/bin/env python3
"""Checks scripts/overtime-svg.py, the picture of the GPU over time, on the
golden traces with samples (test/golden/*overtime*.gpuprof), against the
analyzer's own exports of the same trace:

- the picture is well-formed XML, an SVG document, with a DRAM panel, an
  SM panel and, where the trace has NVML telemetry, a power panel;
- one shaded phase per run of one kernel name, each starting at its first
  kernel's start and ending at its last kernel's end (from export -t csv),
  alternating copy and FMA on the synthetic trace;
- the curves hold the samples' levels: the DRAM read + write maximum is
  the samples' maximum of read + write (to 2%), SM issue within 0..100;
  inside each copy phase (a margin of two samples in from its edges, where
  samples exist) DRAM bandwidth is above ten times its level inside the
  FMA phases, and SM issue the other way round;
- more phases than --max-phases: none drawn, and a line says so;
- a samples CSV without PM or telemetry samples, or a trace without any,
  ends with exit status 1 and a message, not a picture.

    overtime-svg-checks.py BUILD

Prints "ok - ..." / "not ok - ..." lines; exit status 1 on failure.
"""

import csv
import glob
import io
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SCRIPT = os.path.join(ROOT, "scripts", "overtime-svg.py")
NS = "{http://www.w3.org/2000/svg}"
DRAM = ("dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second")
failed = []


def check(name, cond, detail=""):
    print("%s - overtime svg: %s%s" % ("ok" if cond else "not ok", name,
                                        "" if cond else ": " + str(detail)[:300]))
    if not cond:
        failed.append(name)


def export(analyze, trace, extra):
    p = subprocess.run([analyze, "export", "-t", "csv"] + extra + [trace],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)
    return list(csv.DictReader(io.StringIO(p.stdout.decode())))


def curve_points(panel, metric):
    """[(x, value)] of a panel's curve of metric."""
    out = []
    for pl in panel.iter(NS + "polyline"):
        if pl.get("data-metric") != metric:
            continue
        xs = [float(p.split(",")[0]) for p in pl.get("points").split()]
        vs = [float(v) for v in pl.get("data-values").split()]
        out += list(zip(xs, vs))
    return out


def level(points, x0, x1):
    vs = [v for x, v in points if x0 <= x <= x1]
    return sum(vs) / len(vs) if vs else None


def check_trace(analyze, trace):
    name = os.path.basename(trace)
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "t.svg")
        p = subprocess.run([sys.executable, SCRIPT, "--gpuprof", analyze, "-o", out, trace],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check("%s: renders" % name, p.returncode == 0, p.stderr.decode())
        if p.returncode != 0:
            return
        try:
            root = ET.parse(out).getroot()
        except ET.ParseError as e:
            check("%s: well-formed" % name, False, e)
            return
        check("%s: an SVG document" % name, root.tag == NS + "svg", root.tag)
        samples = export(analyze, trace, ["--table", "gpu_samples"])
        acts = export(analyze, trace, [])
        t0, t1 = int(root.get("data-t0-ns")), int(root.get("data-t1-ns"))
        panels = {g.get("data-panel"): g for g in root.iter(NS + "g") if g.get("class") == "panel"}
        has_nvml = any(r["metric"] == "nvml.power_w" for r in samples)
        check("%s: DRAM and SM panels%s" % (name, ", power" if has_nvml else ""),
              "dram" in panels and "sm" in panels and ("power" in panels) == has_nvml,
              sorted(panels))
        # Phases from the kernels, computed here independently.
        ks = sorted((int(r["start_ns"]), int(r["end_ns"]), r["name"].split("(")[0])
                    for r in acts if r["kind"] == "kernel" and r["device"] == "0")
        want = []
        for s, e, n in ks:
            if want and want[-1][2] == n:
                want[-1][1] = max(want[-1][1], e)
            else:
                want.append([s, e, n])
        got = [(int(r.get("data-start-ns")), int(r.get("data-end-ns")), r.get("data-kernel"))
               for r in root.iter(NS + "rect") if r.get("class") == "phase"]
        s0 = min(int(r["start_ns"]) for r in samples)
        s1 = max(int(r["end_ns"]) for r in samples)
        check("%s: the picture spans the samples' time" % name, (t0, t1) == (s0, s1), (t0, t1, s0, s1))
        check("%s: one phase per run of a kernel name in the samples' time, at its kernels' times"
              % name, got == [tuple(x) for x in want if x[1] > s0 and x[0] < s1], (got, want))
        names = [g[2] for g in got]
        check("%s: copy and FMA phases alternate" % name,
              len(names) >= 2 and all(a != b for a, b in zip(names, names[1:])) and
              set(names) == {"copy_f4", "fma_loop"}, names)
        rect = panels["dram"].find(NS + "rect")
        px0, pw = float(rect.get("x")), float(rect.get("width"))

        def x_of(t):
            return px0 + (t - t0) / float(t1 - t0) * pw

        # The samples' read + write maximum against the curve's.
        by = {}
        for r in samples:
            if r["device"] == "0" and r["metric"] in DRAM:
                by.setdefault((r["start_ns"], r["end_ns"]), 0.0)
                by[(r["start_ns"], r["end_ns"])] += float(r["value"])
        dram = curve_points(panels["dram"], "dram__bytes.sum.per_second")
        smi = curve_points(panels["sm"],
                           "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed")
        top = max(by.values()) / 1e9
        check("%s: DRAM curve's maximum is the samples' (GB/s)" % name,
              dram and abs(max(v for _, v in dram) - top) <= 0.02 * top,
              (max(v for _, v in dram) if dram else None, top))
        check("%s: SM issue within 0..100%%" % name,
              smi and all(0 <= v <= 100 for _, v in smi))
        interval = min(int(r["end_ns"]) - int(r["start_ns"]) for r in samples if r["source"] == "pm")
        first = min(int(r["start_ns"]) for r in samples if r["source"] == "pm")
        lv = {"copy_f4": ([], []), "fma_loop": ([], [])}
        for s, e, n in got:
            s = max(s, first) + 2 * interval
            e -= 2 * interval
            if e <= s:
                continue
            a, b = level(dram, x_of(s), x_of(e)), level(smi, x_of(s), x_of(e))
            if a is not None and b is not None:
                lv[n][0].append(a)
                lv[n][1].append(b)
        ok = lv["copy_f4"][0] and lv["fma_loop"][0]
        check("%s: DRAM above 10x inside copy phases, SM issue above 10x inside FMA phases" % name,
              ok and min(lv["copy_f4"][0]) > 10 * max(lv["fma_loop"][0]) and
              min(lv["fma_loop"][1]) > 10 * max(lv["copy_f4"][1]), lv)


def check_max_phases(analyze, trace):
    p = subprocess.run([sys.executable, SCRIPT, "--gpuprof", analyze, "--max-phases", "1", trace],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    root = ET.fromstring(p.stdout) if p.returncode == 0 else None
    phases = [] if root is None else [r for r in root.iter(NS + "rect") if r.get("class") == "phase"]
    check("more phases than --max-phases: none drawn, a line says so",
          root is not None and not phases and b"more than --max-phases 1" in p.stderr, p.stderr)


def check_errors(analyze):
    with tempfile.TemporaryDirectory() as d:
        empty = os.path.join(d, "s.csv")
        with open(empty, "w") as f:
            f.write("host,rank,pid,file,device,source,metric,start_ns,end_ns,value\n")
        p = subprocess.run([sys.executable, SCRIPT, empty], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        check("a CSV without samples: exit 1, a message, no picture",
              p.returncode == 1 and b"no samples" in p.stderr and not p.stdout, p.stderr)
        other = os.path.join(d, "o.csv")
        with open(other, "w") as f:
            f.write("host,rank,pid,file,device,source,metric,start_ns,end_ns,value\n"
                    "h,,1,f,0,gpm,gpm.sm_util_pct,0,10,5\n")
        p = subprocess.run([sys.executable, SCRIPT, other], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE)
        check("samples of none of its metrics: exit 1, a message",
              p.returncode == 1 and b"no DRAM, SM issue or power" in p.stderr, p.stderr)
        plain = sorted(t for t in glob.glob(os.path.join(HERE, "*.gpuprof"))
                       if "overtime" not in t)
        if plain:
            p = subprocess.run([sys.executable, SCRIPT, "--gpuprof", analyze, plain[0]],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            check("a trace without samples: exit 1, a message",
                  p.returncode == 1 and b"no samples" in p.stderr, p.stderr)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    analyze = os.path.join(build, "bin", "gpuprof-analyze")
    traces = sorted(glob.glob(os.path.join(HERE, "*overtime*.gpuprof")))
    if not traces:
        print("skip - overtime svg # no golden trace with samples")
        return 0
    for t in traces:
        check_trace(analyze, t)
    check_max_phases(analyze, traces[0])
    check_errors(analyze)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
