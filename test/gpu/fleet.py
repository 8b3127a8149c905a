"""GPU tests of fleet mode, --sample=WINDOW/PERIOD (run by run.py).

test/apps/fleet_mix.cu launches a known mix on one thread (fleet_a every
2 ms, fleet_b every 10 ms, a memset every 20 ms, a host-to-device copy
every 50 ms, a stream synchronize after each round) and logs every call's
CLOCK_REALTIME (the trace clock) just before and just after it.  The rule
of windows (docs/USAGE.md, "Which work a window holds"): a kernel, copy or
memset belongs to the window in which its launch call began, an API call
to the one in which it began.  So for each window file [start, end) of its
capture range, and each kind, the count the trace holds must equal the
calls of the log that began inside it, with a tolerance of zero: a call
whose [before, after] lies inside counts, one that lies outside does not;
only a call in progress at an edge (its before and after on either side,
widened by 1 us for the two clocks' reads) may count either way, since the
program cannot tell on which side its call began.  Each window: one
capture range ("control"), of WINDOW (the last one, cut by the program's
exit, ends at or after its last call), windows a period apart (after the
first, which also attaches CUPTI), no record lost, the report's
totals equal to its pprof export's (decoded here; and through `go tool
pprof` with test/golden/pprof-checks.py where go is installed).

  fleet-sample        --sample=200ms/1s for 20 s (about 20 windows)
  fleet-sample-long   --sample=1s/3s for 5 minutes (about 100 windows), the
                      fidelity target; runs only with GPUPROF_TEST_FLEET_LONG=1
                      (GPUPROF_TEST_FLEET_SECONDS sets its length)
  fleet-gpu-samples   --sample=1s/2s with --gpu-metrics and --gpu-telemetry:
                      every window has NVML samples and (after the first,
                      which may end while PM sampling is being set up, and
                      unless counters are restricted to admins) PM samples,
                      every sample beginning inside its window
  fleet-detach        CUPTI let go of between windows: bench/launch_loop's
                      single-thread loop (BENCH_MARKS=1: the end of every
                      100k launches) under --sample=1s/16s; the median batch
                      in the dormant periods after windows (once the window's
                      file closed, 0.5 s away from any edge) at most 1.05x
                      the median before the first window; then fleet_mix
                      under --sample=200ms/1s with a 100 ms flush interval
                      (CUPTI finalized after every window, attached again at
                      the next, said by GPUPROF_VERBOSE), every window exact
                      as in fleet-sample

tests(h) returns the (name, function) pairs; h is run.py's namespace.
"""

import csv
import glob
import gzip
import importlib.util
import io
import json
import os
import shutil
import sys
import tempfile

# The two clocks' reads (the program's, CUPTI's) agree within about 100 ns.
PAD_NS = 1000

KINDS = (("a", "fleet_a"), ("b", "fleet_b"), ("c", "memcpy HtoD"), ("s", "memset"),
         ("y", "cudaStreamSynchronize"))


def read_log(path):
    """{kind: [(before, after), ...]} of the program's log."""
    calls = {}
    with open(path) as f:
        for line in f:
            k, a, b = line.split()
            calls.setdefault(k, []).append((int(a), int(b)))
    return calls


def count_in(calls, t0, t1):
    """(calls that began inside [t0, t1) for sure, calls in progress at an edge)."""
    sure = edge = 0
    for a, b in calls:
        if any(a - PAD_NS < e <= b + PAD_NS for e in (t0, t1)):
            edge += 1
        elif t0 <= a and b < t1:
            sure += 1
    return sure, edge


# ---- pprof, decoded without go: profile.proto's fields (Profile, Sample, Location, Line, Function)

