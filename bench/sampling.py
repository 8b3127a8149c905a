"""The sampling rows of the overhead benchmark: the GPU over time and fleet mode.

Used by bench.py (--only overtime, --only fleet); standard library only.

    overtime  the launch loop and the training step under tracing alone
              (gpuprof defaults), --gpu-metrics (CUPTI PM sampling, the
              default set at the default interval), --gpu-telemetry
              (NVML, default rate and queries) and --gpu-telemetry=gpm
              (the opt-in GPM metrics beside them: what GPM costs), against
              no tool; side by side with
              nsys -t cuda and nsys -t cuda --gpu-metrics-devices=all
    fleet     the same workloads with no tool, --start=dormant,
              --sample=1s/60s (the configuration a fleet runs) and
              --sample=1s/2s (windows every other second: the cost of a
              window, measured where windows fall inside the timed loop)

Every configuration runs in each repetition, interleaved, in an order
rotated by one per repetition.  The figures are the programs' own timed
loops (launch_loop's µs/launch, train_step.py's ms/step), never the process
wall, which holds start-up (PyTorch's import, the one-time set-up of PM
sampling, CUPTI's attach at the first window) and moves by a second
between runs.  The programs print the loop's start and end on
CLOCK_REALTIME, the trace clock, so each run is checked against its own
trace: how much of the loop the samples cover (--gpu-metrics,
--gpu-telemetry), which windows overlap the loop and by how much
(--sample: the spool's window files, each one capture range).

Why two sampled configurations.  With --sample=1s/60s a window starts at a
random point of the first minute, so a run shorter than a minute sees at
most one window, and a timed loop of a second or two usually none: its
runs measure the dormant periods (and, when a window falls in the loop,
one run with a window).  The cost of the windows themselves is measured
with --sample=1s/2s: per second of window inside the loop, the loop is
longer than a dormant one by A seconds (pooled over the runs, runs whose
first window, which loads CUPTI, overlaps the loop left out).  A long run
at 1s/60s then costs, over --start=dormant, a factor 1/(1 - A/60), and
inside a window the program runs 1/(1 - A) slower.  Both the measured
1s/60s runs and this duty-cycled figure are reported, each for what it is.
What the figures hold: the 1s/60s runs without a window in the loop are
the dormant period before a process's first window (CUPTI not loaded); the
dormant seconds between 1s/2s windows come after it (CUPTI attached,
nothing enabled), and whatever they cost is counted in A, per
window-second, where 1s/60s has 59 such seconds per window: were they not
free, the duty-cycled figure would understate them.
"""

import csv
import glob
import io
import json
import os
import re
import statistics
import subprocess
import time

OT_CONFIGS = ("none", "gp-default", "gp-gm", "gp-tel", "gp-tel-gpm", "nsys", "nsys-gm")
FLEET_CONFIGS = ("none", "gp-default", "gp-dormant", "gp-sample", "gp-sample-dense")
ORDER = ("none", "gp-default", "gp-gm", "gp-tel", "gp-tel-gpm", "gp-dormant", "gp-sample",
         "gp-sample-dense", "nsys", "nsys-gm")
REFERENCE = ("nsys", "nsys-gm")
# Run as often as the references: a figure for the documentation, no target.
FEWER = REFERENCE + ("gp-tel-gpm",)
GP_OPTS = {"gp-default": [], "gp-gm": ["--gpu-metrics"], "gp-tel": ["--gpu-telemetry"],
           "gp-tel-gpm": ["--gpu-telemetry=gpm"],
           "gp-dormant": ["--start=dormant"], "gp-sample": ["--sample=1s/60s"],
           "gp-sample-dense": ["--sample=1s/2s"]}
WHAT = {"none": "no tool",
        "gp-default": "gpuprof, tracing alone (defaults)",
        "gp-gm": "gpuprof --gpu-metrics (default set, 1 ms)",
        "gp-tel": "gpuprof --gpu-telemetry (NVML, 100 ms)",
        "gp-tel-gpm": "gpuprof --gpu-telemetry=gpm (NVML 100 ms, GPM 200 ms)",
        "gp-dormant": "gpuprof --start=dormant",
        "gp-sample": "gpuprof --sample=1s/60s",
        "gp-sample-dense": "gpuprof --sample=1s/2s",
        "nsys": "nsys profile -t cuda",
        "nsys-gm": "nsys profile -t cuda --gpu-metrics-devices=all"}
# Window and period of the two sampled configurations, seconds.
SAMPLE_W, SAMPLE_P = 1.0, 60.0
DENSE_P = 2.0
TARGET_GM = 1.03
TARGET_TEL = 1.01
TARGET_FLEET = 1.01
# PM samples must cover this much of a timed loop for its run to count as
# "sampled throughout" (the first PM sample of a session is dropped).
COVERAGE_MIN = 0.95


