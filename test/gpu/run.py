#!/usr/bin/env python3
"""End-to-end GPU tests: run the programs in test/apps under the recorder and
compare what was traced with what each program says it did.

    python3 test/gpu/run.py BUILD_DIR [--only NAME] [--keep] [--list]

Each program prints its ground truth as "TRUTH <key> <value>" lines (see
test/apps/common.h); this script records it into a fresh temporary directory,
reads the trace back with `gpuprof-analyze export --format json` (and csv
where single records matter) and compares.  Every test also requires that
`gpuprof-analyze report` succeeds and that no record was lost.

Output, one line per test:

    ok - gpu NAME
    not ok - gpu NAME: what differed (expected vs got)
    skip - gpu NAME # reason

Without an NVIDIA GPU every test is reported as skipped and the exit status
is 0; otherwise it is 1 if any test failed.  Python 3.8+, standard library
only.
"""

import argparse
import collections
import csv
import errno
import fnmatch
import glob
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RUN_TIMEOUT = 120       # seconds per traced program
TORCH_TIMEOUT = 600     # importing torch and starting CUDA takes a while
TOOL_TIMEOUT = 120      # seconds per analyzer call

# Environment that would change how (or whether) a program is traced.
TRACE_ENV = ("LD_PRELOAD", "CUDA_INJECTION64_PATH", "NVTX_INJECTION64_PATH")


class Fail(Exception):
    """The test failed; the message says what differed."""


class Skip(Exception):
    """The test cannot run here; the message says why."""


# ---------------------------------------------------------------- processes

def run_cmd(argv, env=None, timeout=RUN_TIMEOUT):
    """Runs argv in its own session; returns (status, stdout, stderr).

    On timeout the whole process group (the program and any children) is
    killed and the test fails."""
    try:
        p = subprocess.Popen(argv, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=env, start_new_session=True)
    except OSError as e:
        raise Fail("cannot run %s: %s" % (argv[0], e))
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except OSError:
            pass
        out, err = p.communicate()
        raise Fail("%s did not finish within %d s; stderr ends: %s"
                   % (" ".join(argv), timeout, tail(err)))
    return p.returncode, out.decode(errors="replace"), err.decode(errors="replace")


def tail(data, n=600):
    if isinstance(data, bytes):
        data = data.decode(errors="replace")
    data = data.strip()
    return repr(data[-n:]) if data else "(empty)"


def clean_env():
    env = dict(os.environ)
    for k in list(env):
        if k in TRACE_ENV or k.startswith("GPUPROF_"):
            del env[k]
    return env


# ---------------------------------------------------------------- tools

class Tools:
    def __init__(self, build):
        self.build = os.path.abspath(build)
        self.wrapper = os.path.join(self.build, "bin", "gpuprof")
        self.analyzer = os.path.join(self.build, "bin", "gpuprof-analyze")
        self.lib = os.path.join(self.build, "lib", "libgpuprof.so")
        self.apps = os.path.join(self.build, "test", "apps")
        self.tmpdirs = []       # trace directories of the current test

    def require(self):
        for p in (self.wrapper, self.analyzer, self.lib):
            if not os.path.exists(p):
                raise Fail("%s is missing (run make)" % p)

    def app(self, name):
        p = os.path.join(self.apps, name)
        if not os.access(p, os.X_OK):
            raise Fail("%s is missing (run make apps)" % p)
        return p

    def export_json(self, files, fmt="json"):
        """The JSON document of `export --format FMT` (json or chrome)."""
        rc, out, err = run_cmd([self.analyzer, "export", "--format", fmt] + files,
                               clean_env(), TOOL_TIMEOUT)
        if rc != 0:
            raise Fail("export --format %s exited %d: %s" % (fmt, rc, tail(err)))
        try:
            return json.loads(out)
        except ValueError as e:
            raise Fail("export --format %s printed invalid JSON (%s): %s" % (fmt, e, tail(out)))

    def export_csv(self, files):
        rc, out, err = run_cmd([self.analyzer, "export", "--format", "csv"] + files,
                               clean_env(), TOOL_TIMEOUT)
        if rc != 0:
            raise Fail("export --format csv exited %d: %s" % (rc, tail(err)))
        return list(csv.DictReader(io.StringIO(out)))

    def report(self, files):
        """Runs `report`; fails unless it exits 0 with the activity summary."""
        rc, out, err = run_cmd([self.analyzer, "report"] + files, clean_env(), TOOL_TIMEOUT)
        if rc != 0:
            raise Fail("report exited %d: %s" % (rc, tail(err)))
        if "CUDA activity summary" not in out:
            raise Fail("report has no 'CUDA activity summary': %s" % tail(out))
        return out


class Run:
    """One traced run: status, output, parsed truth and trace files."""

    def __init__(self, rc, out, err, tmp):
        self.rc, self.out, self.err = rc, out, err
        self.files = sorted(glob.glob(os.path.join(tmp, "*.gpuprof")))
        self.truth, self.skip = parse_truth(out)

    def context(self):
        return "stderr ends: %s" % tail(self.err)


