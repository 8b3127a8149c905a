#!/usr/bin/env python3
"""Checks that every track of a Chrome Trace Event export nests, as Perfetto draws it.

    nest-checks.py CHROME.json [NAME]

Perfetto draws the complete events ("X") and the begin/end pairs ("B"/"E")
of one (pid, tid) on one track, and the nestable async events ("b"/"e") of
one (pid, cat, id) on one track; on each, a slice must lie wholly inside the
slice it starts in, or Perfetto cuts it, moves it, or drops it with an import
error.  Times are parsed as doubles (microseconds) and rounded to
nanoseconds, as Perfetto does; slices that only touch (one ends where the
next starts) nest.  Also checked: every "B" has its "E" on its thread and
every "b" its "e" in its track, in order.
Prints "ok - nesting NAME: ..." or "not ok - nesting NAME: ..." with the
first crossing pairs, and exits 1 if any track does not nest.
"""
import collections
import json
import sys


def ns(x):
    return int(round(float(x) * 1000.0))


def crossings(spans):
    """The pairs of spans (start, end, label) that cross: neither inside the other."""
    bad = []
    stack = []
    # Outer first: earlier start, then longer.
    for s, e, label in sorted(spans, key=lambda x: (x[0], -x[1])):
        while stack and stack[-1][1] <= s:
            stack.pop()
        if stack and e > stack[-1][1]:
            bad.append((stack[-1], (s, e, label)))
            # Keep checking the rest as Perfetto would not: the later one
            # is not pushed, so one bad slice is one crossing.
            continue
        stack.append((s, e, label))
    return bad


def main():
    if len(sys.argv) not in (2, 3):
        print(__doc__)
        return 2
    name = sys.argv[2] if len(sys.argv) == 3 else sys.argv[1]
    with open(sys.argv[1]) as f:
        events = json.load(f)["traceEvents"]

    tracks = collections.defaultdict(list)
    open_b = collections.defaultdict(list)
    open_async = collections.defaultdict(list)
    unpaired = 0
    for ev in events:
        ph = ev.get("ph")
        if ph == "X":
            s = ns(ev["ts"])
            tracks[("thread", ev["pid"], ev["tid"])].append(
                (s, s + ns(ev.get("dur", 0)), ev.get("name")))
        elif ph == "B":
            open_b[(ev["pid"], ev["tid"])].append((ns(ev["ts"]), ev.get("name")))
        elif ph == "E":
            stack = open_b[(ev["pid"], ev["tid"])]
            if not stack:
                unpaired += 1
                continue
            s, label = stack.pop()
            tracks[("thread", ev["pid"], ev["tid"])].append((s, ns(ev["ts"]), label))
        elif ph == "b":
            open_async[(ev["pid"], ev.get("cat"), str(ev["id"]))].append(
                (ns(ev["ts"]), ev.get("name")))
        elif ph == "e":
            key = (ev["pid"], ev.get("cat"), str(ev["id"]))
            stack = open_async[key]
            if not stack:
                unpaired += 1
                continue
            s, label = stack.pop()
            tracks[("async",) + key].append((s, ns(ev["ts"]), label))
    unpaired += sum(len(v) for v in open_b.values()) + sum(len(v) for v in open_async.values())

    fails = []
    nslices = sum(len(v) for v in tracks.values())
    backwards = sum(1 for v in tracks.values() for s, e, _ in v if e < s)
    if backwards:
        fails.append("%d slices end before they start" % backwards)
    bad_tracks = 0
    examples = []
    nbad = 0
    for key, spans in sorted(tracks.items(), key=lambda kv: str(kv[0])):
        bad = crossings(spans)
        if bad:
            bad_tracks += 1
            nbad += len(bad)
            for (s0, e0, l0), (s1, e1, l1) in bad[:2]:
                if len(examples) < 4:
                    examples.append("%s: %r [%d, %d) crosses %r [%d, %d)"
                                    % ("/".join(str(k) for k in key), l0, s0, e0, l1, s1, e1))
    if bad_tracks:
        fails.append("%d slices cross another on %d tracks (e.g. %s)"
                     % (nbad, bad_tracks, "; ".join(examples)))
    if unpaired:
        fails.append("%d begin or end events without their pair" % unpaired)
    if fails:
        for f in fails:
            print("not ok - nesting %s: %s" % (name, f))
        return 1
    print("ok - nesting %s: %d slices on %d tracks nest" % (name, nslices, len(tracks)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
