#!/usr/bin/env python3
"""The pprof export of one trace as `go tool pprof` reads it.

usage: pprof-checks.py PROFILE.pb.gz REPORT.txt EXPORT.json NAME

Checks, through `go tool pprof -top` and `-traces` (the real tool):
  - the total gpu_time and launches equal the sums of the report's
    "CUDA activity summary" (every kernel, copy, memset and whole graph);
  - each kernel of the JSON export has a leaf of its name whose flat
    gpu_time and launches are the kernel's total_ns and count;
  - each copy direction and the memsets have their "[memcpy KIND]" and
    "[memset]" leaves with their totals;
  - -traces lists samples whose values add up to the total, each with
    the pid label.
Prints TAP lines; exit status 1 when one fails.
"""
import json
import os
import re
import subprocess
import sys


def pprof(*args):
    env = dict(os.environ)
    env.setdefault("HOME", os.environ.get("TMPDIR", "/tmp"))
    r = subprocess.run(["go", "tool", "pprof", "-symbolize=none"] + list(args),
                       capture_output=True, text=True, env=env, timeout=120)
    if r.returncode != 0:
        raise RuntimeError("go tool pprof %s failed: %s" % (" ".join(args), r.stderr[:400]))
    return r.stdout


def top(path, index):
    """{function name: flat value} and the total, from -top."""
    unit = "-unit=ns" if index == "gpu_time" else "-unit=count"
    out = pprof("-top", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0", "-sample_index=" + index, unit, path)
    total = None
    flat = {}
    for line in out.splitlines():
        m = re.search(r"of (\d+)(ns)? total", line)
        if m:
            total = int(m.group(1))
        m = re.match(r"\s*(\d+)(ns)?\s+[\d.]+%\s+[\d.]+%\s+(\d+)(ns)?\s+[\d.]+%\s+(.*)$", line)
        if m:
            flat[m.group(5)] = flat.get(m.group(5), 0) + int(m.group(1))
    if total is None:
        m = re.search(r"Total samples = (\d+)", out)
        total = int(m.group(1)) if m else 0
    return flat, total


def summary(report):
    """(total ns, count) of the report's CUDA activity summary."""
    ns = count = 0
    inside = False
    for line in open(report, encoding="utf-8"):
        if line.startswith("CUDA activity summary"):
            inside = True
            continue
        if inside:
            m = re.match(r"\s*([\d.]+) ms \|\s*(\d+) \|", line)
            if m:
                ms, frac = m.group(1).split(".")
                ns += int(ms) * 1000000 + int(frac.ljust(6, "0")[:6])
                count += int(m.group(2))
            elif not line.strip():
                break
    return ns, count


def main():
    path, report, export, name = sys.argv[1:5]
    fails = []
    want_ns, want_n = summary(report)
    flat_ns, tot_ns = top(path, "gpu_time")
    flat_n, tot_n = top(path, "launches")
    if want_n == 0 and tot_ns == 0:
        print("ok - pprof %s: no GPU activity, an empty profile" % name)
        return 0
    if tot_ns != want_ns:
        fails.append("gpu_time total %d, the report's activity summary %d" % (tot_ns, want_ns))
    if tot_n != want_n:
        fails.append("launches total %d, the report's activity summary %d" % (tot_n, want_n))
    d = json.load(open(export, encoding="utf-8"))
    seen = {}
    for k in d.get("kernels", []):
        seen.setdefault(k["name"], [0, 0])
        seen[k["name"]][0] += k["total_ns"]
        seen[k["name"]][1] += k["count"]
    for kname, (ns, n) in seen.items():
        if flat_ns.get(kname) != ns or flat_n.get(kname) != n:
            fails.append("kernel %r: pprof %s ns %s launches, the report %d ns %d" %
                         (kname, flat_ns.get(kname), flat_n.get(kname), ns, n))
    ops = {}
    for op in d.get("memory_ops", []):
        leaf = "[memset]" if op["op"] == "memset" else "[memcpy %s]" % op["kind"]
        ops.setdefault(leaf, [0, 0])
        ops[leaf][0] += op["total_ns"]
        ops[leaf][1] += op["count"]
    for leaf, (ns, n) in ops.items():
        if flat_ns.get(leaf) != ns or flat_n.get(leaf) != n:
            fails.append("%s: pprof %s ns %s, the report %d ns %d" %
                         (leaf, flat_ns.get(leaf), flat_n.get(leaf), ns, n))
    traces = pprof("-traces", "-unit=ns", path)
    vals = [int(v) for v in re.findall(r"^\s*(\d+)ns\s+\S", traces, re.M)]
    pids = len(re.findall(r"^\s+pid:\s+\d+", traces, re.M))
    if sum(vals) != want_ns:
        fails.append("-traces: samples add up to %d ns, not %d" % (sum(vals), want_ns))
    if pids != len(vals):
        fails.append("-traces: %d samples, %d with a pid label" % (len(vals), pids))
    if fails:
        print("not ok - pprof %s" % name)
        for f in fails:
            print("# " + f)
        return 1
    print("ok - pprof %s: %d ns, %d launches, %d kernels, %d samples as go tool pprof reads them"
          % (name, tot_ns, tot_n, len(seen), len(vals)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
