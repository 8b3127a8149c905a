#!/usr/bin/env python3
"""The GPU over time against the activity records: do the sampled counters
switch where the kernels do?

    overtime_check.py ANALYZER TRACE...

Reads the samples (`export --format csv --table gpu_samples`) and the
kernels (`export --format csv`) of the traces, finds the phases of the
program of test/apps/overtime.cu (runs of one kernel, copy_f4 or fma_loop,
with gaps under GAP_NS, lasting at least MIN_PHASE_NS) and, for each phase
that the PM samples of its device cover with margin, checks that its
metric (DRAM read + write bytes/s for the copy, SM issue for the FMA loop)
rises within two sampling intervals of the phase's first kernel start and
falls within two intervals of its last kernel end, and stays up in
between (95 % of the samples fully inside).  The level is the median of
the samples fully inside the phase; up means at least half of it.
Used by test/gpu/run.py's overtime test on a GPU, and by test/golden/run.sh
on synth_overtime.gpuprof (written by bench/synth_trace --gpu-samples,
whose samples follow its kernels as a GPU's would).  Prints "ok - ..." or
"not ok - ..." lines; exits 1 if any failed.
"""
import collections
import csv
import io
import statistics
import subprocess
import sys

DRAM = ("dram__bytes_read.sum.per_second", "dram__bytes_write.sum.per_second")
ISSUE = "sm__inst_executed_realtime.avg.pct_of_peak_sustained_elapsed"
GAP_NS = 10_000_000            # kernels of one phase are at most 10 ms apart
MIN_PHASE_NS = 100_000_000     # a phase of the program lasts about 200 ms
MARGIN = 10                    # sampling intervals a phase's samples must reach past it


def phases(kernels, name):
    """[(start, end, device)] of the runs of kernels whose name holds name."""
    out = []
    ks = sorted((int(k["start_ns"]), int(k["end_ns"]), k["device"]) for k in kernels
                if k["kind"] == "kernel" and name in k["name"])
    for s, e, d in ks:
        if out and out[-1][2] == d and s - out[-1][1] <= GAP_NS:
            out[-1][1] = max(out[-1][1], e)
        else:
            out.append([s, e, d])
    return [tuple(p) for p in out if p[1] - p[0] >= MIN_PHASE_NS]


def series(samples, metrics):
    """{device: [(start, end, value)]} of PM samples, the metrics' values summed per sample."""
    acc = collections.defaultdict(dict)
    for r in samples:
        if r["source"] == "pm" and r["metric"] in metrics:
            key = (int(r["start_ns"]), int(r["end_ns"]))
            acc[r["device"]][key] = acc[r["device"]].get(key, 0.0) + float(r["value"])
    return {d: sorted((s, e, v) for (s, e), v in m.items()) for d, m in acc.items()}


def check_phase(rows, ps, pe):
    """None if the metric switches at [ps, pe) within two intervals, else why not."""
    widths = [e - s for s, e, _ in rows if e > s]
    if not widths:
        return "no samples of any width"
    iv = statistics.median(widths)
    near = [r for r in rows if r[1] > ps - MARGIN * iv and r[0] < pe + MARGIN * iv]
    if not near or near[0][0] > ps - MARGIN * iv or near[-1][1] < pe + MARGIN * iv:
        return None  # not covered: the caller counts it as unchecked
    inside = [v for s, e, v in near if s >= ps and e <= pe]
    if len(inside) < 10:
        return "only %d samples inside" % len(inside)
    level = statistics.median(inside)
    if level <= 0:
        return "median level %g inside" % level
    up = [(s, e) for s, e, v in near if v >= level / 2]
    rise, fall = up[0][0], up[-1][1]
    why = []
    if abs(rise - ps) > 2 * iv:
        why.append("rises %.2f ms from the first kernel's start" % ((rise - ps) / 1e6))
    if abs(fall - pe) > 2 * iv:
        why.append("falls %.2f ms from the last kernel's end" % ((fall - pe) / 1e6))
    core = [v for s, e, v in near if s >= ps + 2 * iv and e <= pe - 2 * iv]
    low = sum(1 for v in core if v < level / 2)
    if core and low > 0.05 * len(core):
        why.append("%d of %d samples inside below half the level" % (low, len(core)))
    return "; ".join(why) or ""


def check(samples, kernels):
    """[(ok, text)] for each kind of phase: copy_f4 by DRAM, fma_loop by SM issue."""
    res = []
    for kname, metrics, what in (("copy_f4", DRAM, "DRAM read+write"),
                                 ("fma_loop", (ISSUE,), "SM issue")):
        by_dev = series(samples, metrics)
        checked, fails = 0, []
        for ps, pe, dev in phases(kernels, kname):
            why = check_phase(by_dev.get(dev, []), ps, pe)
            if why is None:
                continue
            checked += 1
            if why:
                fails.append("phase at %d: %s" % (ps, why))
        if not checked:
            res.append((False, "%s: no %s phase covered by samples" % (what, kname)))
        elif fails:
            res.append((False, "%s switches at %s's boundaries: %s" % (what, kname, "; ".join(fails))))
        else:
            res.append((True, "%s switches within two intervals of %d %s phases' boundaries"
                        % (what, checked, kname)))
    return res


def export(analyzer, args):
    r = subprocess.run([analyzer, "export", "--format", "csv", "--no-symbolize"] + args,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError("export %s exited %d: %s" % (" ".join(args), r.returncode, r.stderr[-300:]))
    return list(csv.DictReader(io.StringIO(r.stdout)))


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    analyzer, traces = sys.argv[1], sys.argv[2:]
    try:
        samples = export(analyzer, ["--table", "gpu_samples"] + traces)
        kernels = export(analyzer, traces)
    except RuntimeError as e:
        print("not ok - overtime boundaries: %s" % e)
        return 1
    bad = 0
    for ok, text in check(samples, kernels):
        print("%s - overtime %s" % ("ok" if ok else "not ok", text))
        bad += not ok
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