def env_int(name, default):
    v = os.environ.get(name, "")
    try:
        return int(v) if v else default
    except ValueError:
        return default


def env_float(name, default):
    v = os.environ.get(name, "")
    try:
        return float(v) if v else default
    except ValueError:
        return default


def median(xs):
    return statistics.median(xs) if xs else None


def overlap(a0, a1, b0, b1):
    """Length of [a0, a1) ∩ [b0, b1), 0 when disjoint."""
    return max(0, min(a1, b1) - max(a0, b0))


def union_overlap(intervals, t0, t1):
    """Length of the union of intervals (start, end) inside [t0, t1)."""
    total, cur0, cur1 = 0, None, None
    for s, e in sorted((max(s, t0), min(e, t1)) for s, e in intervals if e > t0 and s < t1):
        if cur1 is None or s > cur1:
            if cur1 is not None:
                total += cur1 - cur0
            cur0, cur1 = s, e
        else:
            cur1 = max(cur1, e)
    if cur1 is not None:
        total += cur1 - cur0
    return total


def sample_coverage(csv_text, t0, t1):
    """Per source of `export -t csv --table gpu_samples` output: samples
    (distinct device and time span) overlapping the loop [t0, t1) and the
    fraction of the loop their union covers (the first device's)."""
    by = {}
    for row in csv.DictReader(io.StringIO(csv_text)):
        try:
            s, e = int(row["start_ns"]), int(row["end_ns"])
        except (KeyError, ValueError):
            continue
        d = by.setdefault(row.get("source", "?"), {}).setdefault(row.get("device", "?"), set())
        d.add((s, e))
    out = {}
    for src, devs in by.items():
        dev = sorted(devs)[0]
        spans = devs[dev]
        inside = [(s, e) for s, e in spans if e > t0 and s < t1]
        out[src] = {"samples": len(inside), "devices": len(devs),
                    "coverage": union_overlap(spans, t0, t1) / float(t1 - t0) if t1 > t0 else None}
    return out


# ------------------------------------------------------------------ analysis
# Everything below reads only the runs list and the parameters, so that a
# saved JSON (--report-from) renders the same report.

def ok_runs(runs, w, cfg):
    return [r for r in runs if r["workload"] == w and r["config"] == cfg and r["status"] == "ok"]


def values(runs, w, cfg, key="metric"):
    return [r[key] for r in ok_runs(runs, w, cfg) if r.get(key) is not None]


def ratios(runs, w, a, b, key="metric"):
    """(ratio of medians, ratio of minimums, median of per-repetition ratios)."""
    xa, xb = values(runs, w, a, key), values(runs, w, b, key)
    med = median(xa) / median(xb) if xa and xb and median(xb) else None
    mn = min(xa) / min(xb) if xa and xb and min(xb) else None
    ra = {r["rep"]: r[key] for r in ok_runs(runs, w, a) if r.get(key) is not None}
    rb = {r["rep"]: r[key] for r in ok_runs(runs, w, b) if r.get(key) is not None}
    pairs = [ra[k] / rb[k] for k in ra if k in rb and rb[k]]
    return med, mn, (median(pairs) if pairs else None), len(pairs)


def loop_windows(r):
    """Windows of a sampled run that overlap its timed loop, and the
    seconds of the loop they cover."""
    ws = [x for x in r.get("windows") or [] if x.get("overlap_ns", 0) > 0]
    return ws, sum(x["overlap_ns"] for x in ws) / 1e9