def traced(tools, argv, how="wrapper", opts=(), env=None, timeout=RUN_TIMEOUT,
           report="none", name="trace-%p"):
    """Runs argv under the recorder into a new temporary directory.

    how: "wrapper" (gpuprof run OPTS -- argv), or without the wrapper through
    "preload" (LD_PRELOAD), "inject" (CUDA_INJECTION64_PATH) or "both".
    name: the output template's file name (in a new temporary directory)."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    template = os.path.join(tmp, name)
    e = clean_env()
    e.update(env or {})
    if how == "wrapper":
        cmd = [tools.wrapper, "run", "-o", template, "--report=" + report] + list(opts) + ["--"] + argv
    else:
        e["GPUPROF_OUTPUT"] = template
        if how in ("preload", "both"):
            # The recorder first, then what the test preloads (the fault shim).
            e["LD_PRELOAD"] = ":".join([tools.lib] + ([e["LD_PRELOAD"]] if e.get("LD_PRELOAD") else []))
        if how in ("inject", "both"):
            e["CUDA_INJECTION64_PATH"] = tools.lib
        cmd = argv
    rc, out, err = run_cmd(cmd, e, timeout)
    r = Run(rc, out, err, tmp)
    if r.skip is not None:
        raise Skip(r.skip)
    return r


def parse_truth(out):
    """Returns ({key: int or float}, skip reason or None) from program output."""
    truth, skip = {}, None
    for line in out.splitlines():
        if line.startswith("SKIP ") and skip is None:
            skip = line[5:].strip()
        m = re.match(r"TRUTH (\S+) (\S+)$", line)
        if not m:
            continue
        key, val = m.group(1), m.group(2)
        if key in truth:
            raise Fail("program printed TRUTH %s twice" % key)
        truth[key] = float(val) if re.search(r"[.eE]", val) else int(val)
    return truth, skip


# ---------------------------------------------------------------- checks

def expect_status(run, want):
    if run.rc != want:
        raise Fail("exit status %d, expected %d; %s" % (run.rc, want, run.context()))
    if not run.truth:
        raise Fail("program printed no TRUTH lines; stdout: %s" % tail(run.out))


def expect_files(run, n):
    if len(run.files) != n:
        raise Fail("%d trace files, expected %d: %s; %s"
                   % (len(run.files), n, [os.path.basename(f) for f in run.files], run.context()))


def file_pid(path):
    m = re.search(r"trace-(\d+)\.gpuprof$", path)
    return int(m.group(1)) if m else None


def health(js, finished=True):
    """Problems every trace must be free of, as a list of strings.

    finished=False is for a killed process: no end record, and the tail may
    be cut (the reader stops at the last whole chunk)."""
    errs = []
    lost = js.get("lost", {})
    if lost.get("total", 0) != 0:
        errs.append("lost records: %s" % json.dumps(lost, sort_keys=True))
    for f in js.get("files", []):
        name = os.path.basename(f.get("path", "?"))
        if f.get("truncated") and finished:
            errs.append("%s: truncated (%s bytes unread)" % (name, f.get("bytes_unread")))
        if f.get("finished") != finished:
            errs.append("%s: finished=%s, expected %s" % (name, f.get("finished"), finished))
    if not js.get("devices"):
        errs.append("no device records")
    if not js.get("processes"):
        errs.append("no process records")
    return errs


def check_process(js, path, app):
    """The single process of a one-file trace: pid as in the file name
    (%p expanded), cmdline naming the program."""
    procs = js.get("processes", [])
    if len(procs) != 1:
        return ["%d process records, expected 1" % len(procs)]
    errs = []
    pid = file_pid(path)
    if pid is not None and procs[0].get("pid") != pid:
        errs.append("process pid %s but file %s" % (procs[0].get("pid"), os.path.basename(path)))
    if app not in procs[0].get("cmdline", ""):
        errs.append("cmdline %r does not name %s" % (procs[0].get("cmdline"), app))
    return errs


def base_name(name):
    """Demangled kernel name -> the bare (qualified) function name:
    'void tscale<float>(float*, float, int)' -> 'tscale',
    'gp::reduce_sum(float const*, float*, int)' -> 'gp::reduce_sum'."""
    anon = "(anonymous namespace)"
    s, depth = name.replace(anon, "{anonymous}"), 0
    for i, ch in enumerate(s):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and i > 0:
            s = s[:i]
            break
    s = s.strip()
    if s.endswith(">"):
        depth = 0
        for i in range(len(s) - 1, -1, -1):
            if s[i] == ">":
                depth += 1
            elif s[i] == "<":
                depth -= 1
                if depth == 0:
                    s = s[:i]
                    break
    s = s.split(" ")[-1].replace("{anonymous}", anon)
    return s or name


def api_name(name):
    """'cudaLaunchKernel_v7000' -> 'cudaLaunchKernel'."""
    return re.sub(r"_v\d+$", "", name)


def kernels_by_base(js):
    agg = collections.OrderedDict()
    for k in js.get("kernels", []):
        b = base_name(k.get("name") or k.get("mangled", ""))
        a = agg.setdefault(b, {"count": 0, "in_graph": 0, "total_ns": 0,
                               "min_ns": None, "max_ns": 0})
        a["count"] += k["count"]
        a["in_graph"] += k.get("in_graph", 0)
        a["total_ns"] += k["total_ns"]
        a["max_ns"] = max(a["max_ns"], k["max_ns"])
        a["min_ns"] = k["min_ns"] if a["min_ns"] is None else min(a["min_ns"], k["min_ns"])
    return agg


def select_mode(truth, mode):
    """Keeps the keys for graph-trace mode `mode` ("node"/"graph"), prefix
    removed, plus the keys that hold in every mode."""
    out = {}
    for k, v in truth.items():
        m = re.match(r"(node|graph)\.(.*)$", k)
        if not m:
            out[k] = v
        elif m.group(1) == mode:
            out[m.group(2)] = v
    return out


def csv_bytes_count(rows, kind, size):
    n = 0
    for r in rows:
        if r.get("kind", "").lower() != "memcpy":
            continue
        if r.get("copy_kind", "").lower() != kind.lower():
            continue
        try:
            b = int(r.get("bytes", ""))
        except ValueError:
            continue
        n += b == size
    return n


def compare(truth, js, rows=None, strict=True):
    """Differences between truth and a JSON export (rows: the CSV export,
    for memcpy.*.size.* keys), as a list of strings.  Truth keys:

      kernel.count.NAME, kernel.in_graph.NAME   exact, NAME the base name
      kernel.min_ns.NAME                        lower bound of min_ns
      kernel.total / kernel.total.min           counts.kernel exact / lower bound
      kernel.match.SUB.count / .in_graph        some kernel whose name contains
                                                SUB has exactly these counts
      memcpy.KIND.count / .bytes                exact, per kind
      memcpy.KIND.size.BYTES                    exact number of KIND records of
                                                exactly BYTES bytes
      memset.count / .bytes, count.KIND         exact
      streams.min, api_threads.min, devices.min lower bounds
      api.count.NAME / api.threads.NAME         exact (NAME without _vNNNN)
      graph_nodes.LABEL.nodes / .kernels        the graphs entries traced per
                                                node, as a set of (nodes,
                                                kernels) pairs
      graphs.LABEL.launches                     the launches of the graphs
                                                entries traced whole

    strict: the truth is the program's complete activity, so anything
    traced that the truth does not list is a difference too."""
    errs = []
    kern = kernels_by_base(js)
    counts = js.get("counts", {})
    memcpy = {m["kind"]: m for m in js.get("memcpy", [])}
    memset = {f: sum(m[f] for m in js.get("memset", [])) for f in ("count", "bytes")}
    apis = collections.defaultdict(lambda: {"count": 0, "threads": 0})
    for a in js.get("api", []):
        e = apis[api_name(a["name"])]
        e["count"] += a["count"]
        e["threads"] = max(e["threads"], a.get("threads", 0))
    matches = collections.defaultdict(dict)     # substring -> {count, in_graph}
    shapes = collections.defaultdict(dict)      # graph label -> {nodes, kernels}
    launches = []

    def differ(what, want, got):
        if want != got:
            errs.append("%s: expected %s, got %s" % (what, want, got))

    for key, want in sorted(truth.items()):
        parts = key.split(".")
        m = re.match(r"kernel\.(count|in_graph|min_ns)\.(.+)$", key)
        if m:
            field, name = m.group(1), m.group(2)
            got = kern.get(name)
            if field == "min_ns":
                if got is None or got["min_ns"] < want:
                    errs.append("kernel %s min_ns: expected >= %d, got %s"
                                % (name, want, got and got["min_ns"]))
            else:
                differ("kernel %s %s" % (name, field), want, got[field] if got else 0)
        elif key == "kernel.total":
            differ("counts.kernel", want, counts.get("kernel"))
            differ("sum of kernels[].count", want, sum(k["count"] for k in js.get("kernels", [])))
        elif key == "kernel.total.min":
            if counts.get("kernel", 0) < want:
                errs.append("counts.kernel: expected >= %d, got %s" % (want, counts.get("kernel")))
        elif len(parts) == 4 and parts[0] == "kernel" and parts[1] == "match":
            matches[parts[2]][parts[3]] = want
        elif len(parts) == 3 and parts[0] == "memcpy" and parts[2] in ("count", "bytes"):
            differ("memcpy %s %s" % (parts[1], parts[2]), want,
                   memcpy.get(parts[1], {}).get(parts[2], 0))
        elif len(parts) == 4 and parts[0] == "memcpy" and parts[2] == "size":
            if rows is None:
                raise Fail("internal: %s needs the csv export" % key)
            differ("memcpy %s records of exactly %s bytes" % (parts[1], parts[3]), want,
                   csv_bytes_count(rows, parts[1], int(parts[3])))
        elif key in ("memset.count", "memset.bytes"):
            differ(key, want, memset.get(parts[1], 0))
        elif len(parts) == 2 and parts[0] == "count":
            differ("counts.%s" % parts[1], want, counts.get(parts[1]))
        elif key in ("streams.min", "api_threads.min"):
            got = js.get(parts[0], 0)
            if got < want:
                errs.append("%s: expected >= %d, got %d" % (parts[0], want, got))
        elif key == "devices.min":
            if len(js.get("devices", [])) < want:
                errs.append("devices: expected >= %d, got %d" % (want, len(js.get("devices", []))))
        elif len(parts) == 3 and parts[0] == "api" and parts[1] in ("count", "threads"):
            differ("api %s %s" % (parts[2], parts[1]), want, apis[parts[2]][parts[1]] if parts[2] in apis else 0)
        elif len(parts) == 3 and parts[0] == "graph_nodes" and parts[2] in ("nodes", "kernels"):
            shapes[parts[1]][parts[2]] = want
        elif len(parts) == 3 and parts[0] == "graphs" and parts[2] == "launches":
            launches.append(want)
        else:
            raise Fail("unknown TRUTH key %s" % key)

    # Name-agnostic kernels: some kernel whose name contains the substring
    # ran exactly `count` times (and `in_graph` of them inside graphs).
    for sub, want in sorted(matches.items()):
        cands = [k for k in js.get("kernels", []) if sub.lower() in k.get("name", "").lower()]
        hit = [k for k in cands
               if k["count"] == want.get("count", k["count"])
               and k.get("in_graph", 0) == want.get("in_graph", k.get("in_graph", 0))]
        if not hit:
            errs.append("no kernel named *%s* with %s; candidates: %s"
                        % (sub, want, [(k["name"][:80], k["count"], k.get("in_graph", 0))
                                       for k in cands[:8]]))

    if strict or shapes:
        want = sorted((s.get("nodes"), s.get("kernels")) for s in shapes.values())
        got = sorted((g.get("nodes"), g.get("kernels")) for g in js.get("graphs", []) if g.get("nodes"))
        differ("graph_nodes (nodes of any kind, kernel records)", want, got)
    if strict or launches:
        differ("graphs launches", sorted(launches),
               sorted(g.get("launches") for g in js.get("graphs", []) if g.get("launches")))

    if strict:
        for name, k in kern.items():
            if "kernel.count." + name not in truth:
                errs.append("unexpected kernel %s: %d records" % (name, k["count"]))
        for kind, m in memcpy.items():
            if m.get("count") and "memcpy.%s.count" % kind not in truth:
                errs.append("unexpected memcpy %s: %d records" % (kind, m["count"]))
        implied = {
            "memcpy": sum(v for k, v in truth.items() if re.match(r"memcpy\.[^.]+\.count$", k)),
            "memset": truth.get("memset.count", 0),
            "graph": 0,
        }
        for what, want in implied.items():
            if "count." + what not in truth:
                differ("counts." + what, want, counts.get(what))
        if "memset.count" not in truth:
            differ("memset.count", 0, memset.get("count", 0))
    return errs


def check_run(tools, run, app, status=0, finished=True, truth=None):
    """The checks of a one-process program: exit status, one trace file,
    trace health, process identity, the complete truth (run.truth unless
    given), report.  Returns the JSON export."""
    expect_status(run, status)
    expect_files(run, 1)
    js = tools.export_json(run.files)
    errs = health(js, finished)
    errs += check_process(js, run.files[0], app)
    errs += compare(run.truth if truth is None else truth, js)
    if errs:
        raise Fail("; ".join(errs))
    tools.report(run.files)
    return js


# ---------------------------------------------------------------- tests

def t_basic_shared(tools):
    # With --report=summary the wrapper prints the report after the program.
    app = tools.app("basic_shared")
    run = traced(tools, [app], report="summary")
    check_run(tools, run, "basic_shared")
    if "CUDA activity summary" not in run.out:
        raise Fail("gpuprof run --report=summary printed no summary; stdout ends %s" % tail(run.out))


def simple(app_name, how="wrapper"):
    def t(tools):
        app = tools.app(app_name)
        run = traced(tools, [app], how=how)
        check_run(tools, run, app_name)
    return t


def t_multistream(tools):
    app = tools.app("multistream")
    run = traced(tools, [app], opts=["--trace=kernel,memcpy,memset,graph,api"])
    check_run(tools, run, "multistream")


def graphs_mode(mode):
    def t(tools):
        app = tools.app("graphs")
        run = traced(tools, [app], opts=["--graph-trace=" + mode])
        check_run(tools, run, "graphs", truth=select_mode(run.truth, mode))
    return t


def t_timing(tools):
    """Traced kernel time against CUDA events around each launch."""
    app = tools.app("timing")
    run = traced(tools, [app])
    expect_status(run, 0)
    events = {k: v for k, v in run.truth.items() if k.startswith("event_")}
    rest = {k: v for k, v in run.truth.items() if not k.startswith("event_")}
    js = check_run(tools, run, "timing", truth=rest)
    errs = timing_errors(events, js) + stream_order(tools.export_csv(run.files))
    if errs:
        raise Fail("; ".join(errs))


def timing_errors(events, js):
    """The event pairs bracket each kernel, so per kernel name: traced total
    <= events total (+1% and 10 us per launch for granularity), traced total
    >= 90% of events (launch gaps inside a pair), longest traced launch <=
    longest event pair (+1% + 10 us)."""
    kern = kernels_by_base(js)
    errs = []
    for key, ev in sorted(events.items()):
        kind, name = key.split(".", 1)
        k = kern.get(name)
        if not k:
            errs.append("no kernel %s" % name)
        elif kind == "event_ms":
            traced_ms = k["total_ns"] / 1e6
            hi = ev * 1.01 + k["count"] * 0.010
            lo = ev * 0.90
            if not lo <= traced_ms <= hi:
                errs.append("%s total %.3f ms, events %.3f ms (allowed %.3f..%.3f)"
                            % (name, traced_ms, ev, lo, hi))
        elif kind == "event_max_ms":
            if k["max_ns"] / 1e6 > ev * 1.01 + 0.010:
                errs.append("%s longest %.3f ms > longest event pair %.3f ms"
                            % (name, k["max_ns"] / 1e6, ev))
        else:
            raise Fail("unknown TRUTH key %s" % key)
    return errs


def stream_order(rows):
    """Kernel records of one stream in start order must not overlap and
    must have start <= end, duration = end - start."""
    errs, by_stream = [], collections.defaultdict(list)
    for r in rows:
        if r.get("kind", "").lower() != "kernel":
            continue
        s, e, d = int(r["start_ns"]), int(r["end_ns"]), int(r["duration_ns"])
        if not 0 < s <= e or d != e - s:
            errs.append("kernel %s: start %d end %d duration %d" % (r["name"][:40], s, e, d))
        by_stream[(r["pid"], r["device"], r["context"], r["stream"])].append((s, e, r["name"]))
    for key, ks in by_stream.items():
        ks.sort()
        for (s0, e0, n0), (s1, e1, n1) in zip(ks, ks[1:]):
            if s1 < e0 - 100:
                errs.append("stream %s: %s [%d, %d] overlaps %s starting %d"
                            % (key[3], n0[:40], s0, e0, n1[:40], s1))
                break
    return errs[:5]


def t_fork_exec(tools):
    """Parent and exec'd child each get their own complete trace; the plain
    forked child (no exec, no CUDA) gets none and does not hang."""
    app = tools.app("fork_exec")
    run = traced(tools, [app])
    expect_status(run, 0)
    t = dict(run.truth)
    missing = [k for k in ("pid", "fork_child.pid", "exec_child.pid") if k not in t]
    if missing:
        raise Fail("the parent printed no TRUTH %s; stdout %s" % (", ".join(missing), tail(run.out)))
    pid, fpid, epid = t.pop("pid"), t.pop("fork_child.pid"), t.pop("exec_child.pid")
    child = {k[len("child."):]: v for k, v in t.items() if k.startswith("child.")}
    parent = {k: v for k, v in t.items() if not k.startswith("child.")}
    if not child:
        raise Fail("the exec'd child printed no truth; stdout %s" % tail(run.out))
    expect_files(run, 2)
    by_pid = {file_pid(f): f for f in run.files}
    if sorted(by_pid) != sorted([pid, epid]):
        raise Fail("trace files for pids %s, expected parent %d and exec'd child %d "
                   "(forked child %d must have none)" % (sorted(by_pid), pid, epid, fpid))
    errs = []
    for who, p, truth in (("parent", pid, parent), ("exec'd child", epid, child)):
        js = tools.export_json([by_pid[p]])
        e = health(js) + check_process(js, by_pid[p], "fork_exec")
        e += compare(truth, js)
        errs += ["%s: %s" % (who, x) for x in e]
    # Both files merge into one model.
    js = tools.export_json(run.files)
    got_pids = sorted(p.get("pid") for p in js.get("processes", []))
    if got_pids != sorted([pid, epid]):
        errs.append("merged processes %s, expected %s" % (got_pids, sorted([pid, epid])))
    total = parent["kernel.total"] + child["kernel.total"]
    if js.get("counts", {}).get("kernel") != total:
        errs.append("merged counts.kernel: expected %d, got %s" % (total, js.get("counts", {}).get("kernel")))
    if errs:
        raise Fail("; ".join(errs))
    tools.report(run.files)


def no_reset(args, status):
    def t(tools):
        app = tools.app("no_reset")
        run = traced(tools, [app] + args)
        truth = dict(run.truth)
        want = truth.pop("exit_status", None)
        if want != status:
            raise Fail("program reported exit status %s, expected %d" % (want, status))
        check_run(tools, run, "no_reset", status=status, truth=truth)
    return t


def t_crash(tools):
    """SIGKILL after the work and several flush intervals: the trace has no
    end but reads, with everything done before the sleep."""
    app = tools.app("crash")
    run = traced(tools, [app], env={"GPUPROF_FLUSH_MS": "200"})
    check_run(tools, run, "crash", status=128 + signal.SIGKILL, finished=False)


def t_trace_kernel_only(tools):
    """--trace=kernel: kernels exact, nothing else recorded."""
    app = tools.app("basic_shared")
    run = traced(tools, [app], opts=["--trace=kernel"])
    truth = {k: v for k, v in run.truth.items() if k.startswith("kernel.")}
    truth.update({"count.memcpy": 0, "count.memset": 0, "count.api": 0, "count.graph": 0})
    check_run(tools, run, "basic_shared", truth=truth)


def t_torch(tools):
    """PyTorch ops (see test/apps/torch_ops.py); prints the full report."""
    script = os.path.join(ROOT, "test", "apps", "torch_ops.py")
    run = traced(tools, [sys.executable, script], timeout=TORCH_TIMEOUT)
    expect_status(run, 0)
    if not run.files:
        raise Fail("no trace file; %s" % run.context())
    js = tools.export_json(run.files)
    rows = tools.export_csv(run.files)
    errs = health(js) + compare(run.truth, js, rows, strict=False)
    report = tools.report(run.files)
    print("# ---- begin PyTorch report: gpuprof-analyze report (%s) ----" % sys.executable)
    sys.stdout.write(report if report.endswith("\n") else report + "\n")
    print("# ---- end PyTorch report ----", flush=True)
    if errs:
        raise Fail("; ".join(errs))


def capture(how, end, api=False):
    """Capture ranges: only the launches inside the range(s) are recorded;
    the program prints exactly those as its truth.  api: API calls traced
    too; the range(s) hold the launch calls of their kernels
    (api.count.cudaLaunchKernel), and no API call that a run without a
    range does not record."""
    def t(tools):
        app = tools.app("capture")
        rng = "cudaProfilerApi" if how == "profiler" else "nvtx:capture"
        opts = [] if end == "all" else ["--capture-range=" + rng, "--capture-range-end=" + end]
        trace = "--trace=kernel,memcpy,memset,nvtx" + (",api" if api else "")
        run = traced(tools, [app, how, end], opts=opts + [trace])
        truth = run.truth if api else {k: v for k, v in run.truth.items()
                                       if not k.startswith("api.")}
        js = check_run(tools, run, "capture", truth=truth)
        if not api:
            return
        # The calls of a run without a range: the range's are among them.
        base = traced(tools, [app, how, "all"], opts=[trace])
        expect_status(base, 0)
        bjs = tools.export_json(base.files)
        known = set(api_name(a["name"]) for a in bjs.get("api", []))
        got = collections.Counter()
        for a in js.get("api", []):
            got[api_name(a["name"])] += a["count"]
        extra = sorted(n for n in got if n not in known)
        if extra:
            raise Fail("API calls a run without a range does not record: %s" % extra)
        print("# capture %s %s: %d kernels, %d API calls in the range(s) (%s)"
              % (how, end, js.get("counts", {}).get("kernel", 0), sum(got.values()),
                 ", ".join("%s %d" % kv for kv in sorted(got.items()))))
    return t


def t_callsites(tools):
    """--backtrace=kernel: each launch is attributed to the function that
    made it (two call sites of one kernel, and a graph's capture site)."""
    app = tools.app("callsites")
    run = traced(tools, [app], opts=["--backtrace=kernel"])
    sites = {k[len("stack."):]: v for k, v in run.truth.items() if k.startswith("stack.")}
    truth = {k: v for k, v in run.truth.items() if not k.startswith("stack.")}
    js = check_run(tools, run, "callsites", truth=truth)
    errs = []
    for fn, want in sorted(sites.items()):
        got = sum(s.get("launches", 0) for s in js.get("launch_sites", [])
                  if any(fn in f for f in s.get("frames", [])))
        if got != want:
            errs.append("launches from %s: expected %d, got %d" % (fn, want, got))
    # Built with -g: libdw turns the caller frames into file:line.
    frames = [f for s in js.get("launch_sites", []) for f in s.get("frames", [])]
    if not any("site_a" in f and "callsites.cu:" in f for f in frames):
        errs.append("no file:line (callsites.cu:N) on the site_a frame")
    if errs:
        raise Fail("; ".join(errs) + "; launch_sites: %s" % json.dumps(js.get("launch_sites", []))[:1500])


def t_callsites_buildid(tools):
    """The trace records each module's absolute path and build-id: its
    frames are named from the very file that ran, wherever the report runs;
    a file of another build at that path is refused (module+0xOFFSET and
    the reason), and --symbol-path finds the right one elsewhere."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    app = os.path.join(tmp, "callsites")
    shutil.copy(tools.app("callsites"), app)
    run = traced(tools, [app], opts=["--backtrace=kernel"])
    files = [os.path.abspath(f) for f in run.files]

    def report(*extra):
        rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline"] + list(extra) + files)
        if rc != 0:
            raise Fail("report exited %d: %s" % (rc, err[-500:]))
        return out

    # From another directory: the program's path is absolute, its build-id checked.
    cwd = os.getcwd()
    os.chdir("/")
    try:
        out = report()
    finally:
        os.chdir(cwd)
    if "site_a (callsites.cu:" not in out or "unverified" in out:
        raise Fail("the program's frames are not named as proven: %s" % out[-2000:])
    if re.search(r"^  callsites: ", out, re.M):
        raise Fail("the program's module was refused: %s" % out[-2000:])
    # Another build at the recorded path: never its names.  What the process
    # itself said at record time (dladdr's "function+0xOFF (module)") stays,
    # but no file:line or name may come from the other file.
    saved = os.path.join(tmp, "saved")
    os.mkdir(saved)
    shutil.move(app, os.path.join(saved, "callsites"))
    shutil.copy(tools.app("callsites_static"), app)
    out = report()
    if ("callsites.cu:" in out or re.search(r"\bsite_a(?!\+0x[0-9a-f]+ \(callsites\))", out)
            or ("callsites+0x" not in out and "(callsites)" not in out)
            or "is another build" not in out):
        raise Fail("another build at the recorded path was used: %s" % out[-2000:])
    out = report("--symbol-path", saved)
    if "site_a (callsites.cu:" not in out:
        raise Fail("--symbol-path did not find the program: %s" % out[-2000:])
    print("# callsites: named from the build-id's file, refused from another build")


def t_torch_compile_sites(tools):
    """torch.compile (test/apps/torch_compile.py, --backtrace=python): the
    Triton kernels Inductor generates are launched through Triton's and
    Inductor's launchers; by default their sites start at the generated
    code with the user's line among the frames, no site starts in Triton,
    Inductor or a <string> shim, and --full-stacks keeps those frames."""
    script = os.path.join(ROOT, "test", "apps", "torch_compile.py")
    run = traced(tools, [sys.executable, script], opts=["--backtrace=python"],
                 timeout=TORCH_TIMEOUT)
    if run.skip:
        raise Skip(run.skip)
    expect_status(run, 0)
    (key, calls), = [(k, v) for k, v in run.truth.items() if k.startswith("compile.site.")]
    where, fn = key[len("compile.site."):].rsplit(".", 1)
    user = "%s %s" % (where, fn)
    js = tools.export_json(run.files)
    errs = health(js)
    sites = [s for s in js.get("launch_sites", [])
             if any(k.get("name", "").startswith("triton") for k in s.get("kernels", []))]
    if not sites:
        raise Fail("no launch site of a Triton kernel: %s" % json.dumps(js.get("launch_sites", []))[:1500])
    # Python frames show the file's base name: the launchers' files by name.
    framework = re.compile(r"(^|/|\u2190 )(static_triton_launcher\.py|triton_heuristics\.py|"
                           r"autotuner\.py|jit\.py|compiler\.py|output_code\.py|compile_fx\.py|"
                           r"eval_frame\.py|<string>|module\.py:\d+ _)")
    at_user = 0
    for s in sites:
        fr = s.get("frames", [])
        if fr and framework.search(fr[0]):
            errs.append("a Triton kernel's site starts in the framework: %s" % fr[:4])
        if user in fr:
            at_user += s.get("launches", 0)
    if at_user < calls:
        errs.append("%d Triton launches have %s among their frames, expected at least %d: %s"
                    % (at_user, user, calls, [s.get("frames", [])[:4] for s in sites][:4]))
    rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline", "--full-stacks"] + run.files)
    if rc != 0 or not any(framework.search(l) for l in out.splitlines()):
        errs.append("--full-stacks shows no framework frame (exit %d): %s"
                    % (rc, [s.get("frames", [])[:6] for s in sites][:3]))
    if errs:
        raise Fail("; ".join(errs))
    print("# torch.compile: %d Triton launches sited at the user's %s; sites %s"
          % (at_user, user, [s.get("frames", [])[:4] for s in sites][:3]))


def t_callsites_static(tools):
    """Static cudart (nvcc's default): each launch site starts at the
    program's own function, past the runtime's frames and the launch stub,
    with exact counts."""
    app = tools.app("callsites_static")
    run = traced(tools, [app], opts=["--backtrace=kernel"])
    sites = {k[len("stack."):]: v for k, v in run.truth.items() if k.startswith("stack.")}
    truth = {k: v for k, v in run.truth.items() if not k.startswith("stack.")}
    js = check_run(tools, run, "callsites_static", truth=truth)
    got = collections.Counter()
    for s in js.get("launch_sites", []):
        frames = s.get("frames", [])
        first = frames[0] if frames else ""
        fn = next((f for f in sites if first.startswith(f)), None)
        if fn is None:
            raise Fail("a site starts at %r, not at one of the program's functions; "
                       "launch_sites: %s" % (first, json.dumps(js.get("launch_sites"))[:1500]))
        got[fn] += s.get("launches", 0)
    if dict(got) != sites:
        raise Fail("launches per first frame %s, expected %s" % (dict(got), sites))


def nvtx_errors(truth, js):
    """nvtx.NAME.count / nvtx.NAME.kernels truth against the JSON "nvtx"
    entries (counts and inclusive kernel counts)."""
    ranges = {r["name"]: r for r in js.get("nvtx", [])}
    errs = []
    for key, want in sorted(truth.items()):
        _, name, what = key.split(".", 2)
        got = ranges.get(name, {}).get(what)
        if got != want:
            errs.append("NVTX range %s: %s expected %s, got %s" % (name, what, want, got))
    return errs


def split_truth(truth, prefix):
    return ({k: v for k, v in truth.items() if k.startswith(prefix)},
            {k: v for k, v in truth.items() if not k.startswith(prefix)})


def t_nvtx_threads(tools):
    """C NVTX: nested push/pop, a start/end range ended on another thread
    (launches from a third thread excluded), a domain range."""
    app = tools.app("nvtx_threads")
    run = traced(tools, [app])
    nv, rest = split_truth(run.truth, "nvtx.")
    attrs, rest = split_truth(rest, "nvtxattr.")
    js = check_run(tools, run, "nvtx_threads", truth=rest)
    errs = nvtx_errors(nv, js)
    # Attributes and the ending thread, as the Chrome export shows them.
    ch = tools.export_json(run.files, "chrome")
    events = ch.get("traceEvents", ch) if isinstance(ch, dict) else ch
    # Attributes sit on complete events and on the begin of async ranges.
    ranges = {e.get("name"): e.get("args", {}) for e in events
              if isinstance(e, dict) and e.get("cat") == "nvtx" and e.get("ph") in ("X", "b")}
    for key, want in sorted(attrs.items()):
        _, name, what = key.split(".", 2)
        got = ranges.get(name, {}).get(what)
        if what == "color":
            want = "#%06x" % want
        if got != want:
            errs.append("NVTX range %s: %s expected %s, got %s" % (name, what, want, got))
    if "ended_on_tid" not in ranges.get("xthread", {}):
        errs.append("NVTX range xthread: no ended_on_tid in the Chrome export")
    if errs:
        raise Fail("; ".join(errs) + "; nvtx: %s" % json.dumps(js.get("nvtx"))[:1200])


def nvtx_table(report):
    """The report's NVTX ranges table, its lines."""
    m = re.search(r"^NVTX ranges.*?(?=^\s*$)", report, re.M | re.S)
    return m.group(0) if m else ""


def t_nvtx_open(tools):
    """NVTX ranges around a whole run (test/apps/nvtx_open.cu, a flush
    every 100 ms): the recorder announces "train" and each "epoch" open
    (GP_REC_NVTX_OPEN) as it drains, so the report folds the ranges as they
    close (GPUPROF_VERBOSE=1 says so) where it kept them all before; its
    report and JSON are those of every range kept (GPUPROF_NVTX_FOLD=0),
    and the counts and kernels are the program's."""
    app = tools.app("nvtx_open")
    run = traced(tools, [app], env={"GPUPROF_FLUSH_MS": "100"})
    nv, rest = split_truth(run.truth, "nvtx.")
    js = check_run(tools, run, "nvtx_open", truth=rest)
    errs = nvtx_errors(nv, js)
    env = clean_env()
    env["GPUPROF_VERBOSE"] = "1"
    rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline"] + run.files, env,
                           TOOL_TIMEOUT)
    if rc != 0:
        raise Fail("report exited %d: %s" % (rc, tail(err)))
    if "NVTX ranges folded" not in err:
        errs.append("the report kept the ranges whole: %s" % tail(err))
    env = clean_env()
    env["GPUPROF_NVTX_FOLD"] = "0"
    rc, kept, err = run_cmd([tools.analyzer, "report", "--no-timeline"] + run.files, env,
                            TOOL_TIMEOUT)
    if rc != 0:
        raise Fail("report with every range kept exited %d: %s" % (rc, tail(err)))
    if not nvtx_table(out) or out != kept:
        errs.append("report folded:\n%s\nevery range kept:\n%s" % (nvtx_table(out), nvtx_table(kept)))
    rc, jf, _ = run_cmd([tools.analyzer, "export", "-t", "json"] + run.files, clean_env(),
                        TOOL_TIMEOUT)
    rc2, jk, _ = run_cmd([tools.analyzer, "export", "-t", "json"] + run.files, env, TOOL_TIMEOUT)
    if rc or rc2 or jf != jk:
        errs.append("JSON folded differs from every range kept (rc %d, %d)" % (rc, rc2))
    print("# folded as the ranges closed; NVTX table as kept whole:\n" +
          "\n".join("#   " + l for l in nvtx_table(out).splitlines()), flush=True)
    if errs:
        raise Fail("; ".join(errs))


def t_chrome_export(tools):
    """A fresh trace's Chrome export as Perfetto reads it (test/golden/
    chrome-checks.py: exact times, no overlaps, paired flows and async
    ranges; nest-checks.py: every track nests), the main thread named after its /proc comm (threads that
    exit before their records are drained stay unnamed, by design), and
    the CUDA driver version recorded."""
    app = tools.app("nvtx_threads")
    run = traced(tools, [app])
    expect_status(run, 0)
    if len(run.files) != 1:
        raise Fail("expected one trace, got %s; %s" % (run.files, run.context()))
    tmp = tempfile.mkdtemp(prefix="gpuprof-chrome-")
    tools.tmpdirs.append(tmp)
    cj, cc = os.path.join(tmp, "c.json"), os.path.join(tmp, "c.csv")
    errs = []
    for fmt, path in (("chrome", cj), ("csv", cc)):
        rc, out, err = run_cmd([tools.analyzer, "export", "--format", fmt, "-o", path] + run.files,
                               clean_env(), TOOL_TIMEOUT)
        if rc != 0:
            raise Fail("export --format %s exited %d: %s" % (fmt, rc, tail(err)))
    rc, out, err = run_cmd([sys.executable, os.path.join(ROOT, "test", "golden", "chrome-checks.py"),
                            cj, cc], clean_env(), TOOL_TIMEOUT)
    if rc != 0:
        errs.append(out.strip() or err.strip())
    rc, out, err = run_cmd([sys.executable, os.path.join(ROOT, "test", "golden", "nest-checks.py"),
                            cj, "nvtx_threads"], clean_env(), TOOL_TIMEOUT)
    if rc != 0:
        errs.append(out.strip() or err.strip())
    with open(cj) as f:
        doc = json.load(f)
    events = doc["traceEvents"]
    api_tids = {e["tid"] for e in events if e.get("cat") == "api"}
    # Thread ids from 0x20000000 are tracks of no thread of their own
    # (NVTX domains, overlapping lanes), from 0x40000000 GPU streams.
    named = {e["tid"]: e["args"]["name"] for e in events
             if e.get("name") == "thread_name" and e["tid"] < 0x20000000}
    pids = {e["pid"] for e in events if e.get("cat") == "api"}
    if (not api_tids or not set(named) <= api_tids or
            not any(named.get(p) == "nvtx_threads" for p in pids)):
        errs.append("host threads with API calls %s, named %s" % (sorted(api_tids), named))
    flows = sum(1 for e in events if e.get("ph") == "s")
    kernels = sum(1 for e in events if e.get("cat") == "kernel")
    if flows < kernels:
        errs.append("%d flow arrows for %d kernels" % (flows, kernels))
    js = tools.export_json(run.files)
    drv = [p.get("cuda_driver") for p in js.get("processes", [])]
    if not drv or not all(isinstance(d, int) and d >= 13000 for d in drv):
        errs.append("cuda_driver %s, expected the driver's version (>= 13000)" % drv)
    if errs:
        raise Fail("; ".join(errs))
    print("# chrome: %d kernels, %d flows, threads %s, driver %s" % (kernels, flows, named, drv))


def t_memuse(tools):
    """--trace=...,memory on test/apps/memuse.cu, which makes cudaMalloc/
    cudaFree and cudaMallocAsync/cudaFreeAsync calls of exact sizes
    (distinct multiples of 2 MiB) and prints the peak and final bytes in
    use and the allocation count.  The JSON memory_usage of device 0 must
    give the same.  The CUDA runtime or driver may allocate device memory
    of its own through the traced calls: only what the program did is
    counted, by picking its allocations out of the device's largest
    allocations by the sizes it used (memuse.size.* truth) and replaying
    them; that peak, final, allocation and free counts must equal the
    truth, and the stream-ordered ones must be marked async.  The device's
    own figures must equal the truth when it had no other allocation, and
    be at least the truth otherwise (a line says what else there was).
    The Chrome counter of the device peaks at the JSON peak and ends at
    its final; the report has the memory in use section.  The program's
    output is the same as untraced."""
    app = tools.app("memuse")
    rc, plain, perr = run_cmd([app], clean_env())
    if rc != 0:
        raise Fail("memuse exited %d untraced: %s" % (rc, tail(perr)))
    truth, skip = parse_truth(plain)
    if skip is not None:
        raise Skip(skip)
    run = traced(tools, [app], opts=["--trace=kernel,memcpy,memset,graph,api,nvtx,memory"])
    errs = []
    if run.out != plain:
        errs.append("stdout traced %s differs from untraced %s" % (tail(run.out), tail(plain)))
    mem = {k[len("memuse."):]: v for k, v in run.truth.items() if k.startswith("memuse.")}
    rest = {k: v for k, v in run.truth.items() if not k.startswith("memuse.")}
    for k in ("peak_bytes", "final_bytes", "allocs", "frees"):
        if k not in mem:
            raise Fail("the program printed no TRUTH memuse.%s; stdout %s" % (k, tail(run.out)))
    js = check_run(tools, run, "memuse", truth=rest)
    sizes = collections.Counter()
    async_sizes = set()
    for k, v in mem.items():
        part = k.split(".")
        if part[0] == "size":
            sizes[int(part[1])] += v
        elif part[0] == "async_size":
            async_sizes.add(int(part[1]))
    mu = js.get("memory_usage")
    if not mu:
        raise Fail("the JSON export has no memory_usage")
    pid = js["processes"][0]["pid"]
    devs = [d for d in mu.get("devices", []) if d.get("device") == 0 and d.get("pid") == pid]
    if len(devs) != 1:
        raise Fail("memory_usage has %d entries for device 0 of pid %s: %s"
                   % (len(devs), pid, json.dumps(mu.get("devices"))[:600]))
    d = devs[0]

    def differ(what, want, got):
        if want != got:
            errs.append("%s: expected %s, got %s" % (what, want, got))

    mine = [a for a in d.get("largest", []) if a.get("bytes") in sizes]
    differ("the program's allocations by size", dict(sizes),
           dict(collections.Counter(a["bytes"] for a in mine)))
    events = []
    for a in mine:
        events.append((a["alloc_ns"], 1, a["bytes"]))
        if a.get("freed"):
            events.append((a["free_ns"], 0, -a["bytes"]))
        if a.get("async") != (a["bytes"] in async_sizes):
            errs.append("allocation of %d bytes: async %s" % (a["bytes"], a.get("async")))
    use = peak = 0
    for _, _, b in sorted(events):
        use += b
        peak = max(peak, use)
    differ("peak of the program's allocations", mem["peak_bytes"], peak)
    differ("final of the program's allocations", mem["final_bytes"], use)
    differ("the program's allocations", mem["allocs"], len(mine))
    differ("the program's frees", mem["frees"], sum(1 for a in mine if a.get("freed")))
    others = d.get("allocs", 0) - len(mine)
    if others == 0:
        differ("memory_usage peak_bytes", mem["peak_bytes"], d.get("peak_bytes"))
        differ("memory_usage final_bytes", mem["final_bytes"], d.get("final_bytes"))
        differ("memory_usage allocs", mem["allocs"], d.get("allocs"))
        differ("memory_usage frees", mem["frees"], d.get("frees"))
    else:
        if d.get("peak_bytes", 0) < mem["peak_bytes"]:
            errs.append("memory_usage peak_bytes %s below the program's %d"
                        % (d.get("peak_bytes"), mem["peak_bytes"]))
        if d.get("final_bytes", 0) < mem["final_bytes"]:
            errs.append("memory_usage final_bytes %s below the program's %d"
                        % (d.get("final_bytes"), mem["final_bytes"]))
        print("# memuse: %d allocations besides the program's (largest kept: %s)"
              % (others, [(a["bytes"], a.get("kind")) for a in d.get("largest", [])
                          if a.get("bytes") not in sizes][:8]), flush=True)
    chrome = tools.export_json(run.files, fmt="chrome")
    samples = [e for e in chrome.get("traceEvents", [])
               if e.get("ph") == "C" and e.get("name") == "cuda:0 memory"]
    if not samples:
        errs.append("the Chrome export has no 'cuda:0 memory' counter")
    else:
        values = [e["args"]["bytes"] for e in samples]
        differ("Chrome counter maximum", d.get("peak_bytes"), max(values))
        differ("Chrome counter last value", d.get("final_bytes"), values[-1])
    report = tools.report(run.files)
    if "Memory in use (" not in report or "Largest allocations:" not in report:
        errs.append("the report has no memory in use section")
    if errs:
        raise Fail("; ".join(errs))
    print("# memuse: peak %d, final %d, %d allocations, %d frees on device 0"
          % (d.get("peak_bytes"), d.get("final_bytes"), d.get("allocs"), d.get("frees")),
          flush=True)


def t_torch_nvtx(tools):
    """PyTorch NVTX (test/apps/torch_nvtx.py): ranges, nesting, marks."""
    script = os.path.join(ROOT, "test", "apps", "torch_nvtx.py")
    run = traced(tools, [sys.executable, script], timeout=TORCH_TIMEOUT)
    expect_status(run, 0)
    if not run.files:
        raise Fail("no trace file; %s" % run.context())
    js = tools.export_json(run.files)
    truth = dict(run.truth)
    marks = truth.pop("nvtx.mark.count", None)
    errs = health(js) + nvtx_errors(truth, js)
    got_marks = sum(m["count"] for m in js.get("marks", []) if m["name"] == "step_done")
    if marks is not None and got_marks != marks:
        errs.append("marks step_done: expected %d, got %d" % (marks, got_marks))
    report = tools.report(run.files)
    print("# ---- begin PyTorch NVTX report ----")
    sys.stdout.write(report if report.endswith("\n") else report + "\n")
    print("# ---- end PyTorch NVTX report ----", flush=True)
    if errs:
        raise Fail("; ".join(errs))


def t_torch_emit_nvtx(tools):
    """PyTorch's emit_nvtx() (test/apps/torch_transformer.py with
    TRANSFORMER_EMIT_NVTX=1): every op a range, the backward pass's on
    autograd's thread while "backward" is open on the main thread.  Three
    steps; "backward" launches almost nothing itself and counts autograd's
    kernels as other threads' (JSON other_threads_kernels), as "step" does;
    ops named "...Backward..." hold kernels of their own; the report and
    the JSON agree.  GPUPROF_GOLDEN_KEEP=DIR keeps the trace there as
    torch_emit_nvtx.gpuprof (test/golden)."""
    script = os.path.join(ROOT, "test", "apps", "torch_transformer.py")
    run = traced(tools, [sys.executable, script], timeout=TORCH_TIMEOUT,
                 env={"TRANSFORMER_EMIT_NVTX": "1", "TRANSFORMER_STEPS": "3"})
    expect_status(run, 0)
    expect_files(run, 1)
    keep = os.environ.get("GPUPROF_GOLDEN_KEEP")
    if keep:
        shutil.copy(run.files[0], os.path.join(keep, "torch_emit_nvtx.gpuprof"))
    js = tools.export_json(run.files)
    errs = health(js)
    rows = js.get("nvtx", [])
    byname = {r["name"]: r for r in rows}
    for name in ("step", "forward", "backward", "optimizer"):
        want = run.truth.get("nvtx.%s.count" % name)
        if byname.get(name, {}).get("count") != want:
            errs.append("%s: count %r, expected %r" % (name, byname.get(name, {}).get("count"), want))
    bw = byname.get("backward", {})
    step = byname.get("step", {})
    if bw.get("other_threads_kernels", 0) <= 0 or bw.get("other_threads_kernels", 0) <= bw.get("kernels", 0):
        errs.append("backward: %r kernels of autograd's thread, %r of its own"
                    % (bw.get("other_threads_kernels"), bw.get("kernels")))
    if step.get("other_threads_kernels") != bw.get("other_threads_kernels"):
        errs.append("step counts %r of other threads' kernels, backward %r"
                    % (step.get("other_threads_kernels"), bw.get("other_threads_kernels")))
    backward_ops = [r for r in rows if "Backward" in r["name"] and r.get("kernels", 0) > 0]
    if not backward_ops:
        errs.append("no range of a backward op with kernels of its own")
    report = tools.report(run.files)
    m = re.search(r"^\s*\d+ \|.*\|\s*(\d+) \| backward$", report, re.M)
    if not m or int(m.group(1)) != bw.get("other_threads_kernels"):
        errs.append("the report's backward row says %s of other threads' kernels, the JSON %r"
                    % (m.group(1) if m else "nothing", bw.get("other_threads_kernels")))
    print("# %d NVTX range names, %d backward ops with kernels; backward: %r of autograd's "
          "kernels" % (len(rows), len(backward_ops), bw.get("other_threads_kernels")), flush=True)
    if errs:
        raise Fail("; ".join(errs))


PY_FRAME = re.compile(r"^\S+:\d+ \S")


def torch_pysites(mode):
    """--backtrace=python|mixed (test/apps/torch_pysites.py): the launches of
    each of two Python functions are attributed to exactly their file:line;
    autograd's own thread says it has no Python frame; python shows only
    Python frames, mixed native frames before them; the program's output
    is unchanged."""
    def t(tools):
        script = os.path.join(ROOT, "test", "apps", "torch_pysites.py")
        rc, plain, err = run_cmd([sys.executable, script], clean_env(), TORCH_TIMEOUT)
        if plain.startswith("SKIP "):
            raise Skip(plain[5:].strip())
        run = traced(tools, [sys.executable, script], opts=["--backtrace=" + mode],
                     timeout=TORCH_TIMEOUT)
        expect_status(run, 0)
        if not run.files:
            raise Fail("no trace file; %s" % run.context())
        errs = []
        if rc != 0 or run.out != plain:
            errs.append("output differs under gpuprof: %r vs %r" % (tail(plain), tail(run.out)))
        if "Python call stacks are off" in run.err or "native call stacks only" in run.err:
            errs.append("the recorder did not read Python frames: %s" % tail(run.err))
        js = tools.export_json(run.files)
        errs += health(js)
        sites = js.get("launch_sites", [])
        chrome = tools.export_json(run.files, "chrome")
        events = chrome.get("traceEvents", chrome) if isinstance(chrome, dict) else chrome
        chrome_sites = collections.Counter(
            e.get("args", {}).get("launch_site", "").split(" \u2190 ")[0]
            for e in events if e.get("cat") == "kernel")
        rows = tools.export_csv(run.files)
        csv_sites = collections.Counter(r.get("stack", "").split(" \u2190 ")[0] for r in rows
                                        if r.get("kind") == "kernel")
        for key, want in sorted(run.truth.items()):
            if not key.startswith("pysite."):
                continue
            where, fn = key[len("pysite."):].rsplit(".", 1)
            frame = "%s %s" % (where, fn)
            if mode == "python":
                got = sum(x["launches"] for x in sites if x.get("frames", [""])[0] == frame)
                for name, counts in (("chrome", chrome_sites), ("csv", csv_sites)):
                    if counts[frame] != want:
                        errs.append("%s: %d kernels at %s, expected %d" % (name, counts[frame], frame, want))
            else:
                hit = [x for x in sites if frame in x.get("frames", [])]
                got = sum(x["launches"] for x in hit)
                for x in hit:
                    fr = x["frames"]
                    if PY_FRAME.match(fr[0]) or not any(" (" in f or "+0x" in f
                                                        for f in fr[:fr.index(frame)]):
                        errs.append("mixed site without native frames before %s: %s" % (frame, fr[:8]))
                        break
            if got != want:
                errs.append("%d launches at %s, expected %d" % (got, frame, want))
        if mode == "python":
            # (mixed: the marker follows the thread's native frames, past what a site lists)
            nopy = [x for x in sites if x.get("frames", [""])[0].startswith("<no Python frame: thread ")]
            if sum(x["launches"] for x in nopy) < run.truth.get("backward.runs", 1):
                errs.append("no site says '<no Python frame: thread ...>' for the backward pass")
            for key, want in run.truth.items():
                if not key.startswith("backward_nvtx."):
                    continue
                where, fn = key[len("backward_nvtx."):].rsplit(".", 1)
                head = "backward of %s %s" % (where, fn)
                got = sum(x["launches"] for x in sites if x["site"].startswith(head))
                if got < want:
                    errs.append("%d kernels at '%s', expected at least %d" % (got, head, want))
            bad = [f for x in sites for f in x.get("frames", [])
                   if not PY_FRAME.match(f) and not f.startswith("<no Python frame")]
            if bad:
                errs.append("native frames in --backtrace=python sites: %s" % bad[:5])
        report = tools.report(run.files)
        print("# ---- begin --backtrace=%s launch sites ----" % mode)
        i = report.find("Launch sites")
        sys.stdout.write(report[i:i + 6000] if i >= 0 else report[-3000:])
        print("\n# ---- end launch sites ----", flush=True)
        if errs:
            raise Fail("; ".join(errs) + "; launch_sites: %s" % json.dumps(sites)[:2000])
    return t


def passive(app_name, env, says):
    """CUPTI busy or missing: one line on stderr, no trace, the program's
    own result and exit status unchanged."""
    def t(tools):
        app = tools.app(app_name)
        run = traced(tools, [app], env=env)
        expect_status(run, 0)
        expect_files(run, 0)
        lines = [l for l in run.err.splitlines() if l.startswith("gpuprof: ") and says in l]
        if len(lines) != 1:
            raise Fail("expected one 'gpuprof: ...%s...' line on stderr; %s" % (says, run.context()))
    return t


def t_cupti_busy(tools):
    """A program linked to libcupti that subscribes before CUDA starts
    (test/apps/cupti_busy.cu): its cuptiSubscribe reaches gpuprof's, which
    initializes CUDA first and then serves it beside the trace.  The program
    runs unchanged (it checks its results) and the trace holds all its work,
    with no line about CUPTI being held."""
    run = traced(tools, [tools.app("cupti_busy")])
    check_run(tools, run, "cupti_busy")
    held = [l for l in gp_lines(run.err) if "CUPTI" in l]
    if held:
        raise Fail("stderr: %s" % held)


def t_busy_gpu_kill(tools):
    """SIGKILL while the GPU is never idle: every kernel that finished more
    than one flush interval before the kill is in the trace."""
    app = tools.app("busy_gpu")
    flush = 200
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    env = clean_env()
    env.update({"LD_PRELOAD": tools.lib, "GPUPROF_OUTPUT": os.path.join(tmp, "trace-%p"),
                "GPUPROF_FLUSH_MS": str(flush)})
    p = subprocess.Popen([app, "60"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=env, start_new_session=True)
    done = []
    try:
        for line in p.stdout:
            m = re.match(rb"COMPLETED (\d+) ([\d.]+)", line)
            if m:
                done.append((float(m.group(2)), int(m.group(1))))
                if done[-1][0] >= 3000:
                    break
    finally:
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
    if not done or done[-1][0] < 3000:
        raise Fail("busy_gpu printed no progress past 3 s; stderr %s" % tail(p.stderr.read()))
    kill_ms = done[-1][0]
    want = max([n for t, n in done if t <= kill_ms - flush] or [0])
    files = sorted(glob.glob(os.path.join(tmp, "*.gpuprof")))
    if len(files) != 1:
        raise Fail("%d trace files" % len(files))
    js = tools.export_json(files)
    errs = health(js, finished=False)
    got = js.get("counts", {}).get("kernel", 0)
    if got < want:
        errs.append("%d kernels in the trace, but %d had finished one flush interval "
                    "(%d ms) before the kill" % (got, want, flush))
    if errs:
        raise Fail("; ".join(errs))


def t_init_only(tools):
    """A process that only initializes CUDA (a launcher) leaves no trace and
    says nothing; its status is unchanged."""
    app = tools.app("init_only")
    run = traced(tools, [app], how="preload")
    expect_status(run, 0)
    expect_files(run, 0)
    if "TRUTH kernel.total 0" not in run.out:
        raise Fail("the program did not run to its end; %s" % run.context())
    gp_lines = [l for l in run.err.splitlines() if l.startswith("gpuprof:")]
    if gp_lines:
        raise Fail("stderr: %s" % gp_lines)


def t_torch_profiler(tools):
    """torch.profiler beside gpuprof (test/apps/torch_profiler.py): it sees
    the same CUDA events as without gpuprof, and gpuprof's kernels inside
    each profiled window equal torch.profiler's."""
    torch_profiler_run(tools, {})


def t_torch_profiler_early(tools):
    """The same with a first torch.profiler session started before any
    CUDA call: both still see everything."""
    torch_profiler_run(tools, {"TORCH_PROFILER_EARLY": "1"})


def torch_profiler_run(tools, extra_env):
    script = os.path.join(ROOT, "test", "apps", "torch_profiler.py")
    env = clean_env()
    env.update(extra_env)
    rc, out0, err0 = run_cmd([sys.executable, script], env, TORCH_TIMEOUT)
    if "SKIP" in out0:
        raise Skip(out0.strip())
    if rc != 0:
        raise Fail("without gpuprof: exit %d: %s" % (rc, tail(err0)))
    if extra_env and not re.search(r"^TRUTH kineto\.kernels\.early [1-9]", out0, re.M):
        raise Fail("torch.profiler alone saw no kernel in its early session: %s"
                   % [l for l in out0.splitlines() if "early" in l])
    run = traced(tools, [sys.executable, script], env=extra_env, timeout=TORCH_TIMEOUT)
    expect_status(run, 0)
    expect_files(run, 1)
    errs = []
    want = [l for l in out0.splitlines() if l.startswith("EVENTS ")]
    got = [l for l in run.out.splitlines() if l.startswith("EVENTS ")]
    if not want or want != got:
        errs.append("torch.profiler's CUDA events differ under gpuprof:\n  without %s\n  with    %s"
                    % (want, got))
    if "CUPTI initialization failed" in run.err or "MULTIPLE_SUBSCRIBERS" in run.err:
        errs.append("torch.profiler could not use CUPTI: %s" % tail(run.err))
    for key, n in sorted(run.truth.items()):
        session = key.rsplit(".", 1)[1]
        js = tools.export_json(run.files + ["--nvtx", "^profiled_%s$" % session])
        k = js.get("counts", {}).get("kernel", 0)
        if k != n:
            errs.append("session %s: gpuprof %d kernels in profiled_%s, torch.profiler %d"
                        % (session, k, session, n))
    js = tools.export_json(run.files)
    errs += health(js)
    if errs:
        raise Fail("; ".join(errs))


def guest_lines(out):
    """{key: int} of a program's "GUEST key value" lines."""
    return {m.group(1): int(m.group(2))
            for m in re.finditer(r"^GUEST (\S+) (-?\d+)$", out, re.M)}


def t_cupti_guest(tools):
    """A CUPTI user that never subscribes (test/apps/cupti_guest.cu, the way
    Kineto does it from 2026 on) beside gpuprof: phase by phase it receives
    exactly what it receives alone, on its own clock, and gpuprof's trace
    holds every kernel and copy.  Where CUPTI will not have the guest's
    serializing KERNEL kind beside gpuprof's CONCURRENT_KERNEL, gpuprof
    hands over: one line on stderr, a gap in the trace, the guest's kernels
    counted under the hand-over cause, and everything after recorded again."""
    cupti_guest_run(tools, {}, {})


def t_cupti_guest_subscribed(tools):
    """The same CUPTI user subscribing first of all, before CUDA is
    initialized (as an older Kineto started early does), with launch
    callbacks on: its callbacks fire for every launch and its buffers get
    what they get alone, while gpuprof (which starts inside cuInit) still
    traces everything instead of finding CUPTI's one subscription taken."""
    cupti_guest_run(tools, {"CUPTI_GUEST_SUBSCRIBE": "1"}, {"callbacks.launch": 110})


def t_cupti_guest_held(tools):
    """The subscribing CUPTI user again, but gpuprof loaded only as the
    CUDA injection (no LD_PRELOAD, so nothing stands between the program
    and libcupti): the program holds CUPTI's one subscription from before
    cuInit.  gpuprof says so in one line, waits, takes CUPTI when the
    program unsubscribes and traces from then on: the last kernels (guest_e
    x 5, launched 600 ms after the unsubscribe) are in the trace, the time
    before is one gap, and the program received exactly what it does alone."""
    app, alone = cupti_guest_alone(tools, {"CUPTI_GUEST_SUBSCRIBE": "1"})
    run = traced(tools, [app], how="inject",
                 env={"CUPTI_GUEST_SUBSCRIBE": "1", "GPUPROF_FLUSH_MS": "100"})
    expect_status(run, 0)
    expect_files(run, 1)
    errs = []
    got = guest_lines(run.out)
    if {k: v for k, v in got.items() if k != "buffers"} != \
            {k: v for k, v in alone.items() if k != "buffers"}:
        errs.append("the program received %s under gpuprof, %s alone" % (got, alone))
    lines = gp_lines(run.err)
    waits = [l for l in lines if "tracing starts when it lets go" in l]
    frees = [l for l in lines if "CUPTI is free: tracing from now on" in l]
    if len(waits) != 1 or len(frees) != 1 or len(lines) != 2:
        errs.append("stderr: expected one line saying gpuprof waits and one that it "
                    "traces, got %s" % lines)
    js = tools.export_json(run.files)
    kb = kernels_by_base(js)
    counts = {n: kb.get(n, {}).get("count", 0) for n in ("guest_a", "guest_b", "guest_c",
                                                         "guest_d", "guest_e")}
    if counts != {"guest_a": 0, "guest_b": 0, "guest_c": 0, "guest_d": 0, "guest_e": 5}:
        errs.append("kernels traced %s; expected guest_e x 5 only" % counts)
    lost = js.get("lost", {})
    if lost.get("handover_gaps") != 1:
        errs.append("lost %s: expected one gap" % json.dumps(lost))
    if "Gaps:" not in tools.report(run.files):
        errs.append("the report does not show the gap")
    if errs:
        raise Fail("; ".join(errs))


def cupti_guest_alone(tools, extra_env):
    """(the app, what the program receives without gpuprof: its GUEST lines)."""
    app = tools.app("cupti_guest")
    env = clean_env()
    env.update(extra_env)
    rc, out0, err0 = run_cmd([app], env)
    if "SKIP" in out0:
        raise Skip(out0.strip())
    if rc != 0:
        raise Fail("without gpuprof: exit %d: %s" % (rc, tail(err0)))
    return app, guest_lines(out0)


def cupti_guest_run(tools, extra_env, extra_want):
    app, alone = cupti_guest_alone(tools, extra_env)
    want = {"phase1.guest_a": 40, "phase1.guest_b": 25, "phase1.memcpy": 3,
            "phase1.in_window": 1, "phase3.guest_a": 10, "phase3.in_window": 1,
            "phase4.enable_rc": 0, "phase4.guest_d": 15}
    want.update(extra_want)
    bad = {k: (v, alone.get(k)) for k, v in want.items() if alone.get(k) != v}
    if bad or any(k.startswith("phase2.") for k in alone):
        raise Fail("the program alone receives %s (expected, got: %s)" % (alone, bad))
    run = traced(tools, [app], env=extra_env)
    expect_status(run, 0)
    expect_files(run, 1)
    got = guest_lines(run.out)
    errs = []
    for k in sorted(set(alone) | set(got)):
        if k in ("buffers", "clock_rc"):
            continue
        if alone.get(k) != got.get(k):
            errs.append("%s: %s alone, %s under gpuprof" % (k, alone.get(k), got.get(k)))
    js = tools.export_json(run.files)
    kb = kernels_by_base(js)
    handed = [l for l in gp_lines(run.err) if "steps aside" in l]
    lost = js.get("lost", {})
    for name in ("guest_a", "guest_b", "guest_c", "guest_d", "guest_e"):
        n = kb.get(name, {}).get("count", 0)
        w = run.truth.get("kernel.count." + name)
        if name == "guest_d" and handed:
            w = 0
        if n != w:
            errs.append("gpuprof traced %d %s, expected %s" % (n, name, w))
    if js.get("memcpy") and sum(m.get("count", 0) for m in js["memcpy"]
                                if m.get("kind") == "HtoD") != 3:
        errs.append("gpuprof memcpy %s, expected 3 HtoD" % js.get("memcpy"))
    if handed:
        if len(handed) != 1:
            errs.append("%d hand-over lines on stderr: %s" % (len(handed), handed))
        if lost.get("handover") != 15 or lost.get("handover_gaps") != 1:
            errs.append("lost %s: expected 15 hand-over records in 1 gap" % json.dumps(lost))
        if lost.get("total") != lost.get("handover"):
            errs.append("other losses: %s" % json.dumps(lost))
        if "Gaps:" not in tools.report(run.files):
            errs.append("the report does not show the gap")
    else:
        errs += health(js)
    # The wrapper's summary counts what went to the program only as lost.
    others = [l for l in gp_lines(run.err) if "steps aside" not in l and
              not (handed and re.search(r"gpuprof: %d records lost \(see the report\)"
                                        % lost.get("handover", -1), l))]
    if others:
        errs.append("stderr: %s" % others)
    print("# cupti-guest: KERNEL beside CONCURRENT_KERNEL %s; guest alone %s, under gpuprof %s"
          % ("handed over" if handed else "shared", alone, got), flush=True)
    if errs:
        raise Fail("; ".join(errs))


def mpi_env():
    """(mpirun, environment): Open MPI from PATH, or from an unpacked copy
    (`dpkg -x` of Debian's openmpi-bin, openmpi-common, libopenmpi3 and the
    libraries they need) whose root GPUPROF_TEST_MPI names, for machines
    without a package manager."""
    e = clean_env()
    root = os.environ.get("GPUPROF_TEST_MPI")
    if root:
        usr = os.path.join(os.path.abspath(root), "usr")
        libs = [os.path.join(usr, "lib", "x86_64-linux-gnu"),
                os.path.join(usr, "lib", "x86_64-linux-gnu", "openmpi", "lib")]
        e["PATH"] = os.path.join(usr, "bin") + os.pathsep + e.get("PATH", "")
        e["LD_LIBRARY_PATH"] = os.pathsep.join(libs + [e["LD_LIBRARY_PATH"]]
                                               if e.get("LD_LIBRARY_PATH") else libs)
        e["OPAL_PREFIX"] = usr
    return shutil.which("mpirun", path=e.get("PATH")), e


def t_mpi(tools):
    """mpirun -np 2 gpuprof run -o 'job-%q{OMPI_COMM_WORLD_RANK}' of a CUDA
    program (test/apps/mpi_ranks.cu, both ranks on GPU 0): one finished
    trace per rank, each with its rank, kernels counted exactly per rank,
    a merged report that names rank 0 and rank 1 and warns of nothing,
    ranks in order in JSON and Chrome export, rank 1 slowest in step 1."""
    mpirun, env = mpi_env()
    if not mpirun:
        raise Skip("mpirun not found (Open MPI: openmpi-bin, or GPUPROF_TEST_MPI)")
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    rc, out, err = run_cmd([mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                            tools.wrapper, "run", "-o", os.path.join(tmp, "job-%q{OMPI_COMM_WORLD_RANK}"),
                            "--report=none", "--", tools.app("mpi_ranks")], env)
    if rc != 0:
        raise Fail("mpirun exited %d: %s" % (rc, tail(err)))
    files = sorted(glob.glob(os.path.join(tmp, "*.gpuprof")))
    names = [os.path.basename(f) for f in files]
    if names != ["job-0.gpuprof", "job-1.gpuprof"]:
        raise Fail("trace files %s, expected job-0 and job-1" % names)
    truth, _ = parse_truth(out)
    errs = []
    rep = tools.report(files)
    if "Warnings:" in rep:
        errs.append("the report warns: %s" % rep[rep.index("Warnings:"):][:300])
    for r in (0, 1):
        if "rank %d, pid" % r not in rep or "cuda:0 [rank %d]" % r not in rep:
            errs.append("the report does not name rank %d" % r)
    if "Ranks (" not in rep:
        errs.append("the report has no rank table")
    noise = [l for l in gp_lines(err)]
    if noise:
        errs.append("stderr: %s" % noise)
    js = tools.export_json(files)
    ranks = js.get("ranks", [])
    if [r.get("rank") for r in ranks] != [0, 1]:
        errs.append("JSON ranks %s" % [r.get("rank") for r in ranks])
    for r in ranks:
        want = truth.get("rank.%d.kernels" % r.get("rank"))
        if r.get("kernels") != want or want is None:
            errs.append("rank %s: %s kernels, program says %s" % (r.get("rank"), r.get("kernels"), want))
    for f in js.get("files", []):
        if not f.get("finished"):
            errs.append("%s has no end record" % f.get("path"))
    syncs = [p.get("clock_syncs", 0) for p in js.get("processes", [])]
    if len(syncs) != 2 or min(syncs) < 2:
        errs.append("clock sync records per trace %s, expected 2 or more" % syncs)
    slow = [st for st in js.get("steps", []) if st.get("index") == 1]
    if not slow or slow[0].get("slowest_rank") != 1:
        errs.append("step 1's slowest rank is %s, expected 1" % slow)
    ch = tools.export_json(files, "chrome")
    events = ch.get("traceEvents", ch) if isinstance(ch, dict) else ch
    pn = chrome_processes(events)
    if len(pn) != 2 or not pn[0].startswith("rank 0:") or not pn[1].startswith("rank 1:"):
        errs.append("Chrome processes in display order %s" % pn)
    if errs:
        raise Fail("; ".join(errs))


def chrome_processes(events):
    """Process names of a Chrome export in the order Perfetto shows them
    (process_sort_index, then pid)."""
    name, order = {}, {}
    for e in events:
        if not isinstance(e, dict) or e.get("ph") != "M":
            continue
        if e.get("name") == "process_name":
            name[e.get("pid")] = e["args"]["name"]
        elif e.get("name") == "process_sort_index":
            order[e.get("pid")] = e["args"]["sort_index"]
    return [name[p] for p in sorted(name, key=lambda p: (order.get(p, 0), p))]


def t_torchrun(backend):
    """torchrun --nproc-per-node 2 (test/apps/torch_ranks.py) under gpuprof
    run: one finished trace per rank, none for the launcher, no warning,
    kernels counted exactly per rank, ranks in order in every view; each
    rank's NVTX ranges (NCCL's beside the steps) fold, as every range kept
    reports them."""
    def t(tools):
        try:
            import torch  # noqa: F401
        except Exception as e:  # noqa: BLE001
            raise Skip("no PyTorch (%s)" % e)
        torchrun = shutil.which("torchrun")
        if not torchrun:
            raise Skip("torchrun not found")
        if backend == "nccl":
            n = int(subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
                    .stdout.count("GPU "))
            if n < 2:
                raise Skip("NCCL needs a GPU per rank; %d here" % n)
        script = os.path.join(ROOT, "test", "apps", "torch_ranks.py")
        tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
        tools.tmpdirs.append(tmp)
        rc, out, err = run_cmd([tools.wrapper, "run", "-o", os.path.join(tmp, "job-%q{RANK}"),
                                "--report=summary", torchrun, "--standalone", "--nproc-per-node",
                                "2", script, backend], clean_env(), TORCH_TIMEOUT)
        files = sorted(glob.glob(os.path.join(tmp, "*.gpuprof")))
        errs = []
        if rc != 0:
            raise Fail("exit %d: %s" % (rc, tail(err)))
        names = [os.path.basename(f) for f in files]
        if names != ["job-0.gpuprof", "job-1.gpuprof"]:
            errs.append("trace files %s, expected job-0 and job-1 only" % names)
        if "Warnings:" in out:
            errs.append("the report warns: %s" % out[out.index("Warnings:"):][:300])
        truth, _ = parse_truth(out)
        js = tools.export_json(files)
        ranks = js.get("ranks", [])
        if [r.get("rank") for r in ranks] != [0, 1]:
            errs.append("JSON ranks %s" % [r.get("rank") for r in ranks])
        for f in js.get("files", []):
            if not f.get("finished"):
                errs.append("%s has no end record" % f.get("path"))
        for r in ranks:
            jr = tools.export_json([os.path.join(tmp, "job-%d.gpuprof" % r["rank"]),
                                    "--kernel", "add"])
            adds = jr.get("counts", {}).get("kernel")
            if adds != truth.get("rank.%d.add" % r["rank"]):
                errs.append("rank %d: %s add kernels, program says %s"
                            % (r["rank"], adds, truth.get("rank.%d.add" % r["rank"])))
            if r.get("nccl_kernels") != truth.get("rank.%d.nccl" % r["rank"]):
                errs.append("rank %d: %s NCCL kernels, program says %s"
                            % (r["rank"], r.get("nccl_kernels"), truth.get("rank.%d.nccl" % r["rank"])))
        if js.get("steps") and js["steps"][0].get("ranks") != 2:
            errs.append("steps %s" % js["steps"][:2])
        slow = [s for s in js.get("steps", []) if s.get("index") == 1]
        if not slow or slow[0].get("slowest_rank") != 1:
            errs.append("step 1's slowest rank is %s, expected 1" % slow)
        ch = tools.export_json(files, "chrome")
        events = ch.get("traceEvents", ch) if isinstance(ch, dict) else ch
        pn = [e["args"]["name"] for e in events if isinstance(e, dict) and e.get("name") == "process_name"]
        if not (len(pn) == 2 and pn[0].startswith("rank ") and any(p.startswith("rank 1:") for p in pn)):
            errs.append("Chrome process names %s" % pn)
        # gloo: both ranks on cuda:0; nccl: rank r on cuda:r.
        if "Ranks (" not in out or "cuda:%d [rank 1]" % (backend == "nccl") not in out:
            errs.append("report lacks the rank table or rank labels")
        # Each rank's NVTX ranges fold as they close (NCCL's own, domain "NCCL",
        # do not nest in the steps): report and JSON those of every range kept.
        for f in files:
            env = clean_env()
            env["GPUPROF_VERBOSE"] = "1"
            rcf, rf, ef = run_cmd([tools.analyzer, "report", f], env, TOOL_TIMEOUT)
            jf = run_cmd([tools.analyzer, "export", "-t", "json", f], env, TOOL_TIMEOUT)[1]
            env = clean_env()
            env["GPUPROF_NVTX_FOLD"] = "0"
            rck, rk, _ = run_cmd([tools.analyzer, "report", f], env, TOOL_TIMEOUT)
            jk = run_cmd([tools.analyzer, "export", "-t", "json", f], env, TOOL_TIMEOUT)[1]
            if rcf != 0 or rck != 0 or "NVTX ranges folded" not in ef or rf != rk or jf != jk:
                errs.append("%s: the NVTX fold (%s) gives another report or JSON than every "
                            "range kept (%s, %s)" % (os.path.basename(f), tail(ef, 300),
                                                     rf == rk, jf == jk))
            if backend == "nccl" and not re.search(r"^\s*\d+ \|.*\| NCCL:", rf, re.M):
                errs.append("%s: no NCCL range in the report's NVTX table" % os.path.basename(f))
        if backend == "nccl":
            rc, al, _ = run_cmd([tools.analyzer, "report", "--align", "nccl"] + files,
                                clean_env(), TOOL_TIMEOUT)
            m = re.search(r"^rank 1 \|\s+([+-]?[\d.]+ \S+|0) \|\s+- \|\s+[+-]?[\d.]+ \S+ \|\s+(\d+) \|\s+(\d+) \|", al, re.M)
            if rc != 0 or not m or int(m.group(3)) < 3:
                errs.append("report --align nccl: no correction for rank 1 from its NCCL "
                            "collectives: %s" % tail(al, 800))
            # Summaries carry the collectives: the same corrections and span from them.
            sums = []
            for f in files:
                sp = f[:-len(".gpuprof")] + ".sum"
                rc2, _, e2 = run_cmd([tools.analyzer, "summarize", "-o", sp, f], clean_env(),
                                     TOOL_TIMEOUT)
                if rc2 != 0:
                    errs.append("summarize %s: %s" % (f, tail(e2)))
                sums.append(sp)
            rc1, al1, _ = run_cmd([tools.analyzer, "report", "-j", "1", "--align", "nccl"] + files,
                                  clean_env(), TOOL_TIMEOUT)
            rc2, als, e2 = run_cmd([tools.analyzer, "report", "--align", "nccl"] + sums[::-1],
                                   clean_env(), TOOL_TIMEOUT)

            def clock(t):
                c = re.search(r"^Clock alignment \(.*?(?:\n\n|\Z)", t, re.M | re.S)
                w = re.search(r"^Wall span:.*$", t, re.M)
                return (c.group(0) if c else None, w.group(0) if w else None)
            if rc1 != 0 or rc2 != 0 or clock(al1)[0] is None or clock(al1) != clock(als) \
                    or clock(al) != clock(al1):
                errs.append("report --align nccl of the summaries (rc %d) differs from the "
                            "traces' (rc %d): %s | %s | %s" % (rc2, rc1, clock(al1), clock(als),
                                                              tail(e2)))
        print("# ---- begin torchrun %s report ----" % backend)
        sys.stdout.write(out if out.endswith("\n") else out + "\n")
        print("# ---- end torchrun report ----", flush=True)
        if errs:
            raise Fail("; ".join(errs))
    return t


SIG_NAMES = ("SEGV", "ABRT", "BUS", "FPE", "ILL", "TERM", "HUP", "INT", "QUIT")


def gp_lines(err):
    """The recorder's lines on stderr (the wrapper's usual ones left out)."""
    usual = ("trace written to", "was killed by signal")
    return [l for l in err.splitlines()
            if l.startswith("gpuprof:") and not any(u in l for u in usual)]


def fault_signal(name, own=False, how="wrapper"):
    """A burst of launches, then death by a signal: the trace holds every
    launch and its end record, and the exit status is the signal's (with
    its own handler, the program's handler runs and decides)."""
    def t(tools):
        app = tools.app("sig_after_burst")
        argv = [app, "2000", name] + (["own"] if own else [])
        run = traced(tools, argv, how=how)
        sig = getattr(signal, "SIG" + name)
        if own:
            want = 7
            if "HANDLER" not in run.out:
                raise Fail("the program's handler did not run; stdout %s" % tail(run.out))
        else:
            want = 128 + sig if how == "wrapper" else -sig
        check_run(tools, run, "sig_after_burst", status=want)
        if gp_lines(run.err):
            raise Fail("gpuprof lines on stderr: %s" % gp_lines(run.err))
    return t


def t_fault_disk_full(tools):
    """The trace on a 64 KiB tmpfs that fills up: the program is unchanged,
    the trace is finished and counts what it could not write."""
    if os.geteuid() != 0:
        raise Skip("mounting a tmpfs needs root")
    mnt = tempfile.mkdtemp(prefix="gpuprof-full.")
    tools.tmpdirs.append(mnt)
    if subprocess.call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]) != 0:
        raise Skip("cannot mount a tmpfs")
    try:
        n = 200000
        e = clean_env()
        e.update({"GPUPROF_OUTPUT": os.path.join(mnt, "trace-%p"), "LD_PRELOAD": tools.lib,
                  "GPUPROF_TRACE": "kernel", "GPUPROF_FLUSH_MS": "100"})
        rc, out, err = run_cmd([tools.app("sig_after_burst"), str(n), "exit"], e)
        if rc != 0 or "TRUTH kernel.total %d" % n not in out:
            raise Fail("program status %d, stdout %s" % (rc, tail(out)))
        files = sorted(glob.glob(os.path.join(mnt, "*.gpuprof")))
        if len(files) != 1:
            raise Fail("%d trace files" % len(files))
        js = tools.export_json(files)
        lost = js.get("lost", {})
        got = js.get("counts", {}).get("kernel", 0)
        errs = []
        if not all(f.get("finished") for f in js.get("files", [])):
            errs.append("trace not finished: %s" % js.get("files"))
        if not lost.get("write_error"):
            errs.append("no write errors counted: %s" % lost)
        other = {k: v for k, v in lost.items() if k not in ("total", "write_error") and v}
        if other:
            errs.append("losses of other causes: %s" % other)
        if not n <= got + lost.get("write_error", 0) <= n + 16:
            errs.append("kernels %d + write errors %d, expected %d (+ a few other records)"
                        % (got, lost.get("write_error", 0), n))
        if len(gp_lines(err)) > 1:
            errs.append("more than one gpuprof line: %s" % gp_lines(err))
        if errs:
            raise Fail("; ".join(errs))
    finally:
        subprocess.call(["umount", "-l", mnt])


