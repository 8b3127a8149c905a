#!/usr/bin/env python3
"""Checks a Chrome Trace Event export the way Perfetto's JSON importer reads it.

    chrome-checks.py CHROME.json CSV.csv [REPORT.json]

CHROME.json is `gpuprof export --format chrome` of some traces, CSV.csv
`gpuprof export --format csv` and REPORT.json `gpuprof export --format json`
of the same traces.  Times are parsed as
doubles (microseconds) and rounded to nanoseconds, as Perfetto does.
Checks, each printed as "ok - ..." or "not ok - ...":
  - every GPU activity's ts and dur give back its recorded start and end
    exactly (otherData.gpuprof_time_base_ns + ts), matched against the CSV rows;
  - no two activities on one GPU track overlap (a kernel profiled by
    kernel replay, placed at its launch call, goes on a lane of its own
    where it would overlap);
  - every flow start has its finish and the other way round;
  - every async begin has its end (same id, name, category, process);
  - every metadata event has a "cat";
  - every counter sample's values are finite numbers;
  - with REPORT.json: one "metrics" slice per profiled launch (metrics.records),
    each at exactly the time of its kernel's slice (same correlation), none
    overlapping on its track, and the FLOP/s and DRAM bytes/s counters set to
    its args' rates at its start and back to 0 at its end.
Exits 1 if any check failed.
"""
import collections
import csv
import json
import math
import sys


def ns(x):
    return int(round(float(x) * 1000.0))


def main():
    if len(sys.argv) not in (3, 4):
        print(__doc__)
        return 2
    name = sys.argv[1]
    with open(sys.argv[1]) as f:
        doc = json.load(f)
    with open(sys.argv[2]) as f:
        rows = list(csv.DictReader(f))
    base = int(doc.get("otherData", {}).get("gpuprof_time_base_ns", "0"))
    events = doc["traceEvents"]
    fails = []

    # Exact times: (correlation, device, stream, start) of each CSV row.
    want = collections.Counter()
    for r in rows:
        want[(int(r["correlation"]), int(r["device"]), int(r["stream"]),
              int(r["start_ns"]), int(r["end_ns"]))] += 1
    got = collections.Counter()
    tracks = collections.defaultdict(list)
    for e in events:
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "memcpy", "memset", "graph"):
            a = e["args"]
            start = base + ns(e["ts"])
            end = start + ns(e["dur"])
            got[(a["correlation"], a["device"], a["stream"], start, end)] += 1
            tracks[(e["pid"], e["tid"])].append((start, end))
    missing = want - got
    extra = got - want
    if missing or extra:
        fails.append("times: %d CSV rows not found exactly, %d events not in the CSV (e.g. %s)"
                     % (sum(missing.values()), sum(extra.values()),
                        list(missing)[:1] or list(extra)[:1]))
    overlaps = 0
    for spans in tracks.values():
        spans.sort()
        for (s0, e0), (s1, e1) in zip(spans, spans[1:]):
            if s1 < e0:
                overlaps += 1
    if overlaps:
        fails.append("%d overlapping pairs of activities on GPU tracks" % overlaps)

    flows = collections.defaultdict(lambda: [0, 0])
    for e in events:
        if e.get("ph") in ("s", "f"):
            flows[(e.get("cat"), e["id"])][0 if e["ph"] == "s" else 1] += 1
    bad = [k for k, v in flows.items() if v != [1, 1]]
    if bad:
        fails.append("%d flows without both ends (e.g. %s)" % (len(bad), bad[0]))

    asyncs = collections.Counter()
    for e in events:
        if e.get("ph") in ("b", "e"):
            asyncs[(e["pid"], e.get("cat"), e["name"], e["id"])] += 1 if e["ph"] == "b" else -1
    bad = [k for k, v in asyncs.items() if v != 0]
    if bad:
        fails.append("%d async ranges without both ends (e.g. %s)" % (len(bad), bad[0]))

    bad = [e for e in events if e.get("ph") == "C"
           and not all(isinstance(v, (int, float)) and math.isfinite(v) for v in e["args"].values())]
    if bad:
        fails.append("%d counter samples with values not finite numbers (e.g. %s)" % (len(bad), bad[0]))

    nmx = 0
    if len(sys.argv) == 4:
        with open(sys.argv[3]) as f:
            report = json.load(f)
        mx = [e for e in events if e.get("ph") == "X" and e.get("cat") == "metrics"]
        nmx = len(mx)
        want_n = report.get("metrics", {}).get("records", 0)
        if nmx != want_n:
            fails.append("%d profiled-launch slices, the report has %d metric records" % (nmx, want_n))
        kernels = {(e["pid"], e["args"]["correlation"]): e for e in events
                   if e.get("ph") == "X" and e.get("cat") == "kernel"}
        samples = collections.defaultdict(dict)
        for e in events:
            if e.get("ph") == "C" and e.get("cat") == "metrics":
                for k, v in e["args"].items():
                    samples[(e["pid"], e["name"], k)].setdefault(base + ns(e["ts"]), []).append(v)
        misplaced, uncounted = 0, 0
        spans = collections.defaultdict(list)
        for e in mx:
            a = e["args"]
            start = base + ns(e["ts"])
            end = start + ns(e["dur"])
            spans[(e["pid"], e["tid"])].append((start, end))
            k = kernels.get((e["pid"], a["correlation"]))
            if not k or (base + ns(k["ts"]), base + ns(k["ts"]) + ns(k["dur"])) != (start, end):
                misplaced += 1
            for arg, track, key in (("flop_s", "FLOP/s", "flop_s"), ("dram_bytes_s", "DRAM bytes/s", "bytes_s")):
                if arg not in a:
                    continue
                s = samples.get((e["pid"], "cuda:%d %s" % (a["device"], track), key), {})
                if a[arg] not in s.get(start, []) or 0 not in s.get(end, []):
                    uncounted += 1
        if misplaced:
            fails.append("%d profiled-launch slices not at their kernel's time" % misplaced)
        if uncounted:
            fails.append("%d profiled-launch rates missing from their counters" % uncounted)
        overlaps = sum(1 for v in spans.values() for (s0, e0), (s1, e1) in zip(sorted(v), sorted(v)[1:])
                       if s1 < e0)
        if overlaps:
            fails.append("%d overlapping profiled-launch slices" % overlaps)

    nocat = sum(1 for e in events if e.get("ph") == "M" and "cat" not in e)
    if nocat:
        fails.append("%d metadata events without cat" % nocat)

    if fails:
        for f in fails:
            print("not ok - chrome %s: %s" % (name, f))
        return 1
    print("ok - chrome %s: %d activities exact to the ns, %d flows, %d async ranges, "
          "%d profiled launches" % (name, sum(got.values()), len(flows), len(asyncs), nmx))
    return 0


if __name__ == "__main__":
    sys.exit(main())