def fleet_numbers(runs, w):
    """The fleet figures of workload w (None where not measured)."""
    out = {}
    t_none = median(values(runs, w, "none", "loop_s"))
    t_dorm = median(values(runs, w, "gp-dormant", "loop_s"))
    out["t_none"], out["t_dormant"] = t_none, t_dorm
    sample = [r for r in ok_runs(runs, w, "gp-sample") if "windows" in r]
    quiet = [r for r in sample if not loop_windows(r)[0]]
    out["sample_runs"], out["sample_quiet"] = len(sample), len(quiet)
    out["quiet_loop_s"] = [r["loop_s"] for r in quiet]
    out["window_loop_s"] = [r["loop_s"] for r in sample if loop_windows(r)[0]]
    tq = median(out["quiet_loop_s"])
    out["quiet_vs_dormant"] = tq / t_dorm if tq and t_dorm else None
    out["quiet_vs_none"] = tq / t_none if tq and t_none else None
    xd = values(runs, w, "gp-dormant", "loop_s")
    out["dormant_spread"] = (max(xd) - min(xd)) / 2 / t_dorm if len(xd) > 1 and t_dorm else None
    if out["quiet_loop_s"] and xd:
        out["quiet_vs_dormant_min"] = min(out["quiet_loop_s"]) / min(xd)
    # The windows' cost from the dense runs, pooled.
    dense = [r for r in ok_runs(runs, w, "gp-sample-dense") if "windows" in r]
    added, covered, used, first = 0.0, 0.0, 0, 0
    for r in dense:
        ws, secs = loop_windows(r)
        if any(x.get("n") == 1 for x in ws):
            first += 1
            continue
        if t_dorm is None or r.get("loop_s") is None:
            continue
        added += r["loop_s"] - t_dorm
        covered += secs
        used += 1
    out["dense_runs"], out["dense_used"], out["dense_first"] = len(dense), used, first
    out["dense_window_s"] = covered
    a = added / covered if covered > 0.05 else None
    out["a"] = a
    if a is not None and a < 1:
        out["in_window"] = 1.0 / (1.0 - a)
        duty = SAMPLE_W / SAMPLE_P
        out["duty_vs_dormant"] = 1.0 / (1.0 - a * duty) if a * duty < 1 else None
        if out["duty_vs_dormant"] and t_none and t_dorm:
            out["duty_vs_none"] = t_dorm / t_none * out["duty_vs_dormant"]
        # A run of this loop's length that holds one whole window.
        if t_dorm and t_none:
            traced = t_dorm * out["in_window"]
            worst = traced if traced <= SAMPLE_W else t_dorm + a * SAMPLE_W
            out["one_window_vs_none"] = worst / t_none
    return out


def fmt(v):
    if v is None:
        return "n/a"
    a = abs(v)
    if a >= 1000:
        return "%.0f" % v
    if a >= 100:
        return "%.1f" % v
    if a >= 10:
        return "%.2f" % v
    return "%.3f" % v


def fr(v):
    return "n/a" if v is None else "%.3f" % v


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out)


def verdict(v, limit):
    return "n/a" if v is None else ("MET" if v <= limit else "MISSED")