def fault_fds(mode):
    """The program closes gpuprof's descriptors, dup2()s its own file over
    them, or changes directory and umask: the trace is complete, and the
    program's own file holds only what it wrote."""
    def t(tools):
        app = tools.app("fds_daemon")
        own = os.path.join(tempfile.mkdtemp(prefix="gpuprof-own."), "own.txt")
        tools.tmpdirs.append(os.path.dirname(own))
        argv = [app, mode] + ([own] if mode == "dup2" else [])
        if mode == "chdir":
            # A relative output name, from the directory the program starts in.
            tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
            tools.tmpdirs.append(tmp)
            e = clean_env()
            rc, out, err = run_cmd(["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", tmp,
                                    tools.wrapper, "run", "-o", "rel-%p", "--report=none",
                                    "--"] + argv, e)
            run = Run(rc, out, err, tmp)
        else:
            run = traced(tools, argv)
        truth = dict(run.truth)
        ok = truth.pop("own_file_ok", None)
        if mode == "dup2":
            if ok != 1:
                raise Fail("the program's own file check failed; %s" % run.context())
            with open(own, "rb") as f:
                data = f.read()
            if data != b"program data":
                raise Fail("the program's file holds %r" % data[:80])
        check_run(tools, run, "fds_daemon", truth=truth)
        if gp_lines(run.err):
            raise Fail("gpuprof lines on stderr: %s" % gp_lines(run.err))
    return t


