#!/usr/bin/env python3
"""The analyzer's benchmark, no GPU needed (make bench-analyzer).

Writes synthetic traces (kept in the work folder and reused while their
writer is unchanged), then, per trace and per repetition, runs the
one-thread decompress+scan floor (bench/scan_floor.c) and
`gpuprof-analyze report` (once per -j value when the analyzer has -j),
interleaved so that a loaded machine slows both alike.  Prints per row the
median and the minimum wall time, records/s, CPU time, peak RSS (the
child's getrusage ru_maxrss) and the ratio of the floor's time to the
report's (1.0: as fast as the floor; the issue's targets are 0.7 for
mixed traces and 0.8 for kernel-only ones), by wall and by CPU time.

    python3 bench/analyzer.py --build BUILD [--records 1e7] [--big]
        [--ranks 16] [--repeat 3] [--jobs "1 2 0"] [--only kern,mix,nvtx,ranks,names,late]
        [--dir DIR] [--out RESULTS.md] [--baseline OTHER-ANALYZER]
        [--exports LIST] [--export-files] [--no-report]

Traces: kern (bench/synth_trace N: kernels only), names (only when asked
for: synth_trace --names K N, K = N/10 distinct kernel names up to
100,000), late (only when asked for: synth_trace --api-late 200000 N/2,
each kernel's cudaLaunchKernel record 200,000 launches after it, as real
traces have them: N records), mix (synth_trace --mix
N: launches with API calls, copies, memsets, memory, metrics), nvtx
(bench/synth_job N: 43% kernels, 45% API, 12% nested NVTX ranges, copies),
ranks (synth_job --rank R, --ranks files of N/ranks records each, read by
one report).  --big adds kern and nvtx of 1e8 records (about 1 GB of
traces, some minutes per run).  -j 0 means the analyzer's default (every
core available).  The report's output is compared across -j values: they
must be byte-identical.  --baseline adds rows of another build of the
analyzer (an older commit's gpuprof-analyze, run without -j) in the same
runs, so that a change is measured against what it replaces on the same
machine and load.

For traces of several files (ranks), the report's speedup at each -j over
-j 1 is printed beside the floor's speedup when that many floor processes
scan the same files at once: the most this machine's cores give work that
shares nothing (memory bandwidth, caches and clock included), against which
the issue's 0.8 x cores reads.

Then the timeline and the streamed exports on each kernel-only trace
(--exports, default timeline,chrome,perfetto,csv; "" for none): `report
--timeline`, `export -t chrome` and `export -t csv` (to /dev/null) and
`export -t perfetto` (to a file in the work folder, for its size, removed
after each run),
interleaved with the floor as above: records/s by wall and by CPU time, the
ratio to the floor by CPU time (the figure to compare on a loaded machine),
peak RSS, and for Perfetto the bytes of output per record (the issue's
targets: at least 10 M records/s for the timeline, 5 M for the exports,
at most 40 B per kernel slice).  --export-files writes every export to a
new file in the work folder (removed after each run: what a user's export
costs, the file system's work included), on every trace of --only, sqlite
among the exports allowed, and with --baseline runs the older build's
exports interleaved too (its rows marked "baseline").  --no-report leaves
out the report rows.
"""
import argparse
import hashlib
import os
import statistics
import subprocess
import sys
import time


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def run(argv, out=subprocess.DEVNULL):
    """Run argv; (exit status, wall s, CPU s, peak RSS KiB, stdout bytes or None)."""
    t0 = time.monotonic()
    p = subprocess.Popen(argv, stdout=subprocess.PIPE if out is None else out,
                         stderr=subprocess.PIPE)
    data = b""
    if out is None:
        data = p.stdout.read()
    err = p.stderr.read()
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        log("bench: %s exited %d: %s" % (" ".join(argv[:3]), p.returncode,
                                         err.decode(errors="replace")[-400:]))
    return p.returncode, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss, data


def parse_count(s):
    return int(float(s))


