#!/usr/bin/env python3
"""Draws the GPU over time of one run as an SVG picture: DRAM bandwidth and
SM issue (and, where the trace has telemetry, power) against time, with the
kernel phases shaded behind them.

    overtime-svg.py [options] TRACE.gpuprof            (runs gpuprof export)
    overtime-svg.py [options] SAMPLES.csv [ACTIVITIES.csv]

SAMPLES.csv is `gpuprof export -t csv --table gpu_samples` output,
ACTIVITIES.csv `gpuprof export -t csv` output (the kernels, for the
phases; without it there are none).  Given a trace, the script runs both
exports itself with --gpuprof (default: gpuprof on PATH).

A phase is a run of kernels of one name on the device, one after the other
with gaps shorter than --phase-gap milliseconds (default: 5, or three
sampling intervals if longer).  Each pixel column of a curve is the
time-weighted average of the samples under it, so a long run keeps its
levels without a point per sample.  The picture spans the samples' time
(PM sampling starts some hundred milliseconds after the context, so the
first kernels may have none); phases reaching out of it are cut at its
edges, phases wholly outside it left out (--all-phases: the picture spans
them too).  Time is in seconds from the picture's left edge.

Options:
  -o OUT.svg         output (default: standard output)
  --device N         device to draw (default: the first with PM samples)
  --pid PID          process (default: the first with samples)
  --title TEXT       title line (default: the trace's host and pid)
  --width PX         picture width (default 900)
  --phase-gap MS     see above
  --no-telemetry     leave the power panel out
  --all-phases       span every phase too, not only the samples' time
  --max-phases N     more phases than N (default 60; a training step has
                     thousands) are not drawn, and a line says so
  --gpuprof PATH     the gpuprof command, for a trace given

Python 3.6+, standard library only.
"""

import argparse
import csv
import html
import io
import subprocess
import sys

DRAM = ("dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second")
SM_ISSUE = "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed"
SM_ACTIVE = "sm__cycles_active.avg.pct_of_peak_sustained_elapsed"
POWER = "nvml.power_w"
SM_CLOCK = "nvml.sm_clock_mhz"
PHASE_COLORS = ("#4e79a7", "#f28e2b", "#59a14f", "#b07aa1", "#e15759", "#76b7b2",
                "#edc948", "#9c755f")


def fail(msg):
    sys.stderr.write("overtime-svg: %s\n" % msg)
    sys.exit(1)


