#!/usr/bin/env python3
"""Checks the overtime and fleet rows of the benchmark (bench/sampling.py)
without a GPU:

- the dry run (bench.py --only overtime,fleet --dry-run) plans every
  configuration with its options, the settle times, the rotated order and
  a total within the budget;
- the arithmetic on made-up runs whose answers are known: the loop's
  coverage by samples, windows overlapping a loop, runs of 1s/60s with and
  without a window in the loop, the windows' cost A pooled over the 1s/2s
  runs (a run whose first window overlaps the loop left out), the
  duty-cycled ratio, the ratios of medians, minimums and pairs, the
  targets' verdicts;
- a run's inspection (trace files, spool windows) with the analyzer's
  answers stood in for;
- --report-from renders the same report from the --json file.

    test/bench-sampling-checks.py BUILD

Prints "ok - ..." / "not ok - ..." lines; exit status 1 on failure.
"""

import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import sampling  # noqa: E402

failed = []


def check(name, cond, detail=""):
    print("%s - bench sampling: %s%s" % ("ok" if cond else "not ok", name,
                                          "" if cond else ": " + str(detail)))
    if not cond:
        failed.append(name)


def close(a, b, eps=1e-6):
    return a is not None and b is not None and abs(a - b) <= eps


def dry_run(build):
    env = {k: v for k, v in os.environ.items() if not k.startswith("BENCH_")}
    p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench.py"), build,
                        "--only", "overtime", "--only", "fleet", "--dry-run"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.decode()
    check("dry run exits 0", p.returncode == 0, out[-400:])
    lines = out.splitlines()
    want = {"launch/gp-gm": "--gpu-metrics --", "launch/gp-tel": "--gpu-telemetry --",
            "launch/gp-tel-gpm": "--gpu-telemetry=gpm --",
            "launch/gp-dormant": "--start=dormant --",
            "launch/gp-sample": "--sample=1s/60s --spool=WORKDIR/spool --",
            "launch/gp-sample-dense": "BENCH_SETTLE_S=3 ",
            "train/gp-sample-dense": "--sample=1s/2s --spool=WORKDIR/spool --",
            "launch/none": "BENCH_SETTLE_S=1.5 ", "launch/gp-default": "-o WORKDIR/trace-%p --"}
    for k, frag in want.items():
        hit = [ln for ln in lines if ln.strip().startswith(k + ":")]
        check("dry run plans %s with %s" % (k, frag.strip()),
              hit and all(frag in ln for ln in hit), hit[:1])
    train_none = [ln for ln in lines if ln.strip().startswith("train/none:")]
    check("the training step settles only for 1s/2s",
          train_none and all("BENCH_SETTLE_S" not in ln for ln in train_none), train_none[:1])
    reps = [i for i, ln in enumerate(lines) if ln.startswith("# repetition")]
    firsts = [lines[i + 1].split(":")[0].strip() for i in reps if i + 1 < len(lines)]
    check("order rotated between repetitions", len(set(firsts)) == len(firsts) and len(firsts) >= 2,
          firsts)
    total = [ln for ln in lines if ln.startswith("# about")]
    try:
        est = float(total[0].split()[2])
    except (IndexError, ValueError):
        est = None
    check("planned total within the budget", est is not None and est <= 345, total)