def t_fault_symlink_force(tools):
    """-f with a symlink at the output path: the link is replaced by the
    trace, its target untouched."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    target = os.path.join(tmp, "target.txt")
    with open(target, "w") as f:
        f.write("keep me")
    link = os.path.join(tmp, "out.gpuprof")
    os.symlink(target, link)
    app = tools.app("sig_after_burst")
    rc, out, err = run_cmd([tools.wrapper, "run", "-f", "-o", os.path.join(tmp, "out"),
                            "--report=none", "--", app, "100", "exit"], clean_env())
    errs = []
    if rc != 0:
        errs.append("status %d; stderr %s" % (rc, tail(err)))
    if os.path.islink(link) or not os.path.isfile(link):
        errs.append("the symlink was not replaced by a trace file")
    with open(target) as f:
        if f.read() != "keep me":
            errs.append("the link's target was written")
    if not errs:
        js = tools.export_json([link])
        if js.get("counts", {}).get("kernel") != 100:
            errs.append("kernels %s, expected 100" % js.get("counts"))
    if errs:
        raise Fail("; ".join(errs))


def t_fault_force_two_runs(tools):
    """Two gpuprof run -f -o SAME at once: the second is refused while the
    first writes (no trace in an unlinked inode), and each wrapper names
    exactly the files that exist."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    same = os.path.join(tmp, "same")
    app = tools.app("burst_paced")
    first = subprocess.Popen([tools.wrapper, "run", "-f", "-o", same, "--report=none", "--",
                              app, "100", "8000", "0"], env=clean_env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # The name exists once the first recorder holds it (and its lock).
    for _ in range(300):
        if os.path.exists(same + ".gpuprof") or first.poll() is not None:
            break
        time.sleep(0.1)
    rc, out, err = run_cmd([tools.wrapper, "run", "-f", "-o", same, "--report=none", "--",
                            app, "10", "0", "0"], clean_env())
    out1, err1 = first.communicate(timeout=RUN_TIMEOUT)
    err1 = err1.decode(errors="replace")
    errs = []
    if "another process is writing a trace under that name" not in err:
        errs.append("second run not refused: %s" % tail(err))
    if "trace written to" in err or "did GPU work" in err:
        errs.append("second run claims a trace or no GPU work: %s" % tail(err))
    if first.returncode != 0 or "trace written to %s.gpuprof" % same not in err1:
        errs.append("first run: status %d, %s" % (first.returncode, tail(err1)))
    if sorted(os.listdir(tmp)) != ["same.gpuprof"]:
        errs.append("files: %s" % os.listdir(tmp))
    if not errs:
        js = tools.export_json([same + ".gpuprof"])
        if js.get("counts", {}).get("kernel") != 101:
            errs.append("kernels %s, expected the first run's 101" % js.get("counts"))
    if errs:
        raise Fail("; ".join(errs))


def t_fault_force_disk_full(tools):
    """-f over an old trace on a full file system: the old trace stays, and
    gpuprof run says why no trace was written (not "no GPU work")."""
    if os.geteuid() != 0:
        raise Skip("mounting a tmpfs needs root")
    mnt = tempfile.mkdtemp(prefix="gpuprof-full.")
    tools.tmpdirs.append(mnt)
    if subprocess.call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mnt]) != 0:
        raise Skip("cannot mount a tmpfs")
    try:
        old = os.path.join(mnt, "t.gpuprof")
        with open(old, "wb") as f:
            f.write(b"old trace")
        try:
            with open(os.path.join(mnt, "filler"), "wb") as f:
                while True:
                    f.write(b"x" * 1024)
                    f.flush()
        except OSError:
            pass
        rc, out, err = run_cmd([tools.wrapper, "run", "-f", "-o", os.path.join(mnt, "t"),
                                "--report=none", "--", tools.app("sig_after_burst"), "100",
                                "exit"], clean_env())
        errs = []
        if rc != 0 or "TRUTH kernel.total 100" not in out:
            errs.append("program status %d, stdout %s" % (rc, tail(out)))
        with open(old, "rb") as f:
            if f.read() != b"old trace":
                errs.append("the old trace was replaced or removed")
        if "No space left on device" not in err or "could not create the file" not in err:
            errs.append("no reason given: %s" % tail(err))
        if "did GPU work" in err:
            errs.append("says no process did GPU work: %s" % tail(err))
        if sorted(os.listdir(mnt)) != ["filler", "t.gpuprof"]:
            errs.append("files: %s" % os.listdir(mnt))
        if errs:
            raise Fail("; ".join(errs))
    finally:
        subprocess.call(["umount", "-l", mnt])