def export(gpuprof, trace, extra):
    try:
        p = subprocess.run([gpuprof, "export", "-t", "csv"] + extra + [trace],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    except OSError as e:
        fail("cannot run %s: %s (--gpuprof names it)" % (gpuprof, e))
    if p.returncode != 0:
        fail("%s export of %s: %s" % (gpuprof, trace, p.stderr.decode(errors="replace").strip()))
    return p.stdout.decode()


def read_csv(text, need, what):
    rows = list(csv.DictReader(io.StringIO(text)))
    if rows and not need <= set(rows[0]):
        fail("%s: expected the columns %s" % (what, ", ".join(sorted(need))))
    return rows


def load_samples(rows, device, pid):
    """{metric: [(start, end, value)]} of one device and process, sorted."""
    if pid is None:
        pid = next((r["pid"] for r in rows if r["source"] == "pm"), rows[0]["pid"] if rows else None)
    if device is None:
        device = next((r["device"] for r in rows if r["pid"] == pid and r["source"] == "pm"),
                      next((r["device"] for r in rows if r["pid"] == pid), None))
    out = {}
    for r in rows:
        if r["pid"] != pid or r["device"] != device:
            continue
        try:
            out.setdefault(r["metric"], []).append(
                (int(r["start_ns"]), int(r["end_ns"]), float(r["value"])))
        except ValueError:
            continue
    for v in out.values():
        v.sort()
    return out, device, pid


def short_name(name):
    n = name.split("(")[0].strip()
    if "<" in n:
        n = n.split("<")[0]
    return n.split("::")[-1] or name[:40]


def phases(rows, device, pid, gap_ns):
    """[(start, end, name, kernels)]: runs of one kernel name with gaps < gap_ns."""
    ks = sorted((int(r["start_ns"]), int(r["end_ns"]), short_name(r["name"]))
                for r in rows if r["kind"] == "kernel" and r["device"] == device
                and (pid is None or r["pid"] == pid))
    out = []
    for s, e, n in ks:
        if out and out[-1][2] == n and s - out[-1][1] < gap_ns:
            p = out[-1]
            out[-1] = (p[0], max(p[1], e), n, p[3] + 1)
        else:
            out.append((s, e, n, 1))
    return out


def columns(series, t0, t1, n):
    """n time-weighted averages of series over equal columns of [t0, t1);
    None where no sample falls."""
    width = (t1 - t0) / float(n)
    acc = [0.0] * n
    wt = [0.0] * n
    for s, e, v in series:
        if e <= t0 or s >= t1 or e <= s:
            continue
        c0 = max(0, int((s - t0) / width))
        c1 = min(n - 1, int((e - t0) / width))
        for c in range(c0, c1 + 1):
            cs, ce = t0 + c * width, t0 + (c + 1) * width
            w = min(e, ce) - max(s, cs)
            if w > 0:
                acc[c] += v * w
                wt[c] += w
    return [acc[i] / wt[i] if wt[i] > 0 else None for i in range(n)]


def summed(a, b):
    """The sum of two series sampled on the same spans (DRAM read + write)."""
    other = {(s, e): v for s, e, v in b}
    return [(s, e, v + other[(s, e)]) for s, e, v in a if (s, e) in other]


def nice_step(span, target):
    raw = span / float(max(1, target))
    mag = 10 ** len(str(int(raw))) / 10.0 if raw >= 1 else 1.0
    while mag > raw:
        mag /= 10.0
    for m in (1, 2, 5, 10):
        if mag * m >= raw:
            return mag * m
    return mag * 10


def num(v):
    return ("%.3f" % v).rstrip("0").rstrip(".")


class Svg:
    def __init__(self):
        self.out = []

    def add(self, s):
        self.out.append(s)

    def text(self, x, y, s, size=11, anchor="start", extra=""):
        self.add('<text x="%s" y="%s" font-size="%d" text-anchor="%s"%s>%s</text>'
                 % (num(x), num(y), size, anchor, extra, html.escape(s)))


def panel(svg, cls, title, unit, curves, x0, y0, w, h, t0, t1, ncol, vmax=None):
    """A panel: curves [(label, metric, color, fill, [values per column])]."""
    top = vmax
    if top is None:
        top = max([v for c in curves for v in c[4] if v is not None] or [1.0])
        top = top * 1.1 if top > 0 else 1.0
    step = nice_step(top, 4)
    svg.add('<g class="panel" data-panel="%s" data-unit="%s" data-max="%s">'
            % (cls, html.escape(unit), num(top)))
    svg.add('<rect x="%s" y="%s" width="%s" height="%s" fill="none" stroke="#999"/>'
            % (num(x0), num(y0), num(w), num(h)))
    v = 0.0
    while v <= top + 1e-9:
        y = y0 + h - v / top * h
        svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#ddd"/>' % (num(x0), num(y), num(x0 + w), num(y)))
        svg.text(x0 - 4, y + 4, num(v), 10, "end")
        v += step
    svg.text(x0, y0 - 6, "%s (%s)" % (title, unit), 12, extra=' font-weight="bold"')
    lx = x0 + w
    for label, metric, color, fill, vals in reversed(curves):
        pts, runs = [], []
        for i, val in enumerate(vals):
            x = x0 + (i + 0.5) * w / ncol
            if val is None:
                if pts:
                    runs.append(pts)
                pts = []
                continue
            pts.append((x, y0 + h - min(val, top) / top * h, val))
        if pts:
            runs.append(pts)
        for r in runs:
            coords = " ".join("%s,%s" % (num(x), num(y)) for x, y, _ in r)
            if fill:
                poly = "%s,%s %s %s,%s" % (num(r[0][0]), num(y0 + h), coords, num(r[-1][0]), num(y0 + h))
                svg.add('<polygon points="%s" fill="%s" fill-opacity="0.35" stroke="none"/>' % (poly, color))
            svg.add('<polyline class="curve" data-metric="%s" data-values="%s" points="%s" '
                    'fill="none" stroke="%s" stroke-width="1.2"/>'
                    % (html.escape(metric), " ".join("%.6g" % val for _, _, val in r), coords, color))
        lx -= 8 + 6.5 * len(label)
        svg.add('<rect x="%s" y="%s" width="10" height="3" fill="%s"/>' % (num(lx), num(y0 - 12), color))
        svg.text(lx + 13, y0 - 8, label, 10)
    svg.add("</g>")


def render(samples, phase_list, opts, title):
    width = opts.width
    left, right = 70, 20
    plot_w = width - left - right
    ncol = max(50, int(plot_w))
    spans = [x for v in samples.values() for x in v]
    t0 = min(s for s, _, _ in spans)
    t1 = max(e for _, e, _ in spans)
    if opts.all_phases:
        t0 = min([t0] + [p[0] for p in phase_list])
        t1 = max([t1] + [p[1] for p in phase_list])
    if t1 <= t0:
        fail("the samples cover no time")
    phase_list = [p for p in phase_list if p[1] > t0 and p[0] < t1]
    if len(phase_list) > opts.max_phases:
        sys.stderr.write("overtime-svg: %d kernel phases, more than --max-phases %d: "
                         "not drawn\n" % (len(phase_list), opts.max_phases))
        phase_list = []
    panels = []
    if all(m in samples for m in DRAM):
        dram = summed(samples[DRAM[0]], samples[DRAM[1]])
        panels.append(("dram", "DRAM bandwidth", "GB/s", [
            ("read + write", "dram__bytes.sum.per_second", "#4e79a7", True,
             [None if v is None else v / 1e9 for v in columns(dram, t0, t1, ncol)]),
            ("read", DRAM[0], "#1f3f66", False,
             [None if v is None else v / 1e9 for v in columns(samples[DRAM[0]], t0, t1, ncol)])],
            None))
    if SM_ISSUE in samples:
        curves = [("SM issue", SM_ISSUE, "#e15759", True, columns(samples[SM_ISSUE], t0, t1, ncol))]
        if SM_ACTIVE in samples:
            curves.append(("SM active", SM_ACTIVE, "#8c2d2f", False,
                           columns(samples[SM_ACTIVE], t0, t1, ncol)))
        panels.append(("sm", "SM issue and SM active", "% of peak", curves, 100.0))
    if not opts.no_telemetry and POWER in samples:
        curves = [("power", POWER, "#59a14f", False, columns(samples[POWER], t0, t1, ncol))]
        panels.append(("power", "Power", "W", curves, None))
    if not panels:
        fail("no DRAM, SM issue or power samples on device %s (--gpu-metrics, --gpu-telemetry)"
             % opts.device)
    ph, gap, top = 150, 34, 46
    lane = 18 if phase_list else 0
    height = top + lane + len(panels) * (ph + gap) + 30
    svg = Svg()
    svg.add('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
            'font-family="sans-serif" data-t0-ns="%d" data-t1-ns="%d">'
            % (width, height, width, height, t0, t1))
    svg.add('<rect width="100%" height="100%" fill="white"/>')
    svg.text(left, 20, title, 14, extra=' font-weight="bold"')

    def xof(t):
        return left + (t - t0) / float(t1 - t0) * plot_w

    names = []
    for p in phase_list:
        if p[2] not in names:
            names.append(p[2])
    body_top = top + lane
    body_bottom = top + lane + len(panels) * (ph + gap) - gap + 12
    svg.add('<g class="phases">')
    for s, e, n, k in phase_list:
        color = PHASE_COLORS[names.index(n) % len(PHASE_COLORS)]
        x = xof(max(s, t0))
        w = max(0.5, xof(min(e, t1)) - x)
        svg.add('<rect class="phase" data-kernel="%s" data-start-ns="%d" data-end-ns="%d" '
                'data-kernels="%d" x="%s" y="%s" width="%s" height="%s" fill="%s" '
                'fill-opacity="0.10"><title>%s: %d kernels, %.1f ms</title></rect>'
                % (html.escape(n), s, e, k, num(x), body_top, num(w), num(body_bottom - body_top),
                   color, html.escape(n), k, (e - s) / 1e6))
        svg.add('<rect x="%s" y="%s" width="%s" height="10" fill="%s"/>' % (num(x), top, num(w), color))
    lx = left
    for n in names:
        color = PHASE_COLORS[names.index(n) % len(PHASE_COLORS)]
        svg.add('<rect x="%s" y="27" width="10" height="10" fill="%s"/>' % (num(lx), color))
        svg.text(lx + 14, 36, n, 11)
        lx += 30 + 7 * len(n)
    svg.add("</g>")
    y = body_top + 14
    for cls, name, unit, curves, vmax in panels:
        panel(svg, cls, name, unit, curves, left, y, plot_w, ph, t0, t1, ncol, vmax)
        y += ph + gap
    span = (t1 - t0) / 1e9
    step = nice_step(span, 8)
    axis = y - gap + 4
    v = 0.0
    while v <= span + 1e-9:
        x = xof(t0 + v * 1e9)
        svg.add('<line x1="%s" y1="%s" x2="%s" y2="%s" stroke="#999"/>' % (num(x), axis - 4, num(x), axis))
        svg.text(x, axis + 12, num(v), 10, "middle")
        v += step
    svg.text(left + plot_w, axis + 24, "time (s)", 11, "end")
    svg.add("</svg>")
    return "\n".join(svg.out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("inputs", nargs="+", help="TRACE.gpuprof, or SAMPLES.csv [ACTIVITIES.csv]")
    ap.add_argument("-o", "--output")
    ap.add_argument("--device")
    ap.add_argument("--pid")
    ap.add_argument("--title")
    ap.add_argument("--width", type=int, default=900)
    ap.add_argument("--phase-gap", type=float)
    ap.add_argument("--no-telemetry", action="store_true")
    ap.add_argument("--all-phases", action="store_true")
    ap.add_argument("--max-phases", type=int, default=60)
    ap.add_argument("--gpuprof", default="gpuprof")
    opts = ap.parse_args()
    if len(opts.inputs) > 2:
        ap.error("one trace, or a samples CSV and an activities CSV")
    if opts.inputs[0].endswith(".gpuprof"):
        if len(opts.inputs) != 1:
            ap.error("one trace at a time")
        s_text = export(opts.gpuprof, opts.inputs[0], ["--table", "gpu_samples"])
        a_text = export(opts.gpuprof, opts.inputs[0], [])
    else:
        try:
            with open(opts.inputs[0]) as f:
                s_text = f.read()
            a_text = None
            if len(opts.inputs) > 1:
                with open(opts.inputs[1]) as f:
                    a_text = f.read()
        except OSError as e:
            fail(str(e))
    rows = read_csv(s_text, {"pid", "device", "source", "metric", "start_ns", "end_ns", "value"},
                    "samples")
    if not rows:
        fail("no samples: record with gpuprof run --gpu-metrics (and --gpu-telemetry)")
    samples, opts.device, pid = load_samples(rows, opts.device, opts.pid)
    if not samples:
        fail("no samples of device %s" % opts.device)
    gap = opts.phase_gap
    if gap is None:
        pm = samples.get(SM_ISSUE) or next(iter(samples.values()))
        interval = min((e - s) for s, e, _ in pm) / 1e6 if pm else 1.0
        gap = max(5.0, 3 * interval)
    phase_list = []
    if a_text:
        arows = read_csv(a_text, {"kind", "name", "start_ns", "end_ns", "device", "pid"}, "activities")
        phase_list = phases(arows, opts.device, pid, gap * 1e6)
    host = next((r.get("host") for r in rows if r["pid"] == pid), "") or ""
    title = opts.title or "The GPU over time: %s pid %s, device %s" % (host, pid, opts.device)
    out = render(samples, phase_list, opts, title)
    if opts.output:
        with open(opts.output, "w") as f:
            f.write(out)
    else:
        sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