def arithmetic():
    # Coverage: samples [0,10) [10,20) [25,35) over the loop [5, 30): 5+10+5 of 25.
    csv_text = ("host,rank,pid,file,device,source,metric,start_ns,end_ns,value\n"
                "h,,1,f,0,pm,m1,0,10,1\nh,,1,f,0,pm,m2,0,10,2\nh,,1,f,0,pm,m1,10,20,1\n"
                "h,,1,f,0,pm,m1,25,35,1\nh,,1,f,0,nvml,p,0,100,300\n"
                "h,,1,f,1,pm,m1,0,40,1\n")
    cov = sampling.sample_coverage(csv_text, 5, 30)
    check("samples in the loop", cov["pm"]["samples"] == 3, cov)
    check("coverage of the loop (first device)", close(cov["pm"]["coverage"], 20 / 25.0), cov)
    check("telemetry covers the whole loop", close(cov["nvml"]["coverage"], 1.0), cov)
    check("overlap", sampling.overlap(0, 10, 5, 30) == 5 and sampling.overlap(0, 4, 5, 30) == 0)

    def run(w, c, rep, metric, loop_s, **kw):
        r = {"workload": w, "config": c, "rep": rep, "status": "ok", "metric": metric,
             "loop_s": loop_s}
        r.update(kw)
        return r

    def win(n, ov):
        return {"n": n, "start_ns": 0, "end_ns": 1, "overlap_ns": int(ov * 1e9)}

    runs = []
    for rep, (tn, td) in enumerate([(1.00, 1.00), (1.02, 1.01), (0.98, 0.99)], 1):
        runs.append(run("launch", "none", rep, tn * 5, tn))
        runs.append(run("launch", "gp-dormant", rep, td * 5, td))
    runs += [run("launch", "gp-sample", 1, 5.0, 1.0, windows=[win(1, 0)]),
             run("launch", "gp-sample", 2, 5.05, 1.01, windows=[]),
             run("launch", "gp-sample", 3, 5.5, 1.1, windows=[win(1, 0.3)]),
             run("launch", "gp-sample", 4, 9.9, 1.98, status="ok")]  # not inspected: left out
    runs += [run("launch", "gp-sample-dense", 1, 5.5, 1.1, windows=[win(1, 0), win(2, 0.5)]),
             run("launch", "gp-sample-dense", 2, 6.0, 1.2, windows=[win(2, 1.0)]),
             run("launch", "gp-sample-dense", 3, 9.0, 1.8, windows=[win(1, 0.2), win(2, 0.5)])]
    runs += [run("launch", "gp-default", 1, 5.0, 1.0), run("launch", "gp-default", 2, 5.2, 1.04),
             run("launch", "gp-gm", 1, 5.1, 1.02), run("launch", "gp-gm", 2, 5.3, 1.06,
                                                          samples={"pm": {"samples": 900, "coverage": 0.99}}),
             run("launch", "gp-tel", 1, 5.3, 1.06), run("launch", "gp-tel", 2, 5.3, 1.06),
             {"workload": "launch", "config": "nsys-gm", "rep": 1, "status": "error",
              "metric": None, "loop_s": None, "error": "exit 1; stderr: no permission"}]
    f = sampling.fleet_numbers(runs, "launch")
    check("1s/60s runs: inspected ones only", f["sample_runs"] == 3, f)
    check("1s/60s runs with no window in the loop", f["sample_quiet"] == 2, f)
    check("their loop ÷ dormant", close(f["quiet_vs_dormant"], 1.005 / 1.0), f["quiet_vs_dormant"])
    check("1s/2s run whose first window overlaps the loop left out",
          f["dense_used"] == 2 and f["dense_first"] == 1, f)
    check("A pooled: (0.1 + 0.2) s over 1.5 window-s", close(f["a"], 0.2), f["a"])
    check("inside a window ÷ dormant = 1/(1 - A)", close(f["in_window"], 1.25), f["in_window"])
    check("duty-cycled 1s/60s ÷ none = 1/(1 - A/60)", close(f["duty_vs_none"], 1 / (1 - 0.2 / 60)),
          f.get("duty_vs_none"))
    check("a loop holding one whole window", close(f["one_window_vs_none"], 1.2), f)
    med, mn, pr, n = sampling.ratios(runs, "launch", "gp-gm", "gp-default")
    check("ratio of medians", close(med, 5.2 / 5.1), med)
    check("ratio of minimums", close(mn, 5.1 / 5.0), mn)
    check("median of per-repetition ratios", close(pr, (5.1 / 5.0 + 5.3 / 5.2) / 2) and n == 2, pr)
    params = {"rows": ["fleet", "overtime"], "launches": 200000, "steps": 60, "warmup": 3,
              "settle": 1.0, "dense_settle": 3.0, "reps": 3, "ref_reps": 1, "torch_reps": 2,
              "torch_ref_reps": 1, "reps_done": 3, "wall_s": 100.0,
              "configs": list(sampling.ORDER),
              "workloads": [{"name": "launch", "title": "empty launches, 1 thread",
                             "metric": "us_per_launch", "unit": "µs/launch"},
                            {"name": "train", "title": "transformer train step",
                             "metric": "ms_per_step", "unit": "ms/step"}]}
    data = {"params": params, "runs": runs, "skip": {"launch/nsys": "n/a (nsys not found)"}}
    text = "\n".join(sampling.report_lines(data))
    rows = {ln.split(" | ")[0] + " | " + ln.split(" | ")[1]: ln for ln in text.splitlines()
            if ln.startswith("| ") and ln.count(" | ") > 3}
    gm = rows.get("| --gpu-metrics ÷ tracing alone ≤ 1.03 | empty launches, 1 thread", "")
    check("target --gpu-metrics on medians MET", "| 1.020; pairs 1.020 | MET |" in gm, gm)
    tel = rows.get("| --gpu-telemetry ÷ tracing alone ≤ 1.01 | empty launches, 1 thread", "")
    check("target --gpu-telemetry on medians MISSED", "| 1.039; pairs 1.040 | MISSED |" in tel, tel)
    duty = rows.get("| --sample=1s/60s ÷ none ≤ 1.01, duty-cycled from 1s/2s | "
                    "empty launches, 1 thread", "")
    check("target duty-cycled 1s/60s MET", "| 1.003 | MET |" in duty, duty)
    meas = rows.get("| --sample=1s/60s ÷ none ≤ 1.01, runs as measured | empty launches, 1 thread", "")
    check("1s/60s as measured names the runs with a window", "(a window in the loop in 1 of 3 inspected runs)"
          in meas, meas)
    check("nsys not found reads n/a", "n/a (nsys not found)" in text)
    check("failures listed", "- launch / nsys-gm (rep 1): exit 1; stderr: no permission" in text)
    check("no training step row without its runs", "transformer train step |" not in text)
    return data, text