def t_fault_wrapper_cannot_create(tools):
    """The recorder cannot create its file (an existing name without -f):
    gpuprof run says so, not that no process did GPU work."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    with open(os.path.join(tmp, "t.gpuprof"), "w") as f:
        f.write("mine")
    rc, out, err = run_cmd([tools.wrapper, "run", "-o", os.path.join(tmp, "t%q{NOPE}"),
                            "--report=none", "--", tools.app("sig_after_burst"), "100", "exit"],
                           dict(clean_env(), NOPE=""))
    if rc != 0 or "TRUTH kernel.total 100" not in out:
        raise Fail("program status %d, stdout %s" % (rc, tail(out)))
    if "it exists (use -f to overwrite)" not in err or "did GPU work" in err:
        raise Fail("stderr: %s" % tail(err))


def with_faults(tools, **faults):
    """Environment that preloads the fault shim (test/shims/gpfault.c) after
    the recorder, with GPFAULT_<NAME>=value for each keyword argument;
    returns it and the path of the shim's log of the faults it injected."""
    shim = os.path.join(tools.build, "test", "shims", "libgpfault.so")
    if not os.path.exists(shim):
        raise Fail("%s is missing (run make apps)" % shim)
    tmp = tempfile.mkdtemp(prefix="gpuprof-faults.")
    tools.tmpdirs.append(tmp)
    log = os.path.join(tmp, "faults.log")
    env = {"LD_PRELOAD": shim, "GPFAULT_LOG": log}
    env.update({"GPFAULT_" + k.upper(): str(v) for k, v in faults.items()})
    return env, log