def varint(buf, i):
    v = shift = 0
    while True:
        c = buf[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def fields(buf):
    """(field number, value) pairs of a message: ints for varints, bytes otherwise."""
    i = 0
    while i < len(buf):
        key, i = varint(buf, i)
        f, wt = key >> 3, key & 7
        if wt == 0:
            v, i = varint(buf, i)
        elif wt == 2:
            n, i = varint(buf, i)
            v, i = buf[i:i + n], i + n
        elif wt == 1:
            v, i = int.from_bytes(buf[i:i + 8], "little"), i + 8
        elif wt == 5:
            v, i = int.from_bytes(buf[i:i + 4], "little"), i + 4
        else:
            raise ValueError("wire type %d" % wt)
        yield f, v


def packed(v):
    """A repeated integer field, packed (bytes) or not (int)."""
    if isinstance(v, int):
        return [v]
    out, i = [], 0
    while i < len(v):
        x, i = varint(v, i)
        out.append(x)
    return out


def read_pprof(path):
    """({sample type: total}, {leaf function: {sample type: value}}) of a gzipped profile."""
    with gzip.open(path, "rb") as f:
        buf = f.read()
    strings, types, samples, locs, funcs = [], [], [], {}, {}
    for f, v in fields(buf):
        if f == 6:
            strings.append(v.decode("utf-8", "replace"))
        elif f == 1:
            types.append(dict(fields(v)).get(1, 0))
        elif f == 2:
            loc, val = [], []
            for g, w in fields(v):
                if g == 1:
                    loc += packed(w)
                elif g == 2:
                    val += packed(w)
            samples.append((loc, val))
        elif f == 4:
            d, fn = {}, None
            for g, w in fields(v):
                if g == 1:
                    d["id"] = w
                elif g == 4 and fn is None:
                    fn = dict(fields(w)).get(1)
            locs[d.get("id")] = fn
        elif f == 5:
            d = dict(fields(v))
            funcs[d.get(1)] = d.get(2, 0)
    names = [strings[t] for t in types]
    totals = dict.fromkeys(names, 0)
    leaves = {}
    for loc, val in samples:
        leaf = strings[funcs.get(locs.get(loc[0]), 0)] if loc else ""
        row = leaves.setdefault(leaf, dict.fromkeys(names, 0))
        for n, x in zip(names, val):
            totals[n] += x
            row[n] += x
    return totals, leaves


def tests(h):
    Fail, Skip = h["Fail"], h["Skip"]
    run_cmd, clean_env, tail = h["run_cmd"], h["clean_env"], h["tail"]
    TOOL_TIMEOUT, RUN_TIMEOUT = h["TOOL_TIMEOUT"], h["RUN_TIMEOUT"]
    here = os.path.dirname(os.path.abspath(__file__))
    golden = os.path.join(here, "..", "golden")
    spec = importlib.util.spec_from_file_location("pprof_checks", os.path.join(golden, "pprof-checks.py"))
    pprof_checks = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(pprof_checks)

    def sampled(tools, seconds, sample, extra=(), env=None):
        """fleet_mix under --sample into a spool: (run, window files, log, tmp)."""
        app = tools.app("fleet_mix")
        tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
        tools.tmpdirs.append(tmp)
        spool = os.path.join(tmp, "spool")
        log = os.path.join(tmp, "calls.txt")
        run = h["traced"](tools, [app, str(seconds), log],
                          opts=["--sample=" + sample, "--spool", spool] + list(extra),
                          env=env, timeout=RUN_TIMEOUT + seconds)
        h["expect_status"](run, 0)
        partial = glob.glob(os.path.join(spool, ".*"))
        if partial:
            raise Fail("partial window files left: %s" % partial)
        return run, sorted(glob.glob(os.path.join(spool, "*.gpuprof"))), log, tmp

    def window_of(js, name):
        ranges = js["processes"][0].get("capture_ranges", [])
        if len(ranges) != 1 or ranges[0].get("kind") != "control":
            raise Fail("%s: capture ranges %s" % (name, ranges))
        return ranges[0]["start_ns"], ranges[0]["end_ns"]

    def counts_of(js):
        got = {b: v["count"] for b, v in h["kernels_by_base"](js).items()}
        got["memcpy HtoD"] = sum(m["count"] for m in js.get("memory_ops", [])
                                 if m["op"] == "memcpy" and m["kind"] == "HtoD")
        got["memset"] = sum(m["count"] for m in js.get("memory_ops", []) if m["op"] == "memset")
        api = {}
        for a in js.get("api", []):
            n = h["api_name"](a["name"])
            api[n] = api.get(n, 0) + a["count"]
        got["cudaStreamSynchronize"] = api.get("cudaStreamSynchronize", 0)
        got["cudaLaunchKernel"] = api.get("cudaLaunchKernel", 0)
        got["cudaMemcpyAsync"] = api.get("cudaMemcpyAsync", 0)
        got["cudaMemsetAsync"] = api.get("cudaMemsetAsync", 0)
        return got

    def pprof_errs(tools, path, js, tmp, use_go):
        """The window's pprof totals against its report's and JSON's, as a list of strings."""
        name = os.path.basename(path)
        pb, rep, jf = (os.path.join(tmp, x) for x in ("p.pb.gz", "r.txt", "j.json"))
        rc, _, err = run_cmd([tools.analyzer, "export", "-t", "pprof", "-o", pb, path], clean_env(),
                             TOOL_TIMEOUT)
        if rc != 0:
            return ["%s: export -t pprof exited %d: %s" % (name, rc, tail(err))]
        rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline", path], clean_env(),
                               TOOL_TIMEOUT)
        if rc != 0:
            return ["%s: report exited %d: %s" % (name, rc, tail(err))]
        with open(rep, "w") as fh:
            fh.write(out)
        want_ns, want_n = pprof_checks.summary(rep)
        totals, leaves = read_pprof(pb)
        errs = []
        if (totals.get("gpu_time"), totals.get("launches")) != (want_ns, want_n):
            errs.append("%s: pprof totals %s, the report's %d ns %d launches"
                        % (name, totals, want_ns, want_n))
        for k in js.get("kernels", []):
            got = leaves.get(k["name"], {})
            if (got.get("gpu_time"), got.get("launches")) != (k["total_ns"], k["count"]):
                errs.append("%s: kernel %s: pprof %s, the report %d ns %d" %
                            (name, k["name"], got, k["total_ns"], k["count"]))
        if use_go:
            with open(jf, "w") as fh:
                json.dump(js, fh)
            rc, out, _ = run_cmd([sys.executable, os.path.join(golden, "pprof-checks.py"), pb, rep,
                                  jf, name], clean_env(), TOOL_TIMEOUT)
            if rc != 0:
                errs.append(tail(out))
        return errs

    def check_windows(tools, seconds, sample, window_ns, period_ns, env=None):
        run, files, log, tmp = sampled(tools, seconds, sample, env=env)
        calls = read_log(log)
        last_call = max(b for v in calls.values() for _, b in v)
        errs, starts, edges, total = [], [], 0, {}
        if len(files) < int(seconds * 1e9 / period_ns) - 1:
            errs.append("%d windows in %g s of --sample=%s" % (len(files), seconds, sample))
        use_go = bool(shutil.which("go"))
        for i, f in enumerate(files):
            name = os.path.basename(f)
            js = tools.export_json([f])
            errs += ["%s: %s" % (name, e) for e in h["health"](js)]
            t0, t1 = window_of(js, name)
            starts.append(t0)
            cut = i == len(files) - 1 and t1 >= last_call
            if not (window_ns * 0.95 <= t1 - t0 <= window_ns * 1.3 or (cut and t1 > t0)):
                errs.append("%s: a window of %d ns%s" % (name, t1 - t0, " (cut by the exit)" if cut else ""))
            got = counts_of(js)
            want = {}
            for key, what in KINDS:
                want[what] = count_in(calls.get(key, []), t0, t1)
            want["cudaLaunchKernel"] = tuple(x + y for x, y in zip(want["fleet_a"], want["fleet_b"]))
            want["cudaMemcpyAsync"] = want["memcpy HtoD"]
            want["cudaMemsetAsync"] = want["memset"]
            for what, (sure, edge) in want.items():
                n = got.get(what, 0)
                total[what] = total.get(what, 0) + n
                if not sure <= n <= sure + edge:
                    errs.append("%s [%d, %d): %s %d, calls begun inside %d (+%d in progress at an edge)"
                                % (name, t0, t1, what, n, sure, edge))
            edges += sum(e for _, e in want.values())
            errs += pprof_errs(tools, f, js, tmp, use_go and i < 5)
        # The first window also attaches CUPTI (up to about a second): the gaps after it.
        for a, b in zip(starts[1:], starts[2:]):
            if not 0.8 * period_ns < b - a < 1.2 * period_ns:
                errs.append("windows %d ns apart (period %d)" % (b - a, period_ns))
        if errs:
            raise Fail("; ".join(errs[:10]) + ("; ... %d in all" % len(errs) if len(errs) > 10 else ""))
        print("# %d windows of --sample=%s: %s recorded, each window's counts those of its calls "
              "(%d calls in progress at an edge)%s" % (len(files), sample, total, edges,
                                                       "; go tool pprof read 5" if use_go else ""))
        return run, files

    def t_fleet_sample(tools):
        check_windows(tools, 20, "200ms/1s", 200e6, 1e9)

    def t_fleet_sample_long(tools):
        if os.environ.get("GPUPROF_TEST_FLEET_LONG") != "1":
            raise Skip("five minutes of windows: set GPUPROF_TEST_FLEET_LONG=1")
        seconds = float(os.environ.get("GPUPROF_TEST_FLEET_SECONDS", "300"))
        check_windows(tools, seconds, "1s/3s", 1e9, 3e9)

    def t_fleet_gpu_samples(tools):
        run, files, _, _ = sampled(tools, 14, "1s/2s", ["--gpu-metrics", "--gpu-telemetry=50"])
        restricted = "ERR_NVGPUCTRPERM" in run.err or "GPU metrics over time are off" in run.err
        if "GPU telemetry is off" in run.err:
            raise Skip("no NVML: %s" % tail(run.err))
        errs = []
        if len(files) < 5:
            errs.append("%d windows in 14 s of --sample=1s/2s" % len(files))
        per = []
        for i, f in enumerate(files):
            name = os.path.basename(f)
            t0, t1 = window_of(tools.export_json([f]), name)
            rc, out, err = run_cmd([tools.analyzer, "export", "--format", "csv", "--table",
                                    "gpu_samples", f], clean_env(), TOOL_TIMEOUT)
            if rc != 0:
                errs.append("%s: export --table gpu_samples exited %d: %s" % (name, rc, tail(err)))
                continue
            rows = list(csv.DictReader(io.StringIO(out)))
            src = {}
            for r in rows:
                src[r["source"]] = src.get(r["source"], 0) + 1
                if not t0 <= int(r["start_ns"]) < t1:
                    errs.append("%s: a %s sample at %s, outside [%d, %d)" % (name, r["source"], r["start_ns"], t0, t1))
                    break
            per.append(src)
            # The first window may end before NVML's set-up does (nvmlInit took over a
            # second on a machine just started), as PM sampling's below.  The last may be cut
            # by the exit: an NVML sample spans two polls 50 ms apart, so a window shorter
            # than three holds none (one of 8 ms, 64 PM samples, was seen on an H200).
            short = i == len(files) - 1 and t1 - t0 < 150000000
            if i > 0 and not short and not src.get("nvml"):
                errs.append("%s (window %d of %d, %.3f s): no NVML samples (%s)" %
                            (name, i + 1, len(files), (t1 - t0) / 1e9, src))
            if not restricted and i > 0 and not src.get("pm"):
                errs.append("%s (window %d): no PM samples (%s)" % (name, i + 1, src))
        if not errs and not any(src.get("nvml") for src in per):
            errs.append("no window has NVML samples (%s)" % per)
        if errs:
            raise Fail("; ".join(errs[:10]))
        print("# %d windows, samples by source in each: %s%s" %
              (len(files), per, " (counters restricted: telemetry only)" if restricted else ""))

    def launch_loop(tools):
        path = os.path.join(tools.build, "bench", "launch_loop")
        if not os.access(path, os.X_OK):
            run_cmd(["bash", os.path.join(here, "..", "..", "bench", "build.sh"), tools.build],
                    clean_env(), RUN_TIMEOUT)
        if not os.access(path, os.X_OK):
            raise Fail("%s is missing (bash bench/build.sh %s)" % (path, tools.build))
        return path

    def median(xs):
        xs = sorted(xs)
        n = len(xs)
        return (xs[n // 2] + xs[(n - 1) // 2]) / 2.0 if n else 0.0

    def t_fleet_detach(tools):
        loop = launch_loop(tools)
        flush_ms = 250
        grace_ns = max(2 * flush_ms, 200) * 1000000
        margin = 500000000
        # This VM's launch loop alone moves 10-20% between stretches of one run (medians of 20
        # batches, no tool: 367 to 455 ms), more than the 5% checked; CUPTI left attached
        # costs 15% to 80% in every batch after a window.  So: the best of up to three runs
        # with enough batches, each run's ratio printed.
        tries, ratios = [], []
        for attempt in range(5):
            tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
            tools.tmpdirs.append(tmp)
            spool = os.path.join(tmp, "spool")
            # A long period: the first window (at a random point of it) falls late enough
            # in the loop, most runs, to leave batches before it.
            run = h["traced"](tools, [loop, "st", "8000000"],
                              opts=["--sample=1s/16s", "--spool", spool],
                              env={"BENCH_MARKS": "1", "BENCH_SETTLE_S": "1.5",
                                   "GPUPROF_FLUSH_MS": str(flush_ms), "GPUPROF_VERBOSE": "1"},
                              timeout=RUN_TIMEOUT + 120)
            if run.rc != 0:     # launch_loop prints BENCH lines, no TRUTH
                raise Fail("launch_loop under --sample exited %d: %s" % (run.rc, tail(run.err)))
            marks, t0 = {}, None
            for line in run.out.splitlines():
                w = line.split()
                if len(w) == 4 and w[:2] == ["BENCH", "batch_end_ns"]:
                    marks[int(w[2])] = int(w[3])
                elif len(w) == 3 and w[:2] == ["BENCH", "loop_t0_ns"]:
                    t0 = int(w[2])
            if t0 is None or len(marks) < 20:
                raise Fail("launch_loop printed no batch marks: %s" % tail(run.out))
            wins = []
            for f in sorted(glob.glob(os.path.join(spool, "*.gpuprof"))):
                wins.append(window_of(tools.export_json([f]), os.path.basename(f)))
            if not wins:
                raise Fail("no window in the loop's run of --sample=1s/16s")
            batches = []
            prev = t0
            for k in sorted(marks):
                batches.append((prev, marks[k]))
                prev = marks[k]
            before = [b - a for a, b in batches if b <= wins[0][0] - margin]
            after = []
            for i, (ws, we) in enumerate(wins):
                lo = we + grace_ns + margin
                hi = wins[i + 1][0] - margin if i + 1 < len(wins) else float("inf")
                after += [b - a for a, b in batches if a >= lo and b <= hi]
            tries.append((len(before), len(after)))
            if len(before) < 3 or len(after) < 3:
                continue
            mb, ma = median(before), median(after)
            ratios.append((ma / mb, mb, ma, len(before), len(after), len(wins),
                           run.err.count("CUPTI attached again")))
            if ma <= 1.05 * mb or len(ratios) == 3:
                break
        if not ratios:
            raise Fail("no run had 3 batches before its first window and 3 in dormant periods "
                       "after one (%s: batches before, after)" % tries)
        best = min(ratios)
        runs = ", ".join("%.3fx" % r[0] for r in ratios)
        if best[0] > 1.05:
            raise Fail("100k launches took %.1f ms (median of %d) in dormant periods after windows, "
                       "%.1f ms (median of %d) before the first: %.3fx, over 1.05x in each of %d "
                       "runs (%s; CUPTI attached again %d times)"
                       % (best[2] / 1e6, best[4], best[1] / 1e6, best[3], best[0], len(ratios),
                          runs, best[6]))
        print("# launch_loop under --sample=1s/16s: 100k launches %.1f ms before the first window, "
              "%.1f ms in dormant periods after windows (%.3fx; %d and %d batches, %d windows; "
              "runs: %s)" % (best[1] / 1e6, best[2] / 1e6, best[0], best[3], best[4], best[5], runs))
        # Windows stay exact with CUPTI finalized and attached again before each.
        run, files = check_windows(tools, 12, "200ms/1s", 200e6, 1e9,
                                   env={"GPUPROF_FLUSH_MS": "100", "GPUPROF_VERBOSE": "1"})
        again = run.err.count("CUPTI attached again")
        if again < len(files) - 2:
            raise Fail("CUPTI attached again %d times over %d windows of --sample=200ms/1s "
                       "(flush 100 ms): not let go of between windows: %s"
                       % (again, len(files), tail(run.err)))
        print("# fleet_mix: CUPTI attached again %d times over %d windows, every window exact"
              % (again, len(files)))

    return [("fleet-sample", t_fleet_sample), ("fleet-sample-long", t_fleet_sample_long),
            ("fleet-gpu-samples", t_fleet_gpu_samples), ("fleet-detach", t_fleet_detach)]