def report_lines(data):
    """The markdown section of the sampling rows."""
    p, runs = data["params"], data["runs"]
    rows_wanted = set(p["rows"])
    L = ["## The GPU over time and fleet mode (%s)" % ", ".join(sorted(rows_wanted)), ""]
    L.append("- launch loop: `launch_loop st %d` (BENCH_SETTLE_S=%g); training step: "
             "`train_step.py %d %d`; with --sample=1s/2s both settle %g s, so that the first "
             "window, which attaches CUPTI, ends before the loop" % (
                 p["launches"], p["settle"], p["steps"], p["warmup"], p["dense_settle"]))
    L.append("- repetitions planned: launch loop %d (nsys %d), training step %d (nsys %d); "
             "configurations interleaved, order rotated per repetition; repetitions done: %s; "
             "wall time %.0f s%s" % (p["reps"], p["ref_reps"], p["torch_reps"], p["torch_ref_reps"],
                                     p.get("reps_done", "?"), p.get("wall_s", 0),
                                     "; " + p["stop_reason"] if p.get("stop_reason") else ""))
    L.append("- figures: the program's timed loop only (process start-up and exit excluded); "
             "nsys is stopped 1 s after the program prints its figure")
    L.append("")
    ws = [w for w in p["workloads"] if any(r["workload"] == w["name"] for r in runs)]
    skip = data.get("skip", {})
    cfgs = [c for c in p["configs"] if any(r["config"] == c for r in runs) or
            any(k.endswith("/" + c) for k in skip)]
    if not ws:
        L += ["nothing measured" + ("" if not skip else ": " + "; ".join(
            "%s %s" % (k, v) for k, v in sorted(skip.items()))), ""]
        return L
    L += ["### Medians (minimum–maximum, runs)", ""]
    rows = []
    for w in ws:
        row = [w["title"], w["unit"]]
        for c in cfgs:
            xs = values(runs, w["name"], c)
            if xs:
                row.append("%s (%s–%s, %d)" % (fmt(median(xs)), fmt(min(xs)), fmt(max(xs)), len(xs)))
            else:
                row.append(skip.get("%s/%s" % (w["name"], c)) or
                           ("error" if any(r["workload"] == w["name"] and r["config"] == c
                                           for r in runs) else "—"))
        rows.append(row)
    L += [md_table(["workload", "unit"] + cfgs, rows), ""]

    targets = []
    if "overtime" in rows_wanted:
        L += ["### The GPU over time: ratios (medians; minimums; median of per-repetition ratios)", ""]
        pairs = [("gp-gm", "gp-default"), ("gp-tel", "gp-default"), ("gp-tel-gpm", "gp-default"),
                 ("gp-tel-gpm", "gp-tel"), ("gp-default", "none"),
                 ("gp-gm", "none"), ("gp-tel", "none"), ("nsys", "none"), ("nsys-gm", "none"),
                 ("nsys-gm", "nsys")]
        rows = []
        for a, b in pairs:
            row = ["%s ÷ %s" % (a, b)]
            for w in ws:
                med, mn, pr, n = ratios(runs, w["name"], a, b)
                row.append("n/a" if med is None else "%s; %s; %s (%d)" % (fr(med), fr(mn), fr(pr), n))
            rows.append(row)
        L += [md_table(["ratio"] + [w["title"] for w in ws], rows), ""]
        rows = []
        for w in ws:
            for c, src in (("gp-gm", "pm"), ("gp-tel", "nvml"), ("gp-tel-gpm", "gpm")):
                rs = ok_runs(runs, w["name"], c)
                cov = [r["samples"][src]["coverage"] for r in rs
                       if (r.get("samples") or {}).get(src, {}).get("coverage") is not None]
                n = [r["samples"][src]["samples"] for r in rs if (r.get("samples") or {}).get(src)]
                lost = [r["lost"] for r in rs if r.get("lost") is not None]
                rows.append([w["title"], c, src, "%d of %d" % (len(cov), len(rs)),
                             "n/a" if not cov else "%.3f (min %.3f)" % (median(cov), min(cov)),
                             "n/a" if not n else "%d" % median(n),
                             "n/a" if not lost else "%d" % max(lost)])
        L += ["Samples inside the timed loop (from each run's trace, `export -t csv --table "
              "gpu_samples`; coverage: the part of the loop the first device's samples span):", "",
              md_table(["workload", "configuration", "source", "runs with samples",
                        "coverage of the loop (median)", "samples in the loop (median)",
                        "records lost (max)"], rows), ""]
        notes = sorted({r["note"] for r in runs if r["config"] == "nsys-gm" and r.get("note")})
        if notes:
            L += ["nsys --gpu-metrics-devices said: " + " / ".join(notes)[:600], ""]
        for w in ws:
            for a, lim in (("gp-gm", TARGET_GM), ("gp-tel", TARGET_TEL)):
                med, mn, pr, n = ratios(runs, w["name"], a, "gp-default")
                cov = [r["samples"][("pm" if a == "gp-gm" else "nvml")]["coverage"]
                       for r in ok_runs(runs, w["name"], a)
                       if (r.get("samples") or {}).get("pm" if a == "gp-gm" else "nvml")]
                # A loop the samples do not cover measures tracing alone.
                unsampled = a == "gp-gm" and (not cov or median(cov) < COVERAGE_MIN)
                note = "" if a != "gp-gm" or (cov and min(cov) >= COVERAGE_MIN) else \
                    " (PM samples cover %s)" % (
                        "no loop" if not cov else "%.0f%% of the least-covered loop" % (100 * min(cov)))
                targets.append(["%s ÷ tracing alone ≤ %.2f" % (a == "gp-gm" and "--gpu-metrics" or
                                                                 "--gpu-telemetry", lim),
                                w["title"], "%s; pairs %s" % (fr(med), fr(pr)) + note,
                                "not sampled" if unsampled else verdict(med, lim),
                                "%s %s" % (fr(mn), "not sampled" if unsampled else verdict(mn, lim))])
            g, ng = values(runs, w["name"], "gp-gm"), values(runs, w["name"], "nsys-gm")
            if g and ng:
                targets.append(["--gpu-metrics beside nsys --gpu-metrics-devices=all", w["title"],
                                "%s vs %s %s" % (fmt(median(g)), fmt(median(ng)), w["unit"]),
                                "reference", "%s vs %s" % (fmt(min(g)), fmt(min(ng)))])
    if "fleet" in rows_wanted:
        L += ["### Fleet mode", ""]
        rows = []
        for w in ws:
            f = fleet_numbers(runs, w["name"])
            rows.append([w["title"], fmt(f["t_none"]), fmt(f["t_dormant"]),
                         "%d of %d" % (f["sample_quiet"], f["sample_runs"]),
                         fr(f["quiet_vs_dormant"]), fr(f.get("quiet_vs_dormant_min")),
                         "n/a" if f["dormant_spread"] is None else "±%.1f%%" % (100 * f["dormant_spread"]),
                         "%d of %d (%.2f s)" % (f["dense_used"], f["dense_runs"], f["dense_window_s"]),
                         "n/a" if f["a"] is None else "%.3f" % f["a"],
                         fr(f.get("in_window")), fr(f.get("duty_vs_none")),
                         fr(f.get("one_window_vs_none"))])
        L += [md_table(["workload", "loop s: none", "--start=dormant",
                        "1s/60s runs with no window in the loop",
                        "those ÷ dormant (medians)", "(minimums)", "dormant's spread",
                        "1s/2s runs used (window s in loops)",
                        "A: s added per window-s", "inside a window ÷ dormant",
                        "1s/60s duty-cycled ÷ none", "a loop of this length holding one 1-s window ÷ none"],
                       rows), ""]
        L += ["A window-second is a second of the timed loop inside a window (from the window "
              "files' capture ranges). 1s/2s runs whose first window, which attaches CUPTI, "
              "overlaps the loop are left out of A. Duty-cycled: (dormant ÷ none) / (1 − A/60), "
              "a run long enough that its windows take one second a minute. The 1s/60s runs "
              "without a window are dormant before any window (CUPTI not loaded); the dormant "
              "seconds between 1s/2s windows come after the first (CUPTI attached, nothing "
              "enabled) and A holds their cost, if any, per window-second.", ""]
        for w in ws:
            f = fleet_numbers(runs, w["name"])
            med, mn, pr, n = ratios(runs, w["name"], "gp-sample", "none", "loop_s")
            k = f["sample_runs"] - f["sample_quiet"]
            targets.append(["--sample=1s/60s ÷ none ≤ %.2f, runs as measured" % TARGET_FLEET,
                            w["title"], "%s; pairs %s (a window in the loop in %d of %d inspected runs)" % (
                                fr(med), fr(pr), k, f["sample_runs"]),
                            verdict(med, TARGET_FLEET), "%s %s" % (fr(mn), verdict(mn, TARGET_FLEET))])
            targets.append(["--sample=1s/60s ÷ none ≤ %.2f, duty-cycled from 1s/2s" % TARGET_FLEET,
                            w["title"], fr(f.get("duty_vs_none")),
                            verdict(f.get("duty_vs_none"), TARGET_FLEET), ""])
            q, sp = f["quiet_vs_dormant"], f["dormant_spread"]
            same = None if q is None or sp is None else abs(q - 1) <= max(sp, 0.005)
            targets.append(["dormant periods of 1s/60s ÷ --start=dormant: within the noise",
                            w["title"], "%s (dormant's spread ±%s)" % (
                                fr(q), "n/a" if sp is None else "%.1f%%" % (100 * sp)),
                            "n/a" if same is None else ("MET" if same else "MISSED"),
                            fr(f.get("quiet_vs_dormant_min"))])
    if targets:
        L += ["### Targets", "",
              md_table(["target", "workload", "measured", "result (medians)", "by minimum"],
                       targets), ""]
    errs = [r for r in runs if r["status"] != "ok"]
    if errs:
        L += ["### Failures", ""]
        seen = set()
        for r in errs:
            k = (r["workload"], r["config"], r.get("error"))
            if k in seen:
                continue
            seen.add(k)
            L.append("- %s / %s (rep %d): %s" % (r["workload"], r["config"], r["rep"],
                                                 (r.get("error") or r["status"]).replace("|", "\\|")))
        L.append("")
    return L