def faults_injected(log, what):
    """The shim's log lines for faults of one kind (write-errno,
    write-delay, malloc, mmap)."""
    try:
        with open(log) as f:
            return [l for l in f.read().splitlines() if l.split(" ")[0] == what]
    except OSError:
        return []


def other_losses(lost, *allowed):
    return {k: v for k, v in lost.items() if k not in ("total",) + allowed and v}


def t_fault_ring_overflow(tools):
    """The writer stalls for 12 s (the fault shim delays its first chunk's
    write) while a 2-chunk ring takes a burst: the ring really overflows.
    The CUDA thread waits for the writer once (GP_RING_WAIT_MS, 5 s), then
    drops records without waiting until the writer gives a chunk back.
    Every launch is a kernel in the trace or counted as ring_full, exactly;
    no other loss (a LOST record that finds the ring full is retried, not
    counted); the trace is finished, the program unchanged.

    Timeline, in seconds after cuInit: the first flush (1 s) hands the
    writer the chunk that holds the process, device and context records,
    and its write stalls until 13 s.  The program launches after a 2 s
    pause, so the burst's records fill the other chunk, wait 5 s and are
    then dropped; every record is delivered by then.  The program exits
    14 s after the burst, when the writer has long been back, so the last
    records and the LOST counts fit."""
    n = 100000
    env, log = with_faults(tools, write_suffix=".gpuprof", write_after=1,
                           write_delay_ms=12000, write_calls=1)
    env.update({"GPUPROF_RING_CHUNKS": "2", "GPUPROF_TRACE": "kernel",
                "GPUPROF_FLUSH_MS": "1000"})
    run = traced(tools, [tools.app("burst_paced"), str(n), "2000", "14000"], how="preload",
                 env=env)
    expect_status(run, 0)
    expect_files(run, 1)
    launches = run.truth.get("kernel.total")
    js = tools.export_json(run.files)
    lost = js.get("lost", {})
    ring = lost.get("ring_full", 0)
    got = js.get("counts", {}).get("kernel", 0)
    errs = []
    if launches != n + 1:
        errs.append("the program reports %s launches, expected %d" % (launches, n + 1))
    if not faults_injected(log, "write-delay"):
        errs.append("the writer was never stalled (no write-delay in the shim's log)")
    if not ring:
        errs.append("nothing counted as ring_full: the ring did not overflow")
    if other_losses(lost, "ring_full"):
        errs.append("losses of other causes: %s" % other_losses(lost, "ring_full"))
    if launches is not None and got + ring != launches:
        errs.append("kernels %d + ring_full %d = %d, expected exactly %d launches"
                    % (got, ring, got + ring, launches))
    if not all(f.get("finished") for f in js.get("files", [])):
        errs.append("trace not finished: %s" % js.get("files"))
    if len(gp_lines(run.err)) > 1:
        errs.append("more than one gpuprof line: %s" % gp_lines(run.err))
    if errs:
        raise Fail("; ".join(errs))
    tools.report(run.files)
    print("# ring overflow: %d of %d kernels recorded, %d counted as ring full"
          % (got, launches, ring))


def fault_write_eio(persistent):
    """Writes of the trace fail with EIO (the fault shim) once 64 KiB are
    written: once (then the file system works again), or every write from
    then on.  The program's output and exit status are unchanged, one line
    says that the trace cannot be written, and the trace reads to its last
    whole chunk.  Once: it is finished and counts every record it could not
    write as a write error (kernels + write errors = launches, plus the
    few other records of the chunks not written).  From then on: the
    final chunk cannot be written either, so the trace ends unfinished at
    a chunk boundary, with nothing partial after it."""
    def t(tools):
        n = 200000
        faults = {"write_suffix": ".gpuprof", "write_after": 65536, "write_errno": errno.EIO}
        if not persistent:
            faults["write_calls"] = 1
        env, log = with_faults(tools, **faults)
        env.update({"GPUPROF_TRACE": "kernel", "GPUPROF_FLUSH_MS": "100"})
        run = traced(tools, [tools.app("sig_after_burst"), str(n), "exit"], how="preload",
                     env=env)
        expect_status(run, 0)
        if run.truth.get("kernel.total") != n:
            raise Fail("the program reports %s launches, expected %d"
                       % (run.truth.get("kernel.total"), n))
        expect_files(run, 1)
        js = tools.export_json(run.files)
        f = (js.get("files") or [{}])[0]
        lost = js.get("lost", {})
        got = js.get("counts", {}).get("kernel", 0)
        lines = gp_lines(run.err)
        errs = []
        if not faults_injected(log, "write-errno"):
            errs.append("no write failed (no write-errno in the shim's log)")
        if len(lines) != 1 or "Input/output error" not in lines[0]:
            errs.append("expected one gpuprof line naming the I/O error, got %s" % lines)
        if not 0 < got < n:
            errs.append("%d kernels in the trace, expected some but fewer than %d" % (got, n))
        if f.get("truncated") or f.get("bytes_unread"):
            errs.append("the trace does not end at a whole chunk: %s" % f)
        if persistent:
            if f.get("finished"):
                errs.append("the trace is finished although no write succeeds")
        else:
            we = lost.get("write_error", 0)
            if not f.get("finished"):
                errs.append("trace not finished: %s" % f)
            if other_losses(lost, "write_error"):
                errs.append("losses of other causes: %s" % other_losses(lost, "write_error"))
            if not n <= got + we <= n + 16:
                errs.append("kernels %d + write errors %d, expected %d (+ a few other records)"
                            % (got, we, n))
        if errs:
            raise Fail("; ".join(errs))
        tools.report(run.files)
    return t


def t_fault_memory_ring(tools):
    """Host memory short when tracing starts: the recorder's ring (16 x 1
    MiB) cannot be allocated.  One line, no trace, the program runs
    untraced with its output and exit status unchanged.

    The fault shim makes only the recorder's own allocations fail (malloc
    over 8 MiB called from libgpuprof.so).  An address-space limit (ulimit
    -v, prlimit --as) cannot do that: cuInit reserves tens of GiB of virtual
    address space for unified addressing, so any limit low enough for the
    recorder to notice makes CUDA itself fail first."""
    env, log = with_faults(tools, alloc_caller="libgpuprof.so", malloc_over=8 << 20)
    run = traced(tools, [tools.app("sig_after_burst"), "1000", "exit"], how="preload", env=env)
    expect_status(run, 0)
    errs = []
    if run.truth.get("kernel.total") != 1000:
        errs.append("the program reports %s launches" % run.truth.get("kernel.total"))
    if run.files:
        errs.append("a trace was written: %s" % run.files)
    if not faults_injected(log, "malloc"):
        errs.append("no allocation was refused (no malloc in the shim's log)")
    lines = gp_lines(run.err)
    if len(lines) != 1 or "out of memory for the trace ring" not in lines[0]:
        errs.append("expected one 'out of memory for the trace ring' line, got %s" % lines)
    if errs:
        raise Fail("; ".join(errs))


def t_fault_memory_cupti(tools):
    """Host memory short for CUPTI's activity buffers: the recorder maps
    each one (4 MiB), and every such mmap fails (the fault shim, for
    libgpuprof.so's own anonymous mmaps over 64 KiB; see
    t_fault_memory_ring for why not an address-space limit).  CUPTI then
    has nowhere to put records and drops them.  The program's output and
    exit status are unchanged, at most one gpuprof line, and the finished
    trace counts the refused requests (no_buffer) and every launch as
    dropped by CUPTI (cupti_dropped = launches, plus the device and context
    records)."""
    n = 20000
    env, log = with_faults(tools, alloc_caller="libgpuprof.so", mmap_over=65536)
    env["GPUPROF_TRACE"] = "kernel"
    run = traced(tools, [tools.app("sig_after_burst"), str(n), "exit"], how="preload", env=env)
    expect_status(run, 0)
    if run.truth.get("kernel.total") != n:
        raise Fail("the program reports %s launches" % run.truth.get("kernel.total"))
    expect_files(run, 1)
    js = tools.export_json(run.files)
    lost = js.get("lost", {})
    got = js.get("counts", {}).get("kernel", 0)
    dropped = lost.get("cupti_dropped", 0)
    errs = []
    if not faults_injected(log, "mmap"):
        errs.append("no buffer was refused (no mmap in the shim's log)")
    if not all(f.get("finished") for f in js.get("files", [])):
        errs.append("trace not finished: %s" % js.get("files"))
    if got:
        errs.append("%d kernels recorded without any activity buffer" % got)
    if not lost.get("no_buffer"):
        errs.append("no refused buffer request counted: %s" % lost)
    if not n <= got + dropped <= n + 16:
        errs.append("kernels %d + cupti_dropped %d, expected %d (+ device and context records)"
                    % (got, dropped, n))
    if other_losses(lost, "no_buffer", "cupti_dropped"):
        errs.append("losses of other causes: %s" % other_losses(lost, "no_buffer", "cupti_dropped"))
    if len(gp_lines(run.err)) > 1:
        errs.append("more than one gpuprof line: %s" % gp_lines(run.err))
    if errs:
        raise Fail("; ".join(errs))


def t_fault_wrapper_sigint(tools, sig=signal.SIGINT):
    """SIGINT sent to `gpuprof run`: passed on, the program dies of it, its
    trace is finished, and the wrapper exits 128+N."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    p = subprocess.Popen([tools.wrapper, "run", "-o", os.path.join(tmp, "trace-%p"),
                          "--report=none", "--", tools.app("busy_gpu"), "60"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, env=clean_env(), start_new_session=True)
    try:
        for line in p.stdout:
            if line.startswith(b"COMPLETED"):
                break
        p.send_signal(sig)
        rest, err = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        raise Fail("gpuprof run did not end within 60 s of the signal")
    errs = []
    if p.returncode != 128 + sig:
        errs.append("gpuprof run exited %d, expected %d; stderr %s"
                    % (p.returncode, 128 + sig, tail(err)))
    files = sorted(glob.glob(os.path.join(tmp, "*.gpuprof")))
    if len(files) != 1:
        errs.append("%d trace files" % len(files))
    else:
        js = tools.export_json(files)
        if not all(f.get("finished") for f in js.get("files", [])):
            errs.append("trace not finished")
        if not js.get("counts", {}).get("kernel"):
            errs.append("no kernels in the trace")
    if errs:
        raise Fail("; ".join(errs))


def fault_mix(mode):
    """Device resets, contexts made and destroyed, two contexts, every GPU,
    and vfork/posix_spawn/fork children: the parent's trace is complete and
    exact; children that never use CUDA write nothing."""
    def t(tools):
        run = traced(tools, [tools.app("lifecycle_mix"), mode])
        check_run(tools, run, "lifecycle_mix")
        if gp_lines(run.err):
            raise Fail("gpuprof lines on stderr: %s" % gp_lines(run.err))
    return t


def t_fault_no_dir(tools):
    """The output directory does not exist: one line, no trace, the program
    runs and exits as it would."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    e = clean_env()
    e.update({"LD_PRELOAD": tools.lib,
              "GPUPROF_OUTPUT": os.path.join(tmp, "missing", "dir", "trace-%p")})
    rc, out, err = run_cmd([tools.app("sig_after_burst"), "100", "exit"], e)
    lines = gp_lines(err)
    if rc != 0 or "TRUTH kernel.total 100" not in out:
        raise Fail("program status %d, stdout %s" % (rc, tail(out)))
    if len(lines) != 1 or "cannot create" not in lines[0]:
        raise Fail("expected one 'cannot create' line, got %s" % lines)
    if glob.glob(os.path.join(tmp, "**", "*.gpuprof"), recursive=True):
        raise Fail("a trace was written")


def t_fault_readonly_dir(tools):
    """The output directory is a read-only file system: one line, no trace,
    the program unchanged."""
    if os.geteuid() != 0:
        raise Skip("mounting a read-only tmpfs needs root")
    mnt = tempfile.mkdtemp(prefix="gpuprof-ro.")
    tools.tmpdirs.append(mnt)
    if subprocess.call(["mount", "-t", "tmpfs", "-o", "ro,size=64k", "tmpfs", mnt]) != 0:
        raise Skip("cannot mount a read-only tmpfs")
    try:
        e = clean_env()
        e.update({"LD_PRELOAD": tools.lib, "GPUPROF_OUTPUT": os.path.join(mnt, "trace-%p")})
        rc, out, err = run_cmd([tools.app("sig_after_burst"), "100", "exit"], e)
        lines = gp_lines(err)
        if rc != 0 or "TRUTH kernel.total 100" not in out:
            raise Fail("program status %d, stdout %s" % (rc, tail(out)))
        if len(lines) != 1 or "cannot create" not in lines[0]:
            raise Fail("expected one 'cannot create' line, got %s" % lines)
        if os.listdir(mnt):
            raise Fail("something was written: %s" % os.listdir(mnt))
    finally:
        subprocess.call(["umount", "-l", mnt])


def t_fault_exit_threads(tools):
    """exit() while four threads still launch kernels: no hang, exit status
    0, a readable trace with its end record."""
    run = traced(tools, [tools.app("exit_threads")])
    expect_status(run, 0)
    expect_files(run, 1)
    js = tools.export_json(run.files)
    errs = []
    if not all(f.get("finished") for f in js.get("files", [])):
        errs.append("trace not finished: %s" % js.get("files"))
    if js.get("counts", {}).get("kernel", 0) < 1:
        errs.append("no kernels: %s" % js.get("counts"))
    if len(gp_lines(run.err)) > 1:
        errs.append("stderr: %s" % gp_lines(run.err))
    if errs:
        raise Fail("; ".join(errs))
    print("# exit with launching threads: %d kernels, lost %s"
          % (js.get("counts", {}).get("kernel", 0), js.get("lost", {}).get("total")))


# ---------------------------------------------------------------- always on

class AlwaysOn:
    """always_on in its "windows" mode under a recorder configured by env,
    driven line by line; control() runs `gpuprof VERB ... PID`."""

    def __init__(self, tools, env, tmp, mode="windows"):
        self.tools = tools
        self.cenv = clean_env()
        self.cenv["GPUPROF_CONTROL_DIR"] = env["GPUPROF_CONTROL_DIR"]
        self.out = self.err = ""
        self.p = subprocess.Popen([tools.app("always_on"), mode], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                  universal_newlines=True, start_new_session=True)
        self.done = False
        try:
            ln = self.line()
            if ln.startswith("SKIP "):
                raise Skip(ln[5:])
            if ln != "ready":
                raise Fail("always_on printed %r" % ln)
        except BaseException:
            self.kill()
            raise

    def line(self):
        ln = self.p.stdout.readline()
        if not ln:
            raise Fail("always_on ended early; stderr: %s" % tail(self.p.stderr.read()))
        return ln.strip()

    def say(self, cmd):
        self.p.stdin.write(cmd + "\n")
        self.p.stdin.flush()
        ln = self.line()
        if ln != "done":
            raise Fail("always_on answered %r to %r" % (ln, cmd))

    def control(self, *args):
        rc, out, err = run_cmd([self.tools.wrapper] + list(args) + [str(self.p.pid)], self.cenv,
                               TOOL_TIMEOUT)
        if rc != 0:
            raise Fail("gpuprof %s exited %d: %s" % (" ".join(args), rc, tail(err)))
        return out

    def quit(self):
        """Ends the program; returns its truth."""
        self.out, self.err = self.p.communicate("quit\n", timeout=RUN_TIMEOUT)
        self.done = True
        if self.p.returncode != 0:
            raise Fail("always_on exited %d; stderr: %s" % (self.p.returncode, tail(self.err)))
        truth, _ = parse_truth(self.out)
        return truth

    def kill(self):
        if not self.done:
            try:
                os.killpg(self.p.pid, signal.SIGKILL)
            except OSError:
                pass
            self.p.wait()
            self.done = True