def inspection():
    class Bench:
        quick = False
        python = sys.executable
        base_env = {}

        def bin(self, n):
            return "/nonexistent/" + n

    class Mod:
        run_proc = parse_bench = tail = find_nsys = log = None

    s = sampling.Sampling(Bench(), {"overtime", "fleet"}, Mod())
    s.inspected = set()
    answers = {}
    s.analyze = lambda args, timeout=120: answers[args[2] + ":" + os.path.basename(args[-1])]
    with tempfile.TemporaryDirectory() as d:
        os.makedirs(os.path.join(d, "spool"))
        for n in ("h-7-w1.gpuprof", "h-7-w2.gpuprof", ".h-7-w3.gpuprof"):
            open(os.path.join(d, "spool", n), "w").close()
        cap = lambda s0, e0: json.dumps({"processes": [{"capture_ranges": [
            {"kind": "control", "start_ns": s0, "end_ns": e0}]}], "counts": {"kernel": 10},
            "lost": {"total": 0}})
        answers["json:h-7-w1.gpuprof"] = cap(100, 200)
        answers["json:h-7-w2.gpuprof"] = cap(300, 400)
        r = {"loop_t0_ns": 150, "loop_t1_ns": 350}
        w = {"name": "launch"}
        s.inspect(w, "gp-sample-dense", r, None, d)
        got = [(x["n"], x["overlap_ns"]) for x in r["windows"]]
        check("spool windows: complete files only, with their overlap of the loop",
              got == [(1, 50), (2, 50)], got)

        class Res:
            err = "gpuprof: trace written to %s\n" % os.path.join(d, "t.gpuprof")
        open(os.path.join(d, "t.gpuprof"), "w").close()
        answers["csv:t.gpuprof"] = ("host,rank,pid,file,device,source,metric,start_ns,end_ns,value\n"
                                    "h,,1,f,0,pm,m,100,200,1\nh,,1,f,0,pm,m,200,300,1\n")
        answers["json:t.gpuprof"] = json.dumps({"lost": {"total": 3}, "counts": {"kernel": 5}})
        r = {"loop_t0_ns": 150, "loop_t1_ns": 350}
        s.inspect(w, "gp-gm", r, Res(), d)
        check("a trace's samples over the loop", r["samples"]["pm"]["samples"] == 2 and
              close(r["samples"]["pm"]["coverage"], 150 / 200.0), r.get("samples"))
        check("first run's losses and kernels", r.get("lost") == 3 and r.get("kernels") == 5, r)


FAKE_PROG = r"""#!PYTHON
# Stand-in for launch_loop and train_step.py: the figures, and the loop on CLOCK_REALTIME.
import os, sys, time
if len(sys.argv) > 1 and sys.argv[1] == "-c":
    sys.exit(0)
time.sleep(float(os.environ.get("BENCH_SETTLE_S") or 0) / 100)
t0 = time.time_ns()
time.sleep(0.05)
t1 = time.time_ns()
print("BENCH us_per_launch 5.0\nBENCH ms_per_step 12.0\nBENCH loop_s %.4f" % ((t1 - t0) / 1e9))
print("BENCH loop_t0_ns %d\nBENCH loop_t1_ns %d" % (t0, t1))
"""

