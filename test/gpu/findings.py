"""GPU tests of the report's findings (run by run.py; `run.py BUILD --only
findings` runs them alone).

test/apps/findings.cu runs each problem and its fixed twin under the
recorder.  The rule must fire on the problem, with the site's file:line the
program printed (the launch site before or after the idle time, a
synchronous copy's own site, site_call, or for per-kernel rules the
kernel's heaviest launch site), and must not fire on the twin; where the
rule estimates a time at stake, it must be within 20% of the time the twin
actually saves, measured from the two runs (the host time of the
steady-state loop, problem minus twin, or where said the kernels' time in
the two traces).  The report's --fail-on must exit 3 on the problem and 0
on the twin.  Each test prints "# RULE: stake S ns, saved T ns" lines.

The pageable twin copies into cudaMallocHost memory instead (the loop's
copies are 4 bytes: what the fix saves is the host work the blocked call
kept from overlapping, the idle gaps the rule counts, not a faster
transfer); the tiny twin makes one copy of the 20000 copies' bytes (the
rule counts each copy's shortest time plus the mean gap to the one
before: in a loop of copies, what each costs).

occupancy's twin launches the same blocks without the shared memory that
kept them at 2 an SM: its time at stake (the rounds of blocks with the
limit lifted) is checked like the others'.  So is fp32-gemm's, with
--metrics (findings-gemm), on test/apps/findings_blas.cu: cublasSgemm on
CUDA cores (cuBLAS's default math) against the same calls with
CUBLAS_TF32_TENSOR_OP_MATH; the saving is the GEMM kernels' time, problem
minus twin; the site is the program's call of cuBLAS.

Rules without a saving to compare, and the check used instead:
  memory-bound   not estimated: fires on the fixed twin of below-roof (a
                 coalesced read), at its launch site; not on the chase.
  incomplete-trace  no saving: a ring overflow forced with the fault shim
                 (a stalled writer and a 2-chunk ring) must make it fire as
                 a warning with the records lost; the same run unfaulted not.
  staged-peer-copy  needs 2 GPUs: fires on copies without peer access
                 (test/apps/peer_staged.cu) with their count; not with
                 peer access (test/apps/peer.cu).
  nccl-exposed   needs 2 GPUs, PyTorch and NCCL: test/apps/torch_nccl_overlap.py
                 under torchrun (2 ranks), recorded with --backtrace=python
                 and --capture-range=cudaProfilerApi (the measured steps).
                 The problem all-reduces its gradient buckets after the
                 step's compute; the twin overlaps each bucket's all-reduce
                 with the next bucket's compute, the same kernels.  Fires
                 on the problem above info, naming a rank (and, where the
                 rule names places, the all-reduce's line).  The stake is
                 what a full overlap saves; the twin overlaps all but each
                 all-reduce while the host issues it (and the last one of
                 the last step), which the rule measures on the twin: its
                 stake at most 10% of its run and half the problem's
                 (warning on some hosts: H200 pairs leave 20 to 30% of the
                 problem's), and the problem's stake less the twin's
                 within 20% of the measured steps' wall time saved (the
                 slower rank's, problem minus twin).  --fail-on=nccl-exposed
                 is checked on the problem only.
Cases that need hardware metrics (--metrics) or 2 GPUs skip with the
reason where they cannot run.

Clean programs, where no finding may be above info (and report
--fail-on=warning exits 0):
  findings-clean-graph  bench/graph_replay (built by bench/build.sh into
                 BUILD/bench): 2000 replays of a graph of 100 kernels,
                 recorded with --graph-trace=graph.
  findings-clean-train  bench/train_step.py --careful 40 10 (PyTorch) under
                 gpuprof run --capture-range=cudaProfilerApi: the 100 timed
                 steps, not the warm-up.

tests(h) returns the (name, function) pairs; h is run.py's namespace.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

STAKE_TOLERANCE = 0.20
SEVERITIES = ("info", "warning", "critical")

# mode: (rule, backtrace, the place's site that is checked, truth key of its line)
CASES = {
    "starve": ("gpu-starvation", "kernel", "site_after", "findings.line.launch"),
    "sync": ("host-sync", "kernel", "site_before", "findings.line.launch"),
    "copy": ("sync-copy", "all", "site_call", "findings.line.copy"),
    "pageable": ("pageable-copy", "all", "site_call", "findings.line.copy"),
    # tiny-copies names a copy kind, no site.
    "tiny": ("tiny-copies", "kernel", None, None),
    "launch": ("launch-bound", "kernel", "site_after", "findings.line.launch"),
    "serial": ("serialized-streams", "kernel", "site_after", "findings.line.legacy"),
    "alloc": ("alloc-churn", "kernel", "site_after", "findings.line.launch"),
    "occupancy": ("occupancy", "kernel", "site_after", "findings.line.launch"),
    "tail": ("tail-effect", "kernel", "site_after", "findings.line.launch"),
    "startup": ("startup", "kernel", "site_after", "findings.line.launch"),
}

# Rules whose time at stake is not an estimate of a saving.
NOT_ESTIMATED = ("memory-bound", "incomplete-trace")


def gpu_count():
    try:
        out = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE,
                             stderr=subprocess.DEVNULL, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return 0
    return out.count(b"GPU ")


def tests(h):
    Fail, Skip = h["Fail"], h["Skip"]
    run_cmd, clean_env, tail = h["run_cmd"], h["clean_env"], h["tail"]

    def findings_of(tools, files):
        return tools.export_json(files).get("findings", [])

    def brief(fs):
        return [(f["rule"], f["severity"], f["stake_ns"]) for f in fs]

    def fail_on(tools, rule, problem_files, twin_files, errs):
        """The CI gate: exit 3 where the rule fires, 0 where it does not."""
        for files, want_rc in ((problem_files, 3), (twin_files, 0)):
            if files is None:
                continue
            rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline",
                                    "--fail-on=" + rule] + files, clean_env(),
                                   h["TOOL_TIMEOUT"])
            if rc != want_rc:
                errs.append("report --fail-on=%s exited %d, expected %d: %s"
                            % (rule, rc, want_rc, tail(err)))

    def check_stake(rule, f, saved, errs):
        print("# %s: stake %d ns, saved %d ns" % (rule, f["stake_ns"], saved), flush=True)
        if rule in NOT_ESTIMATED:
            if f["stake_ns"] != 0:
                errs.append("%s: time at stake %d ns, but the rule does not estimate it"
                            % (rule, f["stake_ns"]))
            if saved <= 0:
                errs.append("the twin saved nothing (%d ns)" % saved)
            return
        if saved <= 0:
            errs.append("the twin saved nothing (%d ns)" % saved)
        elif abs(f["stake_ns"] - saved) > STAKE_TOLERANCE * saved:
            errs.append("time at stake %d ns, the twin saves %d ns (more than %d%% apart)"
                        % (f["stake_ns"], saved, STAKE_TOLERANCE * 100))

    def check_site(f, side, want, errs):
        sites = [w.get(side) or "" for w in f["where"]]
        if not any(want in s for s in sites):
            errs.append("no %s at %s: %s" % (side, want, json.dumps(f["where"])[:800]))

    def pick(fs, rule, side=None, want=None):
        """The rule's finding of most time at stake (of those at the site, if any is)."""
        mine = [f for f in fs if f["rule"] == rule]
        at = [f for f in mine if want and any(want in (w.get(side) or "") for w in f["where"])]
        pool = at or mine
        return max(pool, key=lambda x: x["stake_ns"]) if pool else None

    def judge(tools, rule, side, want, problem, twin, saved, errs):
        """problem, twin: (run, findings).  The common checks of a pair."""
        run, fs = problem
        tfs = twin[1] if twin else []
        f = pick(fs, rule, side, want)
        if not f:
            errs.append("%s did not fire on the problem; findings: %s" % (rule, brief(fs)))
        else:
            if saved is not None:
                check_stake(rule, f, saved, errs)
            if want:
                check_site(f, side, want, errs)
        if any(x["rule"] == rule for x in tfs):
            errs.append("%s fired on the fixed twin: %s"
                        % (rule, json.dumps([x for x in tfs if x["rule"] == rule])[:800]))
        fail_on(tools, rule, run.files, twin[0].files if twin else None, errs)
        return f

    def traced_pair(tools, mode, opts, env=None, twin_env=None, app="findings", twin_opts=()):
        app = tools.app(app)
        got = {}
        for fixed in (False, True):
            run = h["traced"](tools, [app, mode] + (["fixed"] if fixed else []),
                              opts=list(opts) + (list(twin_opts) if fixed else []),
                              env=(twin_env if fixed else env))
            h["expect_status"](run, 0)
            h["expect_files"](run, 1)
            # The problems' traces become golden traces (test/golden/run.sh) on request.
            keep = os.environ.get("GPUPROF_GOLDEN_KEEP")
            if keep and not fixed:
                shutil.copy(run.files[0], os.path.join(keep, "findings_%s.gpuprof" % mode))
            got[fixed] = (run, findings_of(tools, run.files))
        return got[False], got[True]

    # ---- one program, a problem and its twin

    def pair(mode):
        rule, backtrace, side, line_key = CASES[mode]

        def t(tools):
            env = twin_env = None
            if mode == "startup":
                # The problem JIT-compiles every time; the twin finds its
                # modules in a JIT cache an untraced run of it filled.
                cache = tempfile.mkdtemp(prefix="gpuprof-jit-cache.")
                tools.tmpdirs.append(cache)
                env = {"CUDA_CACHE_DISABLE": "1"}
                twin_env = {"CUDA_CACHE_PATH": cache, "CUDA_CACHE_DISABLE": "0"}
                e = clean_env()
                e.update(twin_env)
                rc, out, err = run_cmd([tools.app("findings"), mode, "fixed"], e)
                if rc != 0:
                    raise Fail("the untraced run that fills the JIT cache exited %d: %s"
                               % (rc, tail(err)))
            # The launch twin replays CUDA graphs: recorded as whole graphs, as
            # graph replays should be (a record per node costs the host about
            # 0.6 us a kernel under tracing, which the untraced fix does not pay).
            twin_opts = ["--graph-trace=graph"] if mode == "launch" else []
            problem, twin = traced_pair(tools, mode, ["--backtrace=" + backtrace], env, twin_env,
                                        twin_opts=twin_opts)
            run = problem[0]
            saved = run.truth["findings.loop_ns"] - twin[0].truth["findings.loop_ns"]
            errs = []
            if mode == "startup":
                print("# startup: cuModuleLoadData %d ns, with the JIT cache %d ns"
                      % (run.truth["findings.module_ns"], twin[0].truth["findings.module_ns"]))
            want = "findings.cu:%d" % run.truth[line_key] if line_key else None
            judge(tools, rule, side, want, problem, twin, saved, errs)
            if mode == "serial":
                f = pick(problem[1], rule)
                if f and "legacy default stream" not in f["summary"]:
                    errs.append("serialized-streams does not name the legacy default stream: %s"
                                % f["summary"])
            if errs:
                raise Fail("; ".join(errs))
        return t

    # ---- stragglers: two ranks of one job, one after the other on GPU 0

    def t_straggler(tools):
        app = tools.app("findings")
        runs = {}
        for fixed in (False, True):
            for rank in (0, 1):
                run = h["traced"](tools, [app, "rank"] + (["fixed"] if fixed else []),
                                  opts=["--backtrace=kernel"],
                                  env={"RANK": str(rank), "WORLD_SIZE": "2",
                                       "LOCAL_RANK": str(rank)})
                h["expect_status"](run, 0)
                h["expect_files"](run, 1)
                runs[fixed, rank] = run
        files = {fx: runs[fx, 0].files + runs[fx, 1].files for fx in (False, True)}
        problem = (runs[False, 0], findings_of(tools, files[False]))
        problem[0].files = files[False]
        twin = (runs[True, 0], findings_of(tools, files[True]))
        twin[0].files = files[True]
        # In a job every step ends with its slowest rank.
        slow = max(runs[False, r].truth["findings.loop_ns"] for r in (0, 1))
        even = max(runs[True, r].truth["findings.loop_ns"] for r in (0, 1))
        errs = []
        f = judge(tools, "straggler", None, None, problem, twin, slow - even, errs)
        if f:
            steps = [w for w in f["where"] if w.get("step") is not None]
            if not steps or not all("rank 1" in (w.get("process") or "") for w in steps):
                errs.append("the places do not name rank 1 in steps: %s"
                            % json.dumps(f["where"])[:600])
        if errs:
            raise Fail("; ".join(errs))

    # ---- hardware metrics: below-roof and memory-bound

    def kernel_ns(tools, files, base):
        js = tools.export_json(files)
        return sum(k["total_ns"] for k in js.get("kernels", [])
                   if h["base_name"](k.get("name") or k.get("mangled", "")) == base), js

    def t_roof(tools):
        problem, twin = traced_pair(tools, "chase", ["--metrics", "--backtrace=kernel"])
        chase_ns, js = kernel_ns(tools, problem[0].files, "chase")
        stream_ns, tjs = kernel_ns(tools, twin[0].files, "stream_sum")
        for j, run in ((js, problem[0]), (tjs, twin[0])):
            if not (j.get("metrics") or {}).get("profiled"):
                raise Skip("no hardware metrics recorded (counters restricted or "
                           "unsupported?): %s" % tail(run.err))
        errs = []
        want = "findings.cu:%d" % problem[0].truth["findings.line.launch"]
        # The chase: neither memory- nor compute-bound; the coalesced read fixes it.
        judge(tools, "below-roof", "site_after", want, problem, twin, chase_ns - stream_ns, errs)
        # The coalesced read is memory-bound; the chase is not.
        judge(tools, "memory-bound", "site_after",
              "findings.cu:%d" % twin[0].truth["findings.line.launch"], twin, problem,
              chase_ns - stream_ns, errs)
        if errs:
            raise Fail("; ".join(errs))

    # ---- hardware metrics: FP32 GEMM-like work

    def t_gemm(tools):
        rc, out, err = run_cmd(["ldd", tools.app("findings_blas")], clean_env())
        if rc != 0 or "not found" in out:
            raise Skip("findings_blas cannot load cuBLAS here: %s" % tail(out or err))
        problem, twin = traced_pair(tools, "gemm", ["--metrics", "--backtrace=kernel"],
                                    app="findings_blas")
        js, tjs = tools.export_json(problem[0].files), tools.export_json(twin[0].files)
        for j, run in ((js, problem[0]), (tjs, twin[0])):
            if not (j.get("metrics") or {}).get("profiled"):
                raise Skip("no hardware metrics recorded (counters restricted or "
                           "unsupported?): %s" % tail(run.err))

        def gemm_ns(j):
            return sum(k["total_ns"] for k in j.get("kernels", [])
                       if "gemm" in (k.get("name") or k.get("mangled") or "").lower())

        fp32_ns, tf32_ns = gemm_ns(js), gemm_ns(tjs)
        if not fp32_ns or not tf32_ns:
            raise Fail("no cuBLAS GEMM kernels in the traces: %d ns, %d ns" % (fp32_ns, tf32_ns))
        errs = []
        want = "findings_blas.cu:%d" % problem[0].truth["findings.line.launch"]
        # The same cublasSgemm calls on TF32 tensor cores: what the fix saves
        # is the GEMM kernels' time, problem minus twin.
        f = judge(tools, "fp32-gemm", "site_after", want, problem, twin, fp32_ns - tf32_ns, errs)
        print("# fp32-gemm: cuBLAS FP32 %d ns, TF32 tensor cores %d ns (same calls)"
              % (fp32_ns, tf32_ns), flush=True)
        if errs:
            raise Fail("; ".join(errs))

    # ---- the measurement itself: records lost

    def t_incomplete(tools):
        n = 100000
        env, log = h["with_faults"](tools, write_suffix=".gpuprof", write_after=1,
                                    write_delay_ms=12000, write_calls=1)
        env.update({"GPUPROF_RING_CHUNKS": "2", "GPUPROF_TRACE": "kernel",
                    "GPUPROF_FLUSH_MS": "1000"})
        app = tools.app("burst_paced")
        run = h["traced"](tools, [app, str(n), "2000", "14000"], how="preload", env=env)
        h["expect_status"](run, 0)
        twin = h["traced"](tools, [app, str(n), "0", "0"], how="preload",
                           env={"GPUPROF_TRACE": "kernel"})
        h["expect_status"](twin, 0)
        js = tools.export_json(run.files)
        lost = js.get("lost", {}).get("total", 0)
        errs = []
        if not lost:
            raise Fail("the stalled writer lost no records (fault log: %s)"
                       % h["faults_injected"](log, "write-delay"))
        f = judge(tools, "incomplete-trace", None, None, (run, js.get("findings", [])),
                  (twin, findings_of(tools, twin.files)), None, errs)
        if f:
            if f["severity"] != "warning":
                errs.append("incomplete-trace is %s, expected warning" % f["severity"])
            if f["evidence"].get("lost_records") != lost:
                errs.append("lost_records %s, the trace lost %d"
                            % (f["evidence"].get("lost_records"), lost))
            others = [x for x in js.get("findings", []) if x["rule"] != "incomplete-trace"]
            if others and not all(x.get("incomplete") for x in others):
                errs.append("findings not marked incomplete: %s" % brief(others))
        print("# incomplete-trace: %d records lost" % lost, flush=True)
        if errs:
            raise Fail("; ".join(errs))

    # ---- two GPUs

    def t_staged_peer(tools):
        if gpu_count() < 2:
            raise Skip("needs 2 GPUs, found %d" % gpu_count())
        run = h["traced"](tools, [tools.app("peer_staged")])
        h["expect_status"](run, 0)
        try:
            twin = h["traced"](tools, [tools.app("peer")])
            h["expect_status"](twin, 0)
        except Skip as e:  # no P2P between the GPUs: no fixed twin to run
            print("# staged-peer-copy: no twin (%s)" % e)
            twin = None
        errs = []
        f = judge(tools, "staged-peer-copy", None, None, (run, findings_of(tools, run.files)),
                  (twin, findings_of(tools, twin.files)) if twin else None, None, errs)
        want = run.truth.get("memcpy.PtoP-staged.count")
        if f and f["evidence"].get("copies") != want:
            errs.append("%s copies in the finding, the program made %s"
                        % (f["evidence"].get("copies"), want))
        if errs:
            raise Fail("; ".join(errs))

    def t_nccl_exposed(tools):
        try:
            import torch  # noqa: F401
            import torch.distributed as dist
        except Exception as e:  # noqa: BLE001
            raise Skip("no PyTorch (%s)" % e)
        if not dist.is_available() or not dist.is_nccl_available():
            raise Skip("this PyTorch has no NCCL")
        if gpu_count() < 2:
            raise Skip("NCCL needs a GPU per rank; %d here" % gpu_count())
        script = os.path.join(h["ROOT"], "test", "apps", "torch_nccl_overlap.py")

        def job(mode, args=()):
            """Runs the 2-rank job under the recorder: (truth, trace files, findings)."""
            tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
            tools.tmpdirs.append(tmp)
            # The interpreter that imported torch here runs torchrun.
            rc, out, err = run_cmd([tools.wrapper, "run", "-o", os.path.join(tmp, "job-%q{RANK}"),
                                    "--report=none", "--backtrace=python",
                                    "--capture-range=cudaProfilerApi", "--", sys.executable,
                                    "-m", "torch.distributed.run", "--standalone",
                                    "--nproc-per-node", "2", script, mode] + list(args),
                                   clean_env(), h["TORCH_TIMEOUT"])
            truth, skip = h["parse_truth"](out)
            if skip is not None:
                raise Skip(skip)
            if rc != 0:
                raise Fail("%s: exit %d: %s" % (mode, rc, tail(err)))
            for r in (0, 1):
                for k in ("wall_ns", "steps", "reps", "line"):
                    if "nccl.%d.%s" % (r, k) not in truth:
                        raise Fail("%s: no TRUTH nccl.%d.%s; stdout %s" % (mode, r, k, tail(out)))
            files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp)
                           if f.endswith(".gpuprof"))
            # Sites deep enough to pass torch.distributed's frames to the script's line.
            rc, js, err = run_cmd([tools.analyzer, "export", "--format", "json",
                                   "--stack-depth", "8"] + files, clean_env(),
                                  h["TOOL_TIMEOUT"])
            if rc != 0:
                raise Fail("%s: export exited %d: %s" % (mode, rc, tail(err)))
            return truth, files, json.loads(js).get("findings", [])

        truth, files, fs = job("problem")
        steps, reps = truth["nccl.0.steps"], truth["nccl.0.reps"]
        ttruth, tfiles, tfs = job("fixed", ["--steps", str(steps), "--reps", str(reps)])
        # Every step of a job ends with its slowest rank.
        slow = max(truth["nccl.%d.wall_ns" % r] for r in (0, 1))
        fast = max(ttruth["nccl.%d.wall_ns" % r] for r in (0, 1))
        print("# nccl-exposed: %d steps of %d buckets, %d compute kernels a bucket "
              "(%d ns each, an all-reduce %d ns alone): problem %d ns, twin %d ns"
              % (steps, truth["nccl.0.buckets"], reps, truth["nccl.0.kernel_ns"],
                 truth["nccl.0.comm_ns"], slow, fast), flush=True)
        errs = []
        if (ttruth["nccl.0.steps"], ttruth["nccl.0.reps"]) != (steps, reps):
            errs.append("the twin ran %d steps of %d kernels, the problem %d of %d"
                        % (ttruth["nccl.0.steps"], ttruth["nccl.0.reps"], steps, reps))
        f = pick(fs, "nccl-exposed")
        if not f:
            errs.append("nccl-exposed did not fire; findings: %s" % brief(fs))
        else:
            print("# nccl-exposed: %s" % f["summary"], flush=True)
            if not f["subject"].startswith("rank "):
                errs.append("nccl-exposed names %r, not a rank" % f["subject"])
            if f["severity"] == "info":
                errs.append("nccl-exposed is only info on the problem: %s" % f["summary"])
            # The places, where the rule names any, must be the all-reduce's line.
            want = "torch_nccl_overlap.py:%d" % truth["nccl.0.line"]
            if any(w.get("site_after") for w in f["where"]):
                check_site(f, "site_after", want, errs)
            else:
                print("# nccl-exposed names no place: %s not checked" % want, flush=True)
        # The twin hides most of it: each all-reduce runs alone only while
        # the host issues it (and the last one of the last step); what it
        # leaves the rule measures there, and the twin saves the rest.
        t = pick(tfs, "nccl-exposed")
        print("# nccl-exposed on the twin: %s" % (t["summary"] if t else "none"), flush=True)
        if t and f and (t["stake_ns"] * 2 > f["stake_ns"] or t["stake_pct"] > 10):
            errs.append("nccl-exposed on the fixed twin: %d ns at stake (%.2f%% of its run), "
                        "more than half the problem's %d ns or 10%% of the run: %s"
                        % (t["stake_ns"], t["stake_pct"], f["stake_ns"], json.dumps(t)[:800]))
        if f:
            left = dict(f, stake_ns=f["stake_ns"] - (t["stake_ns"] if t else 0))
            check_stake("nccl-exposed (less the twin's)", left, slow - fast, errs)
        rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline",
                                "--fail-on=nccl-exposed"] + files, clean_env(),
                               h["TOOL_TIMEOUT"])
        if rc != 3:
            errs.append("report --fail-on=nccl-exposed exited %d on the problem, expected 3: %s"
                        % (rc, tail(err)))
        if errs:
            raise Fail("; ".join(errs))

    # ---- clean programs: nothing above info

    def clean(tools, files, what):
        fs = findings_of(tools, files)
        errs = []
        above = [f for f in fs if f["severity"] != "info"]
        if above:
            errs.append("%s: findings above info: %s"
                        % (what, json.dumps([{k: f[k] for k in ("rule", "severity", "stake_ns",
                                                                 "summary")} for f in above])[:1200]))
        rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline", "--fail-on=warning"]
                               + files, clean_env(), h["TOOL_TIMEOUT"])
        if rc != 0:
            errs.append("report --fail-on=warning exited %d: %s" % (rc, tail(err)))
        print("# %s: %d findings at info: %s" % (what, len(fs), brief(fs)), flush=True)
        if errs:
            raise Fail("; ".join(errs))

    def t_clean_graph(tools):
        rc, out, err = run_cmd(["bash", os.path.join(h["ROOT"], "bench", "build.sh"), tools.build],
                               clean_env(), 600)
        app = os.path.join(tools.build, "bench", "graph_replay")
        if not os.access(app, os.X_OK):
            raise Fail("bench/build.sh did not build %s (exit %d): %s" % (app, rc, tail(err)))
        # Recorded as whole graphs (--graph-trace=graph), the mode for graph
        # replays: a record per node costs the host about 0.6 us a kernel, and
        # a replay loop of tiny kernels then starves the GPU under tracing.
        run = h["traced"](tools, [app, "2000", "100"], opts=["--graph-trace=graph"])
        # A benchmark: it prints BENCH lines, no TRUTH, so only its status is checked.
        if run.rc != 0:
            raise Fail("graph_replay exited %d; %s" % (run.rc, run.context()))
        h["expect_files"](run, 1)
        clean(tools, run.files, "graph_replay")

    def t_clean_train(tools):
        try:
            import torch  # noqa: F401
        except Exception as e:  # noqa: BLE001
            raise Skip("no PyTorch (%s)" % e)
        script = os.path.join(h["ROOT"], "bench", "train_step.py")
        tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
        tools.tmpdirs.append(tmp)
        rc, out, err = run_cmd([tools.wrapper, "run", "-o", os.path.join(tmp, "trace-%p"),
                                "--report=none", "--capture-range=cudaProfilerApi", "--",
                                sys.executable, script, "--careful", "40", "10"],
                               clean_env(), h["TORCH_TIMEOUT"])
        if rc != 0:
            raise Fail("train_step.py exited %d: %s" % (rc, tail(err)))
        files = sorted(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".gpuprof"))
        if len(files) != 1:
            raise Fail("%d trace files, expected 1" % len(files))
        clean(tools, files, "train_step --careful")

    return ([("findings-" + mode, pair(mode)) for mode in CASES] +
            [("findings-clean-graph", t_clean_graph), ("findings-clean-train", t_clean_train)] +
            [("findings-straggler", t_straggler), ("findings-roof", t_roof),
             ("findings-gemm", t_gemm),
             ("findings-incomplete", t_incomplete), ("findings-staged-peer", t_staged_peer),
             ("findings-nccl-exposed", t_nccl_exposed)])