def always_on_env(tools, tmp, extra):
    env = clean_env()
    env.update({"LD_PRELOAD": tools.lib, "GPUPROF_CONTROL_DIR": os.path.join(tmp, "ctl"),
                "GPUPROF_FLUSH_MS": "200"})
    env.update(extra)
    return env


def site_launches(js, fn):
    """Launches whose launch site has a frame naming fn (JSON launch_sites)."""
    return sum(s.get("launches", 0) for s in js.get("launch_sites", [])
               if any(fn in f for f in s.get("frames", [])))


def t_always_on_windows(tools):
    """A program started dormant (LD_PRELOAD, GPUPROF_START=dormant); from
    another process `gpuprof start` and `gpuprof stop` twice: the trace
    holds exactly the launches made inside the two windows and their API
    calls (cudaLaunchKernel, cudaDeviceSynchronize), as two capture
    ranges, and nothing was written before the first start.  The recorder
    attaches to CUPTI only at the first start: the devices it reports then
    are in the trace."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    env = always_on_env(tools, tmp, {"GPUPROF_START": "dormant",
                                     "GPUPROF_OUTPUT": os.path.join(tmp, "trace-%p")})
    a = AlwaysOn(tools, env, tmp)
    try:
        a.say("out 40")
        st = a.control("status")
        if not re.search(r"^state:?\s+dormant$", st, re.M):
            raise Fail("status before start: %s" % tail(st))
        if glob.glob(os.path.join(tmp, "*.gpuprof")):
            raise Fail("a trace file exists before gpuprof start")
        a.control("start")
        a.say("in 100")
        if not re.search(r"^state:?\s+tracing$", a.control("status"), re.M):
            raise Fail("status after start is not tracing")
        a.control("stop")
        a.say("out 50")
        a.control("start")
        a.say("in 70")
        a.control("stop")
        a.say("out 30")
        truth = a.quit()
    finally:
        a.kill()
    files = sorted(glob.glob(os.path.join(tmp, "*.gpuprof")))
    if len(files) != 1:
        raise Fail("%d trace files: %s" % (len(files), files))
    js = tools.export_json(files)
    errs = health(js) + compare(truth, js)
    ranges = js.get("processes", [{}])[0].get("capture_ranges", [])
    if [r.get("kind") for r in ranges] != ["control", "control"]:
        errs.append("capture ranges: %s" % ranges)
    if errs:
        raise Fail("; ".join(errs))
    rep = tools.report(files)
    if "Windows:      2 (gpuprof start/stop)" not in rep:
        raise Fail("report does not name the windows: %s" % tail(rep))
    print("# dormant, two windows: %d of 290 launches traced, windows %s"
          % (truth.get("kernel.count.aon_work", -1),
             ["%.1f ms" % ((r["end_ns"] - r["start_ns"]) / 1e6) for r in ranges]))


def t_always_on_launcher(tools):
    """A dormant launcher (always_on launcher: the device count only, no
    CUDA context, as torchrun's parent): `gpuprof list` says it has no CUDA
    context; `gpuprof start` says so and writes no file (the output
    template's empty %q{RANK} would have named one); a window without GPU
    work leaves none; GPU work inside a window creates the file, which
    holds exactly that window's launches."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    env = always_on_env(tools, tmp, {"GPUPROF_START": "dormant",
                                     "GPUPROF_OUTPUT": os.path.join(tmp, "dd-%q{RANK}")})
    env.pop("RANK", None)
    a = AlwaysOn(tools, env, tmp, mode="launcher")
    try:
        rc, out, err = run_cmd([tools.wrapper, "list"], a.cenv, TOOL_TIMEOUT)
        row = [ln for ln in out.splitlines() if ln.split()[:1] == [str(a.p.pid)]]
        if rc != 0 or len(row) != 1 or row[0].split()[2] != "no":
            raise Fail("gpuprof list: rc %d, %r; stderr %s" % (rc, out, tail(err)))
        said = a.control("start")
        if "no CUDA context yet" not in said:
            raise Fail("gpuprof start on a launcher said: %s" % tail(said))
        a.control("stop")
        if glob.glob(os.path.join(tmp, "*.gpuprof")):
            raise Fail("a window without GPU work left %s" % glob.glob(os.path.join(tmp, "*")))
        a.control("start")
        a.say("gpu 50")
        if len(glob.glob(os.path.join(tmp, "*.gpuprof"))) != 1:
            raise Fail("GPU work in the window made no file: %s" % os.listdir(tmp))
        st = a.control("status")
        if not re.search(r"^cuda_context:?\s+yes$", st, re.M):
            raise Fail("status after GPU work: %s" % tail(st))
        a.control("stop")
        a.say("gpu 20")
        truth = a.quit()
    finally:
        a.kill()
    files = glob.glob(os.path.join(tmp, "*.gpuprof"))
    if len(files) != 1:
        raise Fail("%d trace files: %s" % (len(files), files))
    js = tools.export_json(files)
    truth["kernel.count.aon_work"] = 50
    errs = health(js) + compare(truth, js)
    if errs:
        raise Fail("; ".join(errs))
    print("# dormant launcher: no file until its GPU work, then %s kernels in its window"
          % js.get("counts", {}).get("kernel"))


def dormant_run(tools, extra, steps, name="trace-%p"):
    """always_on started dormant with env extra, its output template name;
    steps: ("say", line) to the program or ("control", verb) through
    gpuprof.  Returns (tmp, truth)."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    env = always_on_env(tools, tmp, dict(extra, GPUPROF_START="dormant",
                                         GPUPROF_OUTPUT=os.path.join(tmp, name)))
    a = AlwaysOn(tools, env, tmp)
    try:
        for what, arg in steps:
            if what == "say":
                a.say(arg)
            else:
                a.control(arg)
        truth = a.quit()
    finally:
        a.kill()
    return tmp, truth


def window_site_errs(tools, tmp, wants, report):
    """Errors of the files win-N.gpuprof: each holds exactly wants[N - 1]
    kernels, all launched from aon_launch (and, with report, says so)."""
    errs = []
    for n, want in enumerate(wants, 1):
        f = os.path.join(tmp, "win-%d.gpuprof" % n)
        if not os.path.exists(f):
            raise Fail("no %s" % f)
        js = tools.export_json([f])
        errs += ["win-%d: %s" % (n, e) for e in health(js)]
        kernels = js.get("counts", {}).get("kernel", 0)
        got = site_launches(js, "aon_launch")
        if kernels != want or got != want:
            errs.append("win-%d: %d kernels, %d of them launched from aon_launch, expected %d"
                        % (n, kernels, got, want))
        rep = tools.report([f]) if report else ""
        if report and ("Launch sites" not in rep or "aon_launch" not in rep):
            errs.append("win-%d: the report names no launch site aon_launch: %s"
                        % (n, tail(rep, 1500)))
    return errs


def t_always_on_window_stacks(tools):
    """Dormant with --backtrace=kernel and a file per window (%n): the same
    launch site in both windows, so its call stack is recorded in the first;
    each window's file still names it for every launch of that window."""
    tmp, _ = dormant_run(tools, {"GPUPROF_BACKTRACE": "kernel"},
                         [("say", "out 20"), ("control", "start"), ("say", "in 100"),
                          ("control", "stop"), ("say", "out 10"), ("control", "start"),
                          ("say", "in 70"), ("control", "stop")], "win-%n")
    errs = window_site_errs(tools, tmp, (100, 70), True)
    if errs:
        raise Fail("; ".join(errs))
    print("# dormant, --backtrace=kernel, a file per window: the launch site in both files")


def t_always_on_graph_windows(tools):
    """Dormant with --backtrace=kernel and a file per window: a graph
    captured in the first window (its nodes made in aon_launch) and
    launched again in the second; the second window's file still names
    aon_launch as the launch site of the graph's kernels."""
    tmp, truth = dormant_run(tools, {"GPUPROF_BACKTRACE": "kernel"},
                             [("control", "start"), ("say", "in capture 12"),
                              ("control", "stop"), ("say", "out 5"), ("control", "start"),
                              ("say", "in graph"), ("control", "stop")], "win-%n")
    if truth.get("kernel.count.aon_work") != 24:
        raise Fail("the program counts %s launches in windows, expected 24" % truth)
    errs = window_site_errs(tools, tmp, (12, 12), False)
    if errs:
        raise Fail("; ".join(errs))
    print("# dormant, a graph made in window 1 and launched in window 2: its launch site in both")


def t_always_on_metrics(tools):
    """Dormant with --metrics (which attaches CUPTI at cuInit): launches
    outside the window are neither traced nor profiled; inside it the first
    launch of the kernel is profiled, its values in the trace, and every
    launch of the window traced (the profiled one with its time)."""
    tmp, truth = dormant_run(tools, {"GPUPROF_METRICS": "roofline"},
                             [("say", "out 40"), ("control", "start"), ("say", "in 60"),
                              ("control", "stop"), ("say", "out 30")])
    # The API calls of windows: always-on-windows.
    truth = {k: v for k, v in truth.items() if not k.startswith("api.")}
    files = sorted(glob.glob(os.path.join(tmp, "*.gpuprof")))
    if len(files) != 1:
        raise Fail("%d trace files: %s" % (len(files), files))
    js = tools.export_json(files)
    errs = health(js) + compare(truth, js)
    mx = js.get("metrics") or {}
    ks = mx.get("kernels", [])
    if mx.get("status") != 0 or mx.get("profiled") != 1 or len(ks) != 1 or \
            "aon_work" not in ks[0].get("name", ""):
        errs.append("metrics: status %s, %s profiled, kernels %s; expected aon_work once"
                    % (mx.get("status"), mx.get("profiled"), [k.get("name") for k in ks]))
    elif not ks[0].get("time_ns") or ks[0].get("values_sum", {}).get("gpu__time_duration.sum", 0) <= 0:
        errs.append("metrics of aon_work without a duration: %s" % ks[0])
    if errs:
        raise Fail("; ".join(errs))
    print("# dormant with --metrics: %s kernels in the window, %s profiled"
          % (js.get("counts", {}).get("kernel"), mx.get("profiled")))


def t_always_on_flight_stacks(tools):
    """A 1 MiB flight recorder with --backtrace=kernel: the call stack is
    recorded at the first launches, whose chunks are dropped long before
    `gpuprof dump`; the dump still names the launch site of the kernels it
    holds."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    env = always_on_env(tools, tmp, {"GPUPROF_FLIGHT_RECORDER": "1M",
                                     "GPUPROF_BACKTRACE": "kernel", "GPUPROF_FLUSH_MS": "100",
                                     "GPUPROF_OUTPUT": os.path.join(tmp, "fr-%n")})
    a = AlwaysOn(tools, env, tmp)
    try:
        a.say("in 10")
        time.sleep(0.5)      # the stack's records reach the flight memory
        a.say("in 200000")
        out = a.control("dump")
        a.quit()
    finally:
        a.kill()
    f = os.path.join(tmp, "fr-1.gpuprof")
    if not os.path.exists(f):
        raise Fail("no %s; dump said: %s" % (f, tail(out)))
    js = tools.export_json([f])
    errs = health(js)
    fl = js.get("processes", [{}])[0].get("flight") or {}
    if fl.get("trigger") != "request" or not fl.get("dropped_records"):
        errs.append("flight record %s: expected a request dump that dropped older records" % fl)
    kernels = js.get("counts", {}).get("kernel", 0)
    got = site_launches(js, "aon_launch")
    # The first kept kernel's stack link may sit at the end of a dropped chunk.
    if not 0 < kernels < 200010 or got not in (kernels, kernels - 1):
        errs.append("%d kernels in the dump, %d of them launched from aon_launch"
                    % (kernels, got))
    rep = tools.report([f])
    if "aon_launch" not in rep:
        errs.append("the report names no launch site aon_launch: %s" % tail(rep, 1500))
    if errs:
        raise Fail("; ".join(errs))
    print("# flight recorder 1 MiB, --backtrace=kernel: %d kernels in the dump, %d with their "
          "launch site, %d older records dropped" % (kernels, got, fl.get("dropped_records")))


def t_always_on_flight_api(tools):
    """A flight recorder's dumps hold the API calls of the launches they
    hold, as a trace without a flight recorder does: 64 MiB keep the whole
    run, so the dump asked for after the work and the dump at exit each
    hold every launch and its cudaLaunchKernel call."""
    tmp = tempfile.mkdtemp(prefix="gpuprof-gpu-test.")
    tools.tmpdirs.append(tmp)
    env = always_on_env(tools, tmp, {"GPUPROF_FLIGHT_RECORDER": "64M",
                                     "GPUPROF_OUTPUT": os.path.join(tmp, "fr-%n")})
    a = AlwaysOn(tools, env, tmp)
    try:
        a.say("in 300")
        out = a.control("dump")
        truth = a.quit()
    finally:
        a.kill()
    want = {k: truth.get(k) for k in ("kernel.count.aon_work", "api.count.cudaLaunchKernel")}
    if want["api.count.cudaLaunchKernel"] != 300:
        raise Fail("the program counts %s" % want)
    errs = []
    for n, trigger in ((1, "request"), (2, "exit")):
        f = os.path.join(tmp, "fr-%d.gpuprof" % n)
        if not os.path.exists(f):
            raise Fail("no %s; dump said: %s" % (f, tail(out)))
        js = tools.export_json([f])
        e = health(js) + compare(want, js)
        fl = js.get("processes", [{}])[0].get("flight") or {}
        if fl.get("trigger") != trigger:
            e.append("flight record %s: expected trigger %s" % (fl, trigger))
        errs += ["fr-%d: %s" % (n, x) for x in e]
    if errs:
        raise Fail("; ".join(errs))
    print("# flight recorder: 300 launches and their 300 cudaLaunchKernel calls in both dumps")


def t_always_on_flight_crash(tools):
    """A flight recorder of 1 MiB; the program sets memory in a known
    sequence, then crashes: the dump holds exactly the last memsets of the
    sequence, in order, the report names the window and the records dropped
    by design, and nothing counts as lost."""
    n = 300000
    run = traced(tools, [tools.app("always_on"), "crash", str(n)], how="preload",
                 env={"GPUPROF_FLIGHT_RECORDER": "1M", "GPUPROF_FLUSH_MS": "200"})
    if run.rc != -signal.SIGSEGV:
        raise Fail("exit status %d, expected death by SIGSEGV; %s" % (run.rc, run.context()))
    if run.truth.get("memset.sequence") != n:
        raise Fail("program printed no sequence truth: %s" % tail(run.out))
    expect_files(run, 1)
    js = tools.export_json(run.files)
    errs = health(js)
    fl = js.get("processes", [{}])[0].get("flight")
    if not fl or fl.get("trigger") != "fatal-signal" or fl.get("detail") != signal.SIGSEGV:
        errs.append("flight record: %s" % fl)
    elif not fl.get("dropped_records"):
        errs.append("a 1 MiB flight recorder dropped nothing of %d memsets" % n)
    rows = [r for r in tools.export_csv(run.files) if r.get("kind", "").lower() == "memset"]
    rows.sort(key=lambda r: int(r["start_ns"] if "start_ns" in r else r["start"]))
    sizes = [int(r["bytes"]) for r in rows]
    k = len(sizes)
    want = [4 * (i + 1) for i in range(n - k, n)]
    if not 0 < k < n:
        errs.append("%d memsets in the dump" % k)
    elif sizes != want:
        bad = next(i for i in range(k) if sizes[i] != want[i])
        errs.append("memset %d of the dump has %d bytes, expected %d (the sequence's %d-th)"
                    % (bad, sizes[bad], want[bad], n - k + bad))
    if errs:
        raise Fail("; ".join(errs))
    rep = tools.report(run.files)
    for want_s in ("Flight dump:  dump 1, the process dying of SIGSEGV", "dropped by design",
                   "Lost records: none"):
        if want_s not in rep:
            raise Fail("report lacks %r: %s" % (want_s, tail(rep, 1500)))
    print("# flight recorder 1 MiB: the last %d of %d memsets, %d older records dropped"
          % (k, n, fl.get("dropped_records")))


def flight_trigger(how):
    """A flight recorder told to dump on an NVTX mark or a CUDA error: the
    trigger writes a dump naming it (a failed cudaMalloc: its error code),
    the exit writes another; the program runs and exits unchanged."""
    def t(tools):
        dump_on = "nvtx:dump_here" if how == "nvtx" else "cuda-error"
        # A file per dump: the trigger's, then the exit's.
        run = traced(tools, [tools.app("always_on"), "trigger", how], how="preload",
                     env={"GPUPROF_FLIGHT_RECORDER": "8M", "GPUPROF_DUMP_ON": dump_on,
                          "GPUPROF_FLUSH_MS": "100"}, name="trace-%p-%n")
        expect_status(run, 0)
        if "trigger.error" not in run.truth:
            raise Fail("program printed no truth: %s" % tail(run.out))
        errs = []
        got = {}
        for f in run.files:
            js = tools.export_json([f])
            fl = js.get("processes", [{}])[0].get("flight") or {}
            got[fl.get("trigger")] = fl
        want = "nvtx" if how == "nvtx" else "cuda-error"
        if want not in got:
            errs.append("no dump by %s among %s" % (want, sorted(got)))
        elif how == "cuda-error" and got[want].get("detail") != run.truth["trigger.error"]:
            errs.append("dump detail %s, the failed call returned %s"
                        % (got[want].get("detail"), run.truth["trigger.error"]))
        if "exit" not in got:
            errs.append("no dump at exit among %s" % sorted(got))
        if how == "cuda-error" and run.truth["trigger.error"] == 0:
            errs.append("the huge cudaMalloc did not fail")
        if errs:
            raise Fail("; ".join(errs))
    return t


def t_overtime(tools):
    """--gpu-metrics --gpu-telemetry on test/apps/overtime.cu (three rounds
    of a DRAM-bound copy and an FMA loop, about 200 ms each).  The report's
    averages over each kernel's executions must show the phases: the copy's
    sampled DRAM read + write bandwidth within 10 % of its bytes over its
    kernel time (activity records), its SM issue below 30 %; the FMA loop's
    SM issue above 70 % and its DRAM bandwidth below 2 % of the copy's.
    Since each average weighs samples by their overlap with the kernels, a
    misalignment of more than two sampling intervals per boundary would
    move them past these bounds (a copy run is several ms, a phase 200 ms).
    Telemetry: power between 20 W and 2000 W, the SM clock's maximum within
    15 % of nvidia-smi's clocks.max.sm or its reading under load, the
    temperature between 10 and 110 C.  Counters restricted to admins: one
    stderr line, and the test then checks only the telemetry.  And from
    the samples and the kernel records (CSV exports), phase by phase
    (test/gpu/overtime_check.py): DRAM bandwidth rises and falls within two
    sampling intervals of each copy phase's first kernel start and last
    kernel end, SM issue within two of each FMA phase's."""
    app = tools.app("overtime")
    run = traced(tools, [app], opts=["--gpu-metrics", "--gpu-metrics-interval=1ms",
                                     "--gpu-telemetry=50"])
    expect_status(run, 0)
    expect_files(run, 1)
    # The golden trace of the GPU over time (test/golden/run.sh): kept on request.
    keep = os.environ.get("GPUPROF_GOLDEN_KEEP")
    if keep:
        shutil.copy(run.files[0], os.path.join(keep, "overtime_gpu.gpuprof"))
    rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline", "--top=0"] + run.files)
    if rc != 0:
        raise Fail("report exited %d: %s" % (rc, tail(err)))
    errs = []
    # The CONFIG record says which samplers were on (and the report, in its header).
    if not re.search(r"^Traced:.* gpu-metrics gpu-telemetry( \(|$)", out, re.M):
        errs.append("the header's Traced line does not name the samplers: %s"
                    % "".join(l for l in out.splitlines(True) if l.startswith("Traced:")))
    if "did not stop" in run.err:
        errs.append("the sampler was given up at exit: %s" % tail(run.err))
    restricted = "ERR_NVGPUCTRPERM" in run.err
    if restricted and run.err.count("GPU metrics over time are off") != 1:
        errs.append("restricted counters said more than one line: %s" % tail(run.err))
    sec = out.split("The GPU over time", 1)
    if len(sec) != 2:
        raise Fail("the report has no GPU over time section: %s" % tail(out, 3000))
    sec = sec[1]
    def row(table_head, kernel):
        part = sec.split(table_head, 1)
        if len(part) != 2:
            return None
        for line in part[1].splitlines():
            # Kernels are listed by their mangled names.
            if line.count("|") >= 7 and kernel in line.rsplit("|", 1)[1]:
                return [c.strip() for c in line.split("|")]
            if not line.strip():
                break
        return None
    def time_ns(txt):
        m = re.match(r"([0-9.]+) (ns|µs|us|ms|s)$", txt)
        if not m:
            raise Fail("cannot read the time %r" % txt)
        return float(m.group(1)) * {"ns": 1, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}[m.group(2)]
    if not restricted:
        head = "pm averaged over each kernel's executions"
        c, f = row(head, "copy_f4"), row(head, "fma_loop")
        if not c or not f:
            errs.append("no per-kernel rows for copy_f4 and fma_loop: %s" % tail(sec, 3000))
        else:
            # Time | Runs | Samples | SM active % | SM issue % | DRAM read GB/s | DRAM write GB/s | Kernel
            cbw = (float(c[5]) + float(c[6])) * 1e9
            truth_bw = run.truth["overtime.copy_bytes"] * int(c[1]) / (time_ns(c[0]) / 1e9)
            if abs(cbw - truth_bw) > 0.10 * truth_bw:
                errs.append("copy: sampled DRAM %.1f GB/s, bytes over kernel time %.1f GB/s"
                            % (cbw / 1e9, truth_bw / 1e9))
            if float(c[4]) >= 30:
                errs.append("copy: SM issue %s %%, expected < 30" % c[4])
            if float(f[4]) <= 70:
                errs.append("fma: SM issue %s %%, expected > 70" % f[4])
            fbw = (float(f[5]) + float(f[6])) * 1e9
            if fbw > 0.02 * cbw:
                errs.append("fma: DRAM %.2f GB/s, more than 2 %% of the copy's" % (fbw / 1e9))
            # A sample every 1 ms: a kernel's average rests on about its time in
            # ms of samples (runs shorter than the interval share samples).
            for r in (c, f):
                if int(r[2]) < time_ns(r[0]) / 1e6 / 2:
                    errs.append("fewer samples than half the kernel's milliseconds behind "
                                "its average: %s" % r)
        # The switch at each phase's boundaries, from the samples and kernel records.
        import overtime_check
        rc, sout, serr = run_cmd([tools.analyzer, "export", "--format", "csv", "--table",
                                  "gpu_samples"] + run.files, clean_env(), TOOL_TIMEOUT)
        if rc != 0:
            errs.append("export --table gpu_samples exited %d: %s" % (rc, tail(serr)))
        else:
            samples = list(csv.DictReader(io.StringIO(sout)))
            for ok, text in overtime_check.check(samples, tools.export_csv(run.files)):
                if not ok:
                    errs.append(text)
    def metric(name):
        m = re.search(r"^%s\s*\|[^|]*\|\s*([0-9.]+)\s*\|\s*([0-9.]+)\s*\|\s*([0-9.]+)\s*\|" % re.escape(name),
                      sec, re.M)
        return [float(x) for x in m.groups()] if m else None
    pw, clk, temp = metric("power"), metric("SM clock"), metric("temperature")
    if not pw or not (20 <= pw[0] <= 2000):
        errs.append("power %s W not plausible" % pw)
    if not temp or not (10 <= temp[0] <= 110):
        errs.append("temperature %s C not plausible" % temp)
    rc, smi, _ = run_cmd(["nvidia-smi", "--query-gpu=clocks.max.sm,clocks.sm", "--format=csv,noheader,nounits", "-i", "0"])
    if not clk:
        errs.append("no SM clock in the telemetry")
    elif rc == 0 and smi.strip():
        mx, cur = [float(x) for x in smi.split(",")[:2]]
        if not (abs(clk[2] - mx) <= 0.15 * mx or abs(clk[2] - cur) <= 0.15 * max(cur, 1)):
            errs.append("SM clock max %.0f MHz; nvidia-smi max %.0f, now %.0f" % (clk[2], mx, cur))
    if errs:
        raise Fail("; ".join(errs))