FAKE_GPUPROF = r"""#!PYTHON
# Stand-in for the gpuprof wrapper: runs the program, writes a copy of a
# golden trace where a trace would be written (none in sampled mode).
import os, shutil, subprocess, sys
args = sys.argv[2:]
i = args.index("--")
opts, prog = args[:i], args[i + 1:]
out = opts[opts.index("-o") + 1]
rc = subprocess.call(prog)
if any(o.startswith("--spool=") for o in opts):
    os.makedirs(opts[[o.startswith("--spool=") for o in opts].index(True)][8:], exist_ok=True)
elif "--start=dormant" not in opts:
    path = out.replace("%p", str(os.getpid())) + ".gpuprof"
    shutil.copy(GOLDEN, path)
    sys.stderr.write("gpuprof: trace written to %s\n" % path)
sys.exit(rc)
"""


def stand_in_run(build):
    """The whole run loop (schedule, runs, inspection, report) with stand-ins
    for the GPU programs and the wrapper, and the real analyzer."""
    analyzer = os.path.abspath(os.path.join(build, "bin", "gpuprof-analyze"))
    golden = os.path.join(ROOT, "test", "golden", "synth_overtime.gpuprof")
    if not os.path.exists(analyzer):
        print("skip - bench sampling: stand-in run # %s not built" % analyzer)
        return
    import bench as benchmod
    with tempfile.TemporaryDirectory() as d:
        for sub in ("bin", "lib", "bench"):
            os.makedirs(os.path.join(d, sub))
        os.symlink(analyzer, os.path.join(d, "bin", "gpuprof-analyze"))
        open(os.path.join(d, "lib", "libgpuprof.so"), "w").close()
        for path, text in ((os.path.join(d, "bench", "launch_loop"), FAKE_PROG),
                           (os.path.join(d, "python"), FAKE_PROG),
                           (os.path.join(d, "bin", "gpuprof"), FAKE_GPUPROF)):
            with open(path, "w") as f:
                f.write(text.replace("PYTHON", sys.executable).replace("GOLDEN", repr(golden)))
            os.chmod(path, 0o755)
        saved = dict(os.environ)
        os.environ.update({"BENCH_PYTHON": os.path.join(d, "python"), "BENCH_OT_REPS": "2",
                           "BENCH_OT_TORCH_REPS": "1", "BENCH_OT_BUDGET_S": "120",
                           "BENCH_NSYS": "/nonexistent"})
        try:
            b = benchmod.Bench(d, {"overtime", "fleet"}, False)
            os.makedirs(b.work)
            s = sampling.Sampling(b, {"overtime", "fleet"}, benchmod)
            s.find_nsys = lambda: (None, None)
            s.run()
        finally:
            os.environ.clear()
            os.environ.update(saved)
        runs = s.runs
        check("stand-in run: every planned run, all ok",
              # 7 configurations twice and --gpu-telemetry=gpm once (launch), each once (train)
              len(runs) == 7 * 2 + 1 + 7 + 1 and all(r["status"] == "ok" for r in runs),
              [(r["workload"], r["config"], r.get("error")) for r in runs if r["status"] != "ok"])
        text = "\n".join(s.report())
        check("stand-in run: a loop without PM samples is not a result",
              "| 1.000; pairs 1.000 (PM samples cover 0% of the least-covered loop) | not sampled | "
              "1.000 not sampled |" in text, text[-1500:])
        check("stand-in run: every run's inspection went through",
              not [r for r in runs if r.get("inspect_error")],
              [(r["config"], r["inspect_error"]) for r in runs if r.get("inspect_error")])
        gm = [r for r in runs if r["config"] == "gp-gm"]
        check("stand-in run: --gpu-metrics runs inspected (samples, losses of the first)",
              all("pm" in (r.get("samples") or {}) for r in gm) and gm[0].get("lost") == 0,
              gm[:1])
        sm = [r for r in runs if r["config"].startswith("gp-sample")]
        check("stand-in run: sampled runs list their spool's windows",
              sm and all(r.get("windows") == [] for r in sm), sm[:1])
        check("stand-in run: nsys reads n/a", s.skip.get("launch/nsys-gm") == "n/a (nsys not found)",
              s.skip)
        text = "\n".join(s.report())
        check("stand-in run: report with both workloads",
              "| empty launches, 1 thread | µs/launch | 5.000 (5.000–5.000, 2)" in text and
              "| transformer train step | ms/step | 12.00 (12.00–12.00, 1)" in text, text[:800])


def report_from(data, text):
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"sampling": data}, f)
        path = f.name
    try:
        p = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "bench.py"), "unused",
                            "--report-from", path], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        check("--report-from renders the same report",
              p.returncode == 0 and p.stdout.decode().strip() == text.strip(),
              p.stderr.decode()[-300:])
    finally:
        os.unlink(path)


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    dry_run(build)
    data, text = arithmetic()
    inspection()
    stand_in_run(build)
    report_from(data, text)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