# ------------------------------------------------------------------ running

class Sampling:
    def __init__(self, bench, rows, mod):
        """bench: bench.py's Bench; mod: the bench.py module (its process
        runner, output parser and nsys search)."""
        self.b = bench
        self.run_proc, self.parse_bench, self.tail = mod.run_proc, mod.parse_bench, mod.tail
        self.find_nsys, self.log = mod.find_nsys, mod.log
        q = bench.quick
        self.params = p = {
            "rows": sorted(rows),
            "launches": env_int("BENCH_OT_LAUNCHES", 100000 if q else 200000),
            "steps": env_int("BENCH_OT_STEPS", 30 if q else 60),
            "warmup": env_int("BENCH_OT_WARMUP", 3),
            "reps": max(1, env_int("BENCH_OT_REPS", 2 if q else 4)),
            "torch_reps": max(0, env_int("BENCH_OT_TORCH_REPS", 1 if q else 2)),
            "ref_reps": max(0, env_int("BENCH_OT_REF_REPS", 1)),
            "torch_ref_reps": max(0, env_int("BENCH_OT_TORCH_REF_REPS", 0 if q else 1)),
            "budget_s": env_int("BENCH_OT_BUDGET_S", 150 if q else 345),
            "settle": env_float("BENCH_OT_SETTLE_S", 1.5),
            "nsys_gm_freq": env_int("BENCH_NSYS_GM_FREQ", 0),
        }
        # The first 1s/2s window (it attaches CUPTI) opens within DENSE_P of
        # CUDA's initialization and ends SAMPLE_W later: before the loop.
        p["dense_settle"] = max(p["settle"], DENSE_P + SAMPLE_W)
        p["configs"] = [c for c in ORDER if ("overtime" in rows and c in OT_CONFIGS) or
                        ("fleet" in rows and c in FLEET_CONFIGS)]
        # BENCH_OT_CONFIGS=none,gp-sample: only these (runs of a minute and more, where
        # every configuration would not fit).
        only = [c for c in os.environ.get("BENCH_OT_CONFIGS", "").split(",") if c]
        if only:
            p["configs"] = [c for c in p["configs"] if c in only]
        p["workloads"] = [
            dict(name="launch", title="empty launches, 1 thread", metric="us_per_launch",
                 unit="µs/launch", timeout=max(90, 60 + p["launches"] * 1e-5)),
            dict(name="train", title="transformer train step", metric="ms_per_step",
                 unit="ms/step", timeout=max(240, 60 + p["steps"] * 0.05), torch=True)]
        # BENCH_OT_WORKLOADS=train: only these workloads (launch, train).
        wl = [x for x in os.environ.get("BENCH_OT_WORKLOADS", "").split(",") if x]
        if wl:
            p["workloads"] = [w for w in p["workloads"] if w["name"] in wl]
        self.runs = []
        self.skip = {}
        self.last_wall = {}
        self.nsys = None
        self.torch_reason = None

    def prog(self, w):
        p = self.params
        if w["name"] == "launch":
            return [self.b.bin("launch_loop"), "st", str(p["launches"])]
        return [self.b.python, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                             "train_step.py"), str(p["steps"]), str(p["warmup"])]

    def reps_for(self, w, cfg):
        p = self.params
        if w.get("torch"):
            return p["torch_ref_reps"] if cfg in FEWER else p["torch_reps"]
        return p["ref_reps"] if cfg in FEWER else p["reps"]

    def settle_for(self, w, cfg):
        """BENCH_SETTLE_S of a run: the training step's warm-up steps take
        seconds, so it settles only for the first 1s/2s window."""
        if cfg == "gp-sample-dense":
            return self.params["dense_settle"]
        return self.params["settle"] if w["name"] == "launch" else 0

    def command(self, w, cfg, d):
        """(argv, extra environment), or a string saying why cfg cannot run."""
        b, prog = self.b, self.prog(w)
        settle = self.settle_for(w, cfg)
        extra = {"BENCH_SETTLE_S": "%g" % settle} if settle else {}
        if cfg == "none":
            return prog, extra
        if cfg in GP_OPTS:
            if not all(os.path.exists(x) for x in (b.gpuprof, b.lib, b.analyzer)):
                return "gpuprof not built"
            opts = list(GP_OPTS[cfg])
            if cfg.startswith("gp-sample"):
                opts.append("--spool=" + os.path.join(d, "spool"))
            return [b.gpuprof, "run", "--report=none", "-f", "-o",
                    os.path.join(d, "trace-%p")] + opts + ["--"] + prog, extra
        if not self.nsys:
            return "nsys not found"
        extra["TMPDIR"] = d
        gm = []
        if cfg == "nsys-gm":
            gm = ["--gpu-metrics-devices=all"]
            if self.params["nsys_gm_freq"]:
                gm.append("--gpu-metrics-frequency=%d" % self.params["nsys_gm_freq"])
        return [self.nsys, "profile", "-t", "cuda"] + gm + [
            "-o", os.path.join(d, "nsys"), "--force-overwrite", "true"] + prog, extra

    def find_nsys_here(self):
        cands = [os.environ.get("BENCH_NSYS", "")]
        cands += sorted(glob.glob("/opt/nvidia/*/bin/nsys") +
                        glob.glob("/opt/nvidia/*/*/bin/nsys"), reverse=True)
        for c in cands:
            if c and os.path.isfile(c) and os.access(c, os.X_OK):
                return c
        return self.find_nsys()[0]

    def probe(self, dry=False):
        self.nsys = self.find_nsys_here()
        self.params["nsys"] = self.nsys
        if dry:
            return
        rc, out = None, ""
        try:
            pr = subprocess.run(
                [self.b.python, "-c", "import torch,sys;sys.exit(0 if torch.cuda.is_available() else 3)"],
                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=300, env=self.b.base_env)
            rc, out = pr.returncode, pr.stdout.decode(errors="replace")
        except (OSError, subprocess.SubprocessError) as e:
            out = str(e)
        if rc != 0:
            self.torch_reason = "no PyTorch with CUDA (%s)" % self.tail(out, 1)

    # ---------------------------------------------------------- one run

    def analyze(self, args, timeout=120):
        res = self.run_proc([self.b.analyzer] + args, env=self.b.base_env, timeout=timeout)
        if res.rc != 0:
            raise RuntimeError("gpuprof-analyze %s: %s" % (args[0], self.tail(res.err, 2)))
        return res.out

    def inspect(self, w, cfg, r, res, d):
        t0, t1 = r.get("loop_t0_ns"), r.get("loop_t1_ns")
        if cfg.startswith("gp-sample"):
            wins = []
            for f in sorted(glob.glob(os.path.join(d, "spool", "*.gpuprof"))):
                m = re.search(r"-w(\d+)\.gpuprof$", f)
                j = json.loads(self.analyze(["export", "-t", "json", "--no-symbolize", f]))
                caps = [c for pr in j.get("processes", []) for c in pr.get("capture_ranges", [])
                        if c.get("kind") == "control"]
                if not caps:
                    continue
                s, e = min(c["start_ns"] for c in caps), max(c["end_ns"] for c in caps)
                wins.append({"n": int(m.group(1)) if m else None, "start_ns": s, "end_ns": e,
                             "kernels": j.get("counts", {}).get("kernel"),
                             "lost": j.get("lost", {}).get("total"),
                             "overlap_ns": overlap(s, e, t0, t1) if t0 and t1 else 0})
            r["windows"] = wins
            return
        if cfg not in GP_OPTS or cfg == "gp-dormant":
            return          # a dormant recorder writes nothing
        files = re.findall(r"^gpuprof: trace written to (.*)$", res.err, re.M)
        files = [f for f in files if os.path.exists(f)] or \
            sorted(glob.glob(os.path.join(d, "*.gpuprof")))
        if not files:
            raise RuntimeError("no trace file written")
        if cfg in ("gp-gm", "gp-tel", "gp-tel-gpm") and t0 and t1:
            r["samples"] = sample_coverage(
                self.analyze(["export", "-t", "csv", "--table", "gpu_samples"] + files), t0, t1)
        if (w["name"], cfg) not in self.inspected:
            self.inspected.add((w["name"], cfg))
            j = json.loads(self.analyze(["export", "-t", "json", "--no-symbolize"] + files,
                                        timeout=300))
            r["lost"] = j.get("lost", {}).get("total")
            r["kernels"] = j.get("counts", {}).get("kernel")
            r["trace_bytes"] = sum(os.path.getsize(f) for f in files)

    def run_one(self, w, cfg, rep):
        b = self.b
        d = b.workdir("ot-%s-%s-%d" % (w["name"], cfg, rep))
        cmd = self.command(w, cfg, d)
        if isinstance(cmd, str):
            self.skip["%s/%s" % (w["name"], cfg)] = "n/a (%s)" % cmd
            b.cleanup(d)
            return
        argv, extra = cmd
        env = dict(b.base_env)
        env.update(extra)
        timeout = max(30, min(w["timeout"], self.deadline + 60 - time.time()))
        stop = r"^BENCH %s " % re.escape(w["metric"]) if cfg in REFERENCE else None
        t_start = time.time()
        # nsys: the program's figure is out; its capture's post-processing is not measured.
        res = self.run_proc(argv, env=env, cwd=d, timeout=timeout, stop_regex=stop, grace=1.0)
        vals = self.parse_bench(res.out)
        ints = {k: int(v) for k, v in re.findall(r"^BENCH (loop_t[01]_ns) (\d+)\s*$", res.out, re.M)}
        r = {"workload": w["name"], "config": cfg, "rep": rep, "rc": res.rc,
             "wall": round(res.wall, 4), "maxrss_kib": res.maxrss_kib,
             "metric": vals.get(w["metric"]), "loop_s": vals.get("loop_s"),
             "loop_t0_ns": ints.get("loop_t0_ns"), "loop_t1_ns": ints.get("loop_t1_ns")}
        ok = r["metric"] is not None and (cfg in REFERENCE or (res.rc == 0 and not res.timed_out))
        r["status"] = "ok" if ok else ("timeout" if res.timed_out else "error")
        if cfg == "nsys-gm":
            said = [ln.strip() for ln in (res.err + res.out).splitlines()
                    if re.search(r"metric|ERR_NVGPUCTRPERM|permission|not supported", ln, re.I)
                    and not ln.startswith("BENCH")]
            if said:
                r["note"] = " ".join(said[:3])[:300]
        if ok:
            try:
                self.inspect(w, cfg, r, res, d)
            except (RuntimeError, ValueError, KeyError) as e:
                r["inspect_error"] = str(e)
                b.note_error("sampling-" + w["name"], cfg, rep, "inspecting its trace: %s" % e)
            self.log("  %-6s %-16s rep %d: %s %s (%.1f s)%s" % (
                w["name"], cfg, rep, fmt(r["metric"]), w["unit"], res.wall,
                self.describe(r)))
            self.last_wall[(w["name"], cfg)] = time.time() - t_start
        else:
            why = "timed out after %d s" % timeout if res.timed_out else \
                "exit %s%s" % (res.rc, "" if r["metric"] is not None else ", no %s line" % w["metric"])
            r["error"] = "%s; stderr: %s" % (why, self.tail(res.err + res.out))
            b.note_error("sampling-" + w["name"], cfg, rep, r["error"])
            fails = sum(1 for x in self.runs if x["workload"] == w["name"] and
                        x["config"] == cfg and x["status"] != "ok") + 1
            if res.timed_out or fails >= 2:
                self.skip["%s/%s" % (w["name"], cfg)] = r["status"]
        b.add_raw("sampling-" + w["name"], cfg, rep, r["status"], res,
                  {k: r[k] for k in ("metric", "loop_s") if r.get(k) is not None})
        self.runs.append(r)
        b.cleanup(d)

    @staticmethod
    def describe(r):
        if r.get("samples"):
            return "; " + ", ".join("%s %d samples, %.0f%% of the loop" % (
                s, v["samples"], 100 * (v["coverage"] or 0)) for s, v in sorted(r["samples"].items()))
        if "windows" in r:
            ws, secs = loop_windows(r)
            return "; %d window(s), %s in the loop (%.2f s)" % (
                len(r["windows"]), ",".join("w%s" % x["n"] for x in ws) or "none", secs)
        return ""

    # ---------------------------------------------------------- schedule

    def scheduled(self, rep):
        ws = [w for w in self.params["workloads"]
              if not (w.get("torch") and self.torch_reason)]
        out = []
        cfgs = self.params["configs"]
        k = (rep - 1) % len(cfgs)
        order = cfgs[k:] + cfgs[:k]
        for w in ws:
            for c in order:
                if rep <= self.reps_for(w, c) and "%s/%s" % (w["name"], c) not in self.skip:
                    out.append((w, c))
        return out

    def guess_wall(self, w, c):
        """Seconds one run takes, before any has run (the dry run's estimate too)."""
        p = self.params
        t = self.settle_for(w, c)
        t += 1.5 + p["launches"] * 6e-6 if w["name"] == "launch" else 8.5 + p["steps"] * 0.013
        return t + (5.0 if c in REFERENCE else 0.5)

    def estimate(self, rep):
        return sum(self.last_wall.get((w["name"], c), self.guess_wall(w, c))
                   for w, c in self.scheduled(rep))

    def nreps(self):
        return max(self.reps_for(w, c) for w in self.params["workloads"]
                   for c in self.params["configs"])

    def dry_run(self):
        """Prints what a run would do; runs nothing."""
        self.probe(dry=True)
        total = 0.0
        print("# sampling rows: %s; nsys: %s" % (", ".join(self.params["rows"]),
                                                 self.nsys or "not found"))
        for rep in range(1, self.nreps() + 1):
            todo = self.scheduled(rep)
            t = self.estimate(rep)
            total += t
            print("# repetition %d: %d runs, about %.0f s" % (rep, len(todo), t))
            for w, c in todo:
                cmd = self.command(w, c, "WORKDIR")
                if isinstance(cmd, str):
                    print("  %s/%s: n/a (%s)" % (w["name"], c, cmd))
                else:
                    print("  %s/%s: %s%s" % (w["name"], c, " ".join(
                        "%s=%s" % kv for kv in sorted(cmd[1].items()) if kv[0] != "TMPDIR")
                        + (" " if cmd[1] else ""), " ".join(cmd[0])))
        print("# about %.0f s in all (budget %d s; repetitions that would not fit are left out)"
              % (total, self.params["budget_s"]))

    def run(self):
        self.inspected = set()
        self.probe()
        if self.torch_reason:
            for c in self.params["configs"]:
                self.skip["train/%s" % c] = "n/a (%s)" % self.torch_reason
        t_start = time.time()
        self.deadline = t_start + self.params["budget_s"]
        done = 0
        for rep in range(1, self.nreps() + 1):
            todo = self.scheduled(rep)
            if not todo:
                break
            need = self.estimate(rep) * 1.05
            if rep > 1 and time.time() + need > self.deadline:
                self.params["stop_reason"] = (
                    "stopped after repetition %d: repetition %d (~%.0f s) would exceed the %d s "
                    "budget (BENCH_OT_BUDGET_S)" % (rep - 1, rep, need, self.params["budget_s"]))
                self.log("bench: " + self.params["stop_reason"])
                break
            self.log("bench: sampling rows, repetition %d of %d" % (rep, self.nreps()))
            for w, c in todo:
                if "%s/%s" % (w["name"], c) not in self.skip:
                    self.run_one(w, c, rep)
            done = rep
        self.params["reps_done"] = done
        self.params["wall_s"] = round(time.time() - t_start, 1)
        return self

    def data(self):
        return {"params": self.params, "runs": self.runs, "skip": self.skip}

    def report(self):
        return report_lines(self.data())