def t_overtime_exit(tools):
    """The end of a trace with the GPU over time never waits on the sampler
    nor crashes the program: test/apps/overtime.cu "short" (one round of
    20 ms phases: it ends while PM sampling is being set up), "short
    reset" (cudaDeviceReset last) and "reset" (the whole run, then the
    reset), each under --gpu-metrics --gpu-telemetry=50,gpm: exit status
    0, no line of a sampler given up or of a crash, one trace the report
    reads, and the traced run at most 4 s longer than the same run
    untraced (the sampler's exit handler waits 2.5 s at most)."""
    app = tools.app("overtime")
    errs = []
    for args in (["short"], ["short", "reset"], ["reset"]):
        t0 = time.monotonic()
        rc, _, err = run_cmd([app] + args, clean_env(), RUN_TIMEOUT)
        plain = time.monotonic() - t0
        if rc != 0:
            raise Fail("overtime %s untraced exited %d: %s" % (" ".join(args), rc, tail(err)))
        t0 = time.monotonic()
        run = traced(tools, [app] + args, opts=["--gpu-metrics", "--gpu-telemetry=50,gpm"])
        secs = time.monotonic() - t0
        what = "overtime %s" % " ".join(args)
        if run.rc != 0:
            errs.append("%s: exit status %d; %s" % (what, run.rc, tail(run.err)))
            continue
        for bad in ("did not stop", "did not finish", "double free", "corruption"):
            if bad in run.err:
                errs.append("%s: stderr says '%s': %s" % (what, bad, tail(run.err)))
        if secs > plain + 4:
            errs.append("%s: %.1f s traced, %.1f s untraced" % (what, secs, plain))
        if len(run.files) != 1:
            errs.append("%s: %d trace files" % (what, len(run.files)))
            continue
        rc, out, err = run_cmd([tools.analyzer, "report", "--no-timeline", "--top=0"] + run.files)
        if rc != 0:
            errs.append("%s: report exited %d: %s" % (what, rc, tail(err)))
        elif args == ["reset"] and "The GPU over time" not in out:
            errs.append("%s: no GPU over time section: %s" % (what, tail(out, 2000)))
    if errs:
        raise Fail("; ".join(errs))


TESTS = [
    ("basic_shared", t_basic_shared),
    ("always-on-dump-nvtx", flight_trigger("nvtx")),
    ("always-on-dump-cuda-error", flight_trigger("cuda-error")),
    ("basic_static", simple("basic_static")),
    ("driver_only", simple("driver_only")),
    ("multistream", t_multistream),
    ("graphs-node", graphs_mode("node")),
    ("graphs-graph", graphs_mode("graph")),
    ("timing", t_timing),
    ("peer", simple("peer")),
    ("peer-staged", simple("peer_staged")),
    ("fork_exec", t_fork_exec),
    ("no_reset", no_reset([], 0)),
    ("no_reset-exit3", no_reset(["exit3"], 3)),
    ("crash", t_crash),
    # Entry points without the wrapper: each must initialize exactly once.
    ("preload-only", simple("basic_shared", how="preload")),
    ("inject-only", simple("basic_shared", how="inject")),
    ("preload+inject", simple("basic_shared", how="both")),
    ("inject-only-static", simple("basic_static", how="inject")),
    ("inject-only-driver", simple("driver_only", how="inject")),
    ("trace-kernel-only", t_trace_kernel_only),
    ("capture-profiler-stop", capture("profiler", "stop")),
    ("capture-profiler-repeat", capture("profiler", "repeat")),
    ("capture-nvtx-stop", capture("nvtx", "stop")),
    ("capture-nvtx-repeat", capture("nvtx", "repeat")),
    ("capture-none", capture("nvtx", "all")),
    # Windows record the API calls of their work as a run without one does.
    ("capture-profiler-api", capture("profiler", "stop", api=True)),
    ("capture-nvtx-api", capture("nvtx", "repeat", api=True)),
    ("capture-none-api", capture("nvtx", "all", api=True)),
    ("cupti-busy", t_cupti_busy),
    ("cupti-missing", passive("basic_shared", {"GPUPROF_CUPTI_PATH": "/nonexistent/libcupti.so.13"},
                              "cannot load")),
    ("callsites", t_callsites),
    ("callsites-static", t_callsites_static),
    ("callsites-buildid", t_callsites_buildid),
    ("nvtx-threads", t_nvtx_threads),
    ("nvtx-open", t_nvtx_open),
    ("chrome-export", t_chrome_export),
    ("memuse", t_memuse),
    ("overtime", t_overtime),
    ("overtime-exit", t_overtime_exit),
    ("torch-nvtx", t_torch_nvtx),
    ("torch-emit-nvtx", t_torch_emit_nvtx),
    ("backtrace-no-libunwind", lambda tools: check_run(
        tools, traced(tools, [tools.app("basic_shared")], opts=["--backtrace=kernel"],
                      env={"GPUPROF_LIBUNWIND": "/nonexistent/libunwind.so.8"}), "basic_shared")),
    ("torch", t_torch),
    ("torch-pysites-python", torch_pysites("python")),
    ("torch-pysites-mixed", torch_pysites("mixed")),
    ("torch-compile-sites", t_torch_compile_sites),
    ("torch-profiler", t_torch_profiler),
    ("torch-profiler-early", t_torch_profiler_early),
    ("cupti-guest", t_cupti_guest),
    ("cupti-guest-subscribed", t_cupti_guest_subscribed),
    ("cupti-guest-held", t_cupti_guest_held),
    ("torchrun-gloo", t_torchrun("gloo")),
    ("mpirun", t_mpi),
    ("torchrun-nccl", t_torchrun("nccl")),
    # The fault matrix (docs/USAGE.md, "What gpuprof guarantees").
    ("fault-init-only", t_init_only),
    ("fault-device-reset", fault_mix("reset")),
    ("fault-contexts", fault_mix("ctxloop")),
    ("fault-children", fault_mix("spawn")),
    ("fault-every-gpu", fault_mix("alldev")),
    ("fault-no-output-dir", t_fault_no_dir),
    ("fault-readonly-dir", t_fault_readonly_dir),
    ("fault-exit-threads", t_fault_exit_threads),
    ("fault-busy-gpu-kill", t_busy_gpu_kill),
    ("fault-disk-full", t_fault_disk_full),
    ("fault-fds-close", fault_fds("close")),
    ("fault-fds-dup2", fault_fds("dup2")),
    ("fault-chdir-umask", fault_fds("chdir")),
    ("fault-symlink-force", t_fault_symlink_force),
    ("fault-force-two-runs", t_fault_force_two_runs),
    ("fault-force-disk-full", t_fault_force_disk_full),
    ("fault-wrapper-cannot-create", t_fault_wrapper_cannot_create),
    ("fault-ring-overflow", t_fault_ring_overflow),
    ("fault-write-eio", fault_write_eio(False)),
    ("fault-write-eio-persistent", fault_write_eio(True)),
    ("fault-memory-ring", t_fault_memory_ring),
    ("fault-memory-cupti", t_fault_memory_cupti),
    ("fault-wrapper-sigint", t_fault_wrapper_sigint),
    ("fault-wrapper-sighup", lambda tools: t_fault_wrapper_sigint(tools, signal.SIGHUP)),
] + [("fault-signal-" + s.lower(), fault_signal(s)) for s in SIG_NAMES] + [
    ("fault-signal-term-own-handler", fault_signal("TERM", own=True)),
    ("fault-signal-segv-preload", fault_signal("SEGV", how="preload")),
    ("fault-signal-term-preload", fault_signal("TERM", how="preload")),
    ("always-on-windows", t_always_on_windows),
    ("always-on-launcher", t_always_on_launcher),
    ("always-on-window-stacks", t_always_on_window_stacks),
    ("always-on-metrics", t_always_on_metrics),
    ("always-on-graph-windows", t_always_on_graph_windows),
    ("always-on-flight-stacks", t_always_on_flight_stacks),
    ("always-on-flight-crash", t_always_on_flight_crash),
    ("always-on-flight-api", t_always_on_flight_api),
]

# Hardware metrics (--metrics): test/gpu/metrics.py.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import metrics as metrics_tests  # noqa: E402
TESTS += metrics_tests.tests(globals())
# The roofline of a PyTorch step and gpuprof calibrate: test/gpu/roofline.py.
import roofline as roofline_tests  # noqa: E402
TESTS += roofline_tests.tests(globals())
# The report's findings on problems and their fixed twins: test/gpu/findings.py.
import findings as findings_tests  # noqa: E402
TESTS += findings_tests.tests(globals())
# Fleet mode (--sample): windows exact at their edges, GPU samples in each: test/gpu/fleet.py.
import fleet as fleet_tests  # noqa: E402
TESTS += fleet_tests.tests(globals())


# ---------------------------------------------------------------- main

def gpu_absent():
    """None when an NVIDIA GPU is usable, else the reason there is none."""
    try:
        p = subprocess.run(["nvidia-smi", "-L"], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        listed = p.returncode == 0 and re.search(rb"^GPU \d+", p.stdout, re.M)
    except (OSError, subprocess.SubprocessError):
        listed = False
    if not listed:
        return "no NVIDIA GPU (nvidia-smi found no device)"
    if not os.path.exists("/dev/nvidia0"):
        return "no NVIDIA GPU (/dev/nvidia0 does not exist)"
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build", help="build directory (holds bin/, lib/, test/apps/)")
    ap.add_argument("--only", action="append", metavar="NAME",
                    help="run only this test (repeatable, or NAME,NAME,...; "
                         "a NAME with * or ? is a pattern)")
    ap.add_argument("--keep", action="store_true",
                    help="keep the temporary trace directories")
    ap.add_argument("--list", action="store_true", help="list the tests")
    args = ap.parse_args()

    tests = TESTS
    if args.only:
        names = [n[4:] if n.startswith("gpu ") else n
                 for arg in args.only for n in arg.split(",") if n]
        # A name with * or ? is a pattern: findings-* runs the findings tests.
        unknown = [n for n in names if not any(fnmatch.fnmatchcase(t[0], n) for t in TESTS)]
        if unknown:
            ap.error("unknown test %s; --list shows them" % ", ".join(unknown))
        tests = [t for t in TESTS if any(fnmatch.fnmatchcase(t[0], n) for n in names)]
    if args.list:
        for name, _ in tests:
            print(name)
        return 0

    reason = gpu_absent()
    if reason:
        for name, _ in tests:
            print("skip - gpu %s # %s" % (name, reason))
        return 0

    tools = Tools(args.build)
    failed = 0
    for name, fn in tests:
        tools.tmpdirs = []
        status = "ok"
        try:
            tools.require()
            fn(tools)
            print("ok - gpu %s" % name, flush=True)
        except Skip as e:
            print("skip - gpu %s # %s" % (name, e), flush=True)
        except Fail as e:
            status = "failed"
            failed += 1
            msg = " ".join(str(e).split())
            if tools.tmpdirs:
                msg += " [traces in %s]" % " ".join(tools.tmpdirs)
            print("not ok - gpu %s: %s" % (name, msg), flush=True)
        except Exception as e:  # a bug here must not hide the other tests
            status = "failed"
            failed += 1
            print("not ok - gpu %s: test error %s: %s" % (name, type(e).__name__, e),
                  flush=True)
        if status == "ok" and not args.keep:
            for d in tools.tmpdirs:
                shutil.rmtree(d, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