def make_traces(args, d):
    """[(label, [paths], writer argv list)] for the traces asked for, written when missing."""
    b = os.path.join(args.build, "bench")
    st, sj = os.path.join(b, "synth_trace"), os.path.join(b, "synth_job")
    n = args.records
    want = []
    sizes = [n] + ([100000000] if args.big else [])
    for size in sizes:
        tag = "%.0e" % size
        if "kern" in args.only:
            want.append(("kern " + tag, [(st, [str(size)], "kern-%d.gpuprof" % size)]))
        if "mix" in args.only and size == n:
            want.append(("mix " + tag, [(st, ["--mix", str(size)], "mix-%d.gpuprof" % size)]))
        if "nvtx" in args.only:
            want.append(("nvtx " + tag, [(sj, [str(size)], "nvtx-%d.gpuprof" % size)]))
    if "names" in args.only:
        # Many distinct kernel names (demangling, the tables of every name).
        k = max(1, min(100000, n // 10))
        want.append(("names %.0ex%.0e" % (k, n),
                     [(st, ["--names", str(k), str(n)], "names%d-%d.gpuprof" % (k, n))]))
    if "late" in args.only:
        # Kernels before their API records, as activity buffers reach real traces first.
        want.append(("late %.0e" % n, [(st, ["--api-late", "200000", str(max(1, n // 2))],
                                        "late-%d.gpuprof" % n)]))
    if "ranks" in args.only and args.ranks > 0:
        per = max(1, n // args.ranks)
        want.append(("ranks %dx%.0e" % (args.ranks, per),
                     [(sj, ["--rank", str(r), str(per)], "rank%d-%d.gpuprof" % (r, per))
                      for r in range(args.ranks)]))
    out = []
    for label, files in want:
        paths = []
        for prog, argv, name in files:
            p = os.path.join(d, name)
            if not os.path.exists(p) or os.path.getmtime(p) < os.path.getmtime(prog):
                log("bench: writing %s" % p)
                rc, wall, _, _, _ = run([prog] + argv + [p + ".tmp"])
                if rc != 0:
                    sys.exit("bench: %s failed" % prog)
                os.replace(p + ".tmp", p)
            paths.append(p)
        out.append((label, paths))
    return out


def floor_spread(floor, paths, n):
    """Wall seconds of the floor over paths split among n processes run at once."""
    t0 = time.monotonic()
    procs = [subprocess.Popen([floor] + paths[i::n], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL) for i in range(min(n, len(paths)))]
    bad = [p for p in procs if p.wait() != 0]
    if bad:
        sys.exit("bench: scan_floor failed")
    return time.monotonic() - t0


def bench_scaling(args, floor, label, paths, rep, jobs, ncpu, say):
    """A multi-file trace's -j speedups beside the floor's on as many processes:
    what this machine's cores give a job that shares nothing."""
    base = rep.get(1)
    if not base or len(paths) < 2:
        return
    say("Scaling of %s: the report's speedup over -j 1 (median walls), beside the"
        " one-thread floor run as that many processes at once over the same files"
        " (median of %d): the most this machine's cores give work that shares nothing"
        % (label, args.repeat))
    say("")
    say("| -j | report speedup | floor speedup on as many processes | report ÷ floor speedup |")
    say("|---|---|---|---|")
    one = statistics.median([floor_spread(floor, paths, 1) for _ in range(args.repeat)])
    for j in jobs:
        if j in (None, "base", 1):
            continue
        n = ncpu if j == 0 else j
        if n < 2:
            continue
        fs = one / statistics.median([floor_spread(floor, paths, n) for _ in range(args.repeat)])
        rs = statistics.median(base["wall"]) / statistics.median(rep[j]["wall"])
        say("| %s | %.2f | %.2f | %.2f |" % ("%d (all)" % n if j == 0 else str(j), rs, fs, rs / fs))
    say("")


def has_jobs(analyzer):
    rc, _, _, _, data = run([analyzer, "report", "--help"], out=None)
    return b"--jobs" in data


def fmt_s(v):
    return "%.3f" % v


def export_argv(analyzer, what, paths, out, files=False):
    """The command line of one export row; out is the output file (Perfetto's, or all with files)."""
    if what == "timeline":
        return [analyzer, "report", "--timeline"] + paths
    if what == "perfetto" or files:
        return [analyzer, "export", "-t", what, "-o", out] + paths
    return [analyzer, "export", "-t", what] + paths


def bench_exports(args, analyzer, floor, d, traces, exports, say):
    """The timeline and export rows of the kernel-only traces; False when one failed."""
    ok = True
    say("### The timeline and the streamed exports, %s" %
        ("every trace" if args.export_files else "kernel-only traces"))
    say("")
    say("- floor and export runs interleaved, %d repetitions; median (minimum);"
        " vs floor = floor CPU time / export CPU time (1.0 = at the floor); %s" %
        (args.repeat, "every export to a new file (the timeline's standard output too)"
         if args.export_files else "chrome's and csv's output to /dev/null, perfetto's to a file"))
    say("")
    say("| output | trace | records | floor CPU s | wall s | CPU s | M records/s (wall)"
        " | M records/s (CPU) | vs floor, CPU | peak RSS MiB | output B/record |")
    say("|---|---|---|---|---|---|---|---|---|---|---|")
    out = os.path.join(d, "export.perfetto")
    sides = [("", analyzer)] + ([(" (baseline)", args.baseline)]
                                if args.baseline and args.export_files else [])
    for label, paths in traces:
        if not label.startswith("kern ") and not args.export_files:
            continue
        fl = []
        rep = {x + sl: {"wall": [], "cpu": [], "rss": [], "size": 0}
               for x in exports for sl, _ in sides}
        records = 0
        for i in range(args.repeat):
            rc, _, cpu, _, data = run([floor] + paths, out=None)
            if rc != 0:
                sys.exit("bench: scan_floor failed")
            records = int(data.split()[1])
            fl.append(cpu)
            for x in exports:
                for sl, an in sides:
                    argv = export_argv(an, x, paths, out, args.export_files)
                    if x == "timeline" and args.export_files:
                        with open(out, "wb") as f:
                            rc, wall, cpu, rss, _ = run(argv, out=f)
                    else:
                        rc, wall, cpu, rss, _ = run(argv)
                    if rc != 0:
                        ok = False
                    r = rep[x + sl]
                    r["wall"].append(wall)
                    r["cpu"].append(cpu)
                    r["rss"].append(rss)
                    if os.path.exists(out):
                        if x == "perfetto":
                            r["size"] = os.path.getsize(out)
                        os.unlink(out)
                    log("bench: %s%s %s rep %d: %.2f s wall, %.2f s CPU, %.1f MiB" %
                        (x, sl, label, i + 1, wall, cpu, rss / 1024))
        fc = statistics.median(fl)
        for x in [x + sl for x in exports for sl, _ in sides]:
            r = rep[x]
            w, c = statistics.median(r["wall"]), statistics.median(r["cpu"])
            say("| %s | %s | %d | %s (%s) | %s (%s) | %s (%s) | %.2f | %.2f | %.3f (best %.3f)"
                " | %.1f | %s |" %
                (x, label, records, fmt_s(fc), fmt_s(min(fl)), fmt_s(w), fmt_s(min(r["wall"])),
                 fmt_s(c), fmt_s(min(r["cpu"])), records / w / 1e6, records / c / 1e6,
                 fc / c, min(fl) / min(r["cpu"]), max(r["rss"]) / 1024,
                 "%.1f" % (r["size"] / max(records, 1)) if x.startswith("perfetto") else "—"))
    say("")
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--records", type=parse_count, default=10000000)
    ap.add_argument("--big", action="store_true")
    ap.add_argument("--ranks", type=int, default=16)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--jobs", default="1 2 0")
    ap.add_argument("--only", default="kern,mix,nvtx,ranks")
    ap.add_argument("--dir")
    ap.add_argument("--out")
    ap.add_argument("--baseline")
    ap.add_argument("--exports", default="timeline,chrome,perfetto,csv")
    ap.add_argument("--export-files", action="store_true")
    ap.add_argument("--no-report", action="store_true")
    args = ap.parse_args()
    args.only = set(args.only.split(","))
    analyzer = os.path.join(args.build, "bin", "gpuprof-analyze")
    floor = os.path.join(args.build, "bench", "scan_floor")
    d = args.dir or os.path.join(args.build, "bench", "analyzer")
    os.makedirs(d, exist_ok=True)
    jobs = [int(j) for j in args.jobs.split()] if has_jobs(analyzer) else [None]
    if args.baseline:
        jobs = ["base"] + jobs
    traces = make_traces(args, d)
    ncpu = len(os.sched_getaffinity(0))
    lines = []

    def say(s):
        lines.append(s)
        print(s, flush=True)

    say("## Analyzer: %s against the one-thread decompress+scan floor" %
        ("the exports" if args.no_report else "`report`"))
    say("")
    say("- host: %s, %d CPUs available, load average at start %.2f; %s" %
        (os.uname().nodename, ncpu, os.getloadavg()[0],
         time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())))
    say("- %d repetitions, floor and report runs interleaved; median (minimum) of each;"
        " ratio = floor time / report time (1.0 = at the floor), by wall and by CPU" %
        args.repeat)
    say("")
    if not args.no_report:
        say("| trace | records | trace MB | -j | floor s | report s | M records/s | report CPU s"
            " | peak RSS MiB | B/record | vs floor, wall | vs floor, CPU |")
        say("|---|---|---|---|---|---|---|---|---|---|---|---|")
    ok = True
    scaling = {}
    for label, paths in ([] if args.no_report else traces):
        mb = sum(os.path.getsize(p) for p in paths) / 1e6
        fl = {"wall": [], "cpu": []}
        rep = {j: {"wall": [], "cpu": [], "rss": [], "out": set()} for j in jobs}
        records = 0
        for i in range(args.repeat):
            rc, wall, cpu, _, data = run([floor] + paths, out=None)
            if rc != 0:
                sys.exit("bench: scan_floor failed")
            records = int(data.split()[1])
            fl["wall"].append(wall)
            fl["cpu"].append(cpu)
            for j in jobs:
                if j == "base":
                    argv = [args.baseline, "report"] + paths
                else:
                    argv = [analyzer, "report"] + ([] if j is None else ["--jobs", str(j)]) + paths
                rc, wall, cpu, rss, data = run(argv, out=None)
                if rc != 0:
                    ok = False
                r = rep[j]
                r["wall"].append(wall)
                r["cpu"].append(cpu)
                r["rss"].append(rss)
                r["out"].add(hashlib.sha256(data).hexdigest())
                log("bench: %s -j %s rep %d: %.2f s, %.1f MiB" %
                    (label, j, i + 1, wall, rss / 1024))
        outs = set()
        for j in jobs:
            outs |= rep[j]["out"]
        if len(outs) > 1:
            ok = False
            log("bench: %s: report output differs between runs or -j values" % label)
        scaling[label] = rep
        fw, fc = statistics.median(fl["wall"]), statistics.median(fl["cpu"])
        for j in jobs:
            r = rep[j]
            w, c = statistics.median(r["wall"]), statistics.median(r["cpu"])
            rss = max(r["rss"]) / 1024
            jl = "—" if j is None else ("%d (all)" % ncpu if j == 0 else str(j))
            if j == "base":
                jl = "baseline"
            say("| %s | %d | %.1f | %s | %s (%s) | %s (%s) | %.2f | %.2f | %.1f | %.1f | "
                "%.3f (best %.3f) | %.3f |" %
                (label, records, mb, jl, fmt_s(fw), fmt_s(min(fl["wall"])), fmt_s(w),
                 fmt_s(min(r["wall"])), records / w / 1e6, c, rss,
                 rss * 1048576 / max(records, 1), fw / w,
                 min(fl["wall"]) / min(r["wall"]), fc / c))
    say("")
    for label, paths in traces:
        if len(paths) > 1:
            bench_scaling(args, floor, label, paths, scaling.get(label, {}), jobs, ncpu, say)
    exports = [x for x in args.exports.split(",") if x]
    if exports and (args.export_files or any(label.startswith("kern ") for label, _ in traces)):
        ok = bench_exports(args, analyzer, floor, d, traces, exports, say) and ok
    if not ok:
        say("FAILED: a report or export exited non-zero or its output differed between runs")
    if args.out:
        with open(args.out, "w") as f:
            f.write("\n".join(lines) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
