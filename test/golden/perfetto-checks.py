#!/usr/bin/env python3
"""Checks a Perfetto protobuf export the way Perfetto's importer reads it.

    perfetto-checks.py TRACE.pftrace CSV.csv REPORT.json [NAME]

TRACE.pftrace is `gpuprof export --format perfetto` of some traces, CSV.csv
`gpuprof export --format csv` and REPORT.json `gpuprof export --format json`
of the same traces.  The trace is decoded with
`protoc --decode=perfetto.protos.Trace` against the schema subset kept in
test/golden/perfetto/trace.proto (field numbers of Perfetto's public
schema); without protoc it prints "skip - ..." and exits 0.

Perfetto's importer is replayed: each packet sequence's incremental state
(SEQ_INCREMENTAL_STATE_CLEARED first, SEQ_NEEDS_INCREMENTAL_STATE after,
defaults, the sequence-scoped incremental clock of its clock snapshot,
absolute BOOTTIME times, interned names, categories and annotation
names), then, per track, the begin and end events sorted by time with
ties in file order, each end closing the innermost open slice.  Checks,
each printed as "ok - ..." or "not ok - ...":
  - every field is one of the schema's (no unknown field numbers), every
    packet of a sequence after its first needs and has its state, every
    name, category and annotation iid was interned on its sequence before
    (or in the packet that uses it), and no iid names two things;
  - every event's track was described, thread tracks in a described
    process, counter events only on counter tracks, slices never there;
  - nesting: on every track the slices Perfetto builds are the slices
    written (each begin packet and the end packet after it on its
    sequence): none is closed by another's end, none is left open, no end
    finds no slice open;
  - counts: slices of each category equal the report's counts (kernel,
    memcpy, memset, graph, api, nvtx ranges, profiled launches), and GPU
    activities' times equal the CSV rows' exactly;
  - flows: every flow id of a GPU activity starts at an API call, and
    every API call's flow id reaches a GPU activity;
  - counter values are finite.
Also prints the size: bytes per kernel slice (its two packets) and in
all.  Exits 1 if any check failed.
"""
import collections
import csv
import json
import math
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SCHEMA_DIR = os.path.join(HERE, "perfetto")
CLOCK_BOOTTIME = 6
SEQ_CLEARED = 1
SEQ_NEEDS = 2
ACT_CATS = ("kernel", "memcpy", "memset", "graph")


def packet_sizes(data):
    """Byte length of each top-level packet (field 1, length-delimited)."""
    sizes = []
    i = 0
    n = len(data)
    while i < n:
        start = i
        key = 0
        shift = 0
        while True:
            b = data[i]
            i += 1
            key |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        if key != (1 << 3 | 2):
            raise ValueError("byte %d: key %d is not Trace.packet" % (start, key))
        ln = 0
        shift = 0
        while True:
            b = data[i]
            i += 1
            ln |= (b & 0x7F) << shift
            shift += 7
            if b < 0x80:
                break
        i += ln
        if i > n:
            raise ValueError("byte %d: packet overruns the file" % start)
        sizes.append(i - start)
    return sizes


TOKEN = re.compile(r'\s*(?:([A-Za-z_0-9]+)\s*(\{|:\s*("(?:[^"\\]|\\.)*"|[^\s]+))|(\}))')


def parse_text(text):
    """protoc's text format into nested dicts of lists: {field: [value or dict]}."""
    root = {}
    stack = [root]
    pos = 0
    n = len(text)
    while True:
        while pos < n and text[pos] in " \t\r\n":
            pos += 1
        if pos >= n:
            break
        m = TOKEN.match(text, pos)
        if not m:
            raise ValueError("cannot parse protoc output near %r" % text[pos:pos + 80])
        pos = m.end()
        if m.group(4):
            stack.pop()
            continue
        name = m.group(1)
        if m.group(2) == "{":
            d = {}
            stack[-1].setdefault(name, []).append(d)
            stack.append(d)
        else:
            v = m.group(3)
            if v.startswith('"'):
                v = bytes(v[1:-1], "latin-1").decode("unicode_escape").encode(
                    "latin-1").decode("utf-8", "replace")
            stack[-1].setdefault(name, []).append(v)
    return root


def one(d, key, default=None):
    v = d.get(key)
    return v[0] if v else default


def unknown_fields(d, path="packet"):
    """Fields protoc could not name (numbers): the output has what the schema lacks."""
    bad = []
    for k, vs in d.items():
        if k.isdigit():
            bad.append("%s.%s" % (path, k))
        for v in vs:
            if isinstance(v, dict):
                bad.extend(unknown_fields(v, path + "." + k))
    return bad


def stream_track(name):
    """Whether a track is a GPU stream's ("cuda:D stream S", or a lane of it)."""
    return bool(name and re.match(r"cuda:\d+ stream \d+( \(overlapping\))?$", name))


def main():
    if len(sys.argv) not in (4, 5):
        print(__doc__)
        return 2
    path, csv_path, report_path = sys.argv[1:4]
    name = sys.argv[4] if len(sys.argv) == 5 else path
    protoc = shutil.which("protoc")
    if not protoc:
        print("skip - perfetto %s # protoc is not installed (Debian: protobuf-compiler)"
              % name)
        return 0
    with open(path, "rb") as f:
        data = f.read()
    fails = []
    try:
        sizes = packet_sizes(data)
    except (ValueError, IndexError) as e:
        print("not ok - perfetto %s: not a Trace: %s" % (name, e))
        return 1
    res = subprocess.run([protoc, "--decode=perfetto.protos.Trace", "-I", SCHEMA_DIR,
                          os.path.join(SCHEMA_DIR, "trace.proto")], input=data,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if res.returncode != 0:
        print("not ok - perfetto %s: protoc --decode failed: %s"
              % (name, res.stderr.decode(errors="replace")[:300]))
        return 1
    packets = parse_text(res.stdout.decode("utf-8", "replace")).get("packet", [])
    if len(packets) != len(sizes):
        fails.append("protoc decoded %d packets, the file has %d" % (len(packets), len(sizes)))
    unknown = []
    for p in packets:
        unknown.extend(unknown_fields(p))
    if unknown:
        fails.append("%d fields not in the schema (e.g. %s)" % (len(unknown), unknown[:3]))

    # Descriptors.
    tracks = {}
    names = {}
    procs = set()
    for p in packets:
        for td in p.get("track_descriptor", []):
            uuid = int(one(td, "uuid", 0))
            if one(td, "process"):
                procs.add(int(one(one(td, "process"), "pid")))
            kind = ("process" if one(td, "process") else "thread" if one(td, "thread")
                    else "counter" if "counter" in td else "track")
            prev = tracks.get(uuid)
            if prev and prev != kind:
                fails.append("track %d described as %s and %s" % (uuid, prev, kind))
            tracks[uuid] = kind
            if one(td, "name"):
                names[uuid] = one(td, "name")
            th = one(td, "thread")
            if th and int(one(th, "pid")) not in procs:
                fails.append("thread track %d of pid %s described before its process"
                             % (uuid, one(th, "pid")))

    # Sequences: incremental state, clocks, interning.
    seqs = {}
    events = collections.defaultdict(list)   # track -> [(ts, order, type, payload)]
    intended = collections.defaultdict(collections.Counter)  # track -> (name, s, e)
    open_begin = {}                          # seq -> pending begin
    cat_counts = collections.Counter()
    kernel_bytes = 0
    kernel_slices = 0
    counters = 0
    bad_counter = 0
    flows_api = set()
    flows_act = collections.Counter()
    act_times = collections.Counter()
    state_errors = []
    for order, p in enumerate(packets):
        seq_id = int(one(p, "trusted_packet_sequence_id", 0))
        flags = int(one(p, "sequence_flags", 0))
        if seq_id == 1 or "track_descriptor" in p:
            continue
        if not seq_id:
            state_errors.append("packet %d has no sequence" % order)
            continue
        st = seqs.get(seq_id)
        if flags & SEQ_CLEARED:
            st = seqs[seq_id] = {"names": {}, "cats": {}, "anns": {}, "clock": None,
                                 "last": None, "track": None}
        elif st is None or not flags & SEQ_NEEDS:
            state_errors.append("packet %d of sequence %d: %s" % (
                order, seq_id, "no state" if st is None else "no SEQ_NEEDS_INCREMENTAL_STATE"))
            continue
        d = one(p, "trace_packet_defaults")
        if d:
            st["clock"] = int(one(d, "timestamp_clock_id", 0))
            ted = one(d, "track_event_defaults")
            st["track"] = int(one(ted, "track_uuid")) if ted else None
        cs = one(p, "clock_snapshot")
        if cs:
            for c in cs.get("clocks", []):
                if int(one(c, "clock_id")) == st["clock"] and one(c, "is_incremental") == "true":
                    st["last"] = int(one(c, "timestamp"))
        idata = one(p, "interned_data")
        if idata:
            for key, table in (("event_names", "names"), ("event_categories", "cats"),
                               ("debug_annotation_names", "anns")):
                for ent in idata.get(key, []):
                    iid = int(one(ent, "iid"))
                    nm = one(ent, "name", "")
                    if st[table].get(iid, nm) != nm:
                        state_errors.append("sequence %d: %s iid %d named %r and %r" % (
                            seq_id, key, iid, st[table][iid], nm))
                    st[table][iid] = nm
        te = one(p, "track_event")
        if te is None:
            continue
        if "timestamp" not in p:
            state_errors.append("packet %d: an event without a time" % order)
            continue
        ts = int(one(p, "timestamp"))
        clock = int(one(p, "timestamp_clock_id", st["clock"] or CLOCK_BOOTTIME))
        if clock == CLOCK_BOOTTIME:
            pass
        elif clock == st["clock"] and st["last"] is not None:
            ts += st["last"]
            st["last"] = ts
        else:
            state_errors.append("packet %d: clock %d unknown on sequence %d" % (order, clock,
                                                                                seq_id))
            continue
        track = int(one(te, "track_uuid", st["track"] or 0))
        if track not in tracks:
            state_errors.append("packet %d: track %d never described" % (order, track))
            continue
        typ = one(te, "type")
        for key, table in (("name_iid", "names"), ("category_iids", "cats")):
            for iid in te.get(key, []):
                if int(iid) not in st[table]:
                    state_errors.append("packet %d: %s %s not interned on sequence %d"
                                        % (order, key, iid, seq_id))
        for da in te.get("debug_annotations", []):
            if int(one(da, "name_iid")) not in st["anns"]:
                state_errors.append("packet %d: annotation name %s not interned"
                                    % (order, one(da, "name_iid")))
        if typ == "TYPE_COUNTER":
            counters += 1
            if tracks[track] != "counter":
                fails.append("packet %d: a counter value on track %d, not a counter" % (order,
                                                                                      track))
            v = float(one(te, "double_counter_value", one(te, "counter_value", "nan")))
            if not math.isfinite(v):
                bad_counter += 1
            continue
        if tracks[track] == "counter":
            fails.append("packet %d: a %s on counter track %d" % (order, typ, track))
            continue
        if typ == "TYPE_SLICE_BEGIN":
            nm = st["names"].get(int(one(te, "name_iid", 0)))
            cats = [st["cats"].get(int(c)) for c in te.get("category_iids", [])]
            # Kernels have no category: the slices of a stream's track without one.
            cat = cats[0] if cats else "kernel" if stream_track(names.get(track)) else None
            if seq_id in open_begin:
                state_errors.append("packet %d: a begin before the end of the last one on "
                                    "sequence %d" % (order, seq_id))
            open_begin[seq_id] = (ts, nm, cat, sizes[order] if order < len(sizes) else 0,
                                  [int(x) for x in te.get("flow_ids", [])])
            events[track].append((ts, order, 0, nm))
        elif typ == "TYPE_SLICE_END":
            b = open_begin.pop(seq_id, None)
            if b is None:
                state_errors.append("packet %d: an end without its begin on sequence %d"
                                    % (order, seq_id))
                continue
            bts, nm, cat, bsize, flows = b
            intended[track][(nm, bts, ts)] += 1
            events[track].append((ts, order, 1, None))
            cat_counts[cat] += 1
            if cat == "kernel":
                kernel_slices += 1
                kernel_bytes += bsize + (sizes[order] if order < len(sizes) else 0)
            if cat == "api":
                flows_api.update(flows)
            elif cat in ACT_CATS:
                act_times[(bts, ts)] += 1
                for fl in flows:
                    flows_act[fl] += 1
        elif typ == "TYPE_INSTANT":
            cat_counts["instant"] += 1
    if open_begin:
        state_errors.append("%d begins without an end" % len(open_begin))
    if state_errors:
        fails.append("%d errors of sequence state (e.g. %s)" % (len(state_errors),
                                                               "; ".join(state_errors[:3])))

    # Nesting, as Perfetto builds slices: by time, ties in file order.
    bad_tracks = 0
    examples = []
    nslices = 0
    for track, evs in events.items():
        evs.sort(key=lambda x: (x[0], x[1]))
        stack = []
        built = collections.Counter()
        problem = None
        for ts, _, kind, nm in evs:
            if kind == 0:
                stack.append((nm, ts))
            elif not stack:
                problem = problem or "an end at %d with no slice open" % ts
            else:
                bn, bts = stack.pop()
                built[(bn, bts, ts)] += 1
        if stack:
            problem = problem or "%d slices left open" % len(stack)
        nslices += sum(intended[track].values())
        if not problem and built != intended[track]:
            diff = (intended[track] - built) or (built - intended[track])
            problem = "slices built differ from those written, e.g. %r" % (next(iter(diff)),)
        if problem:
            bad_tracks += 1
            if len(examples) < 3:
                examples.append("track %d: %s" % (track, problem))
    if bad_tracks:
        fails.append("%d tracks do not nest (%s)" % (bad_tracks, "; ".join(examples)))

    # Counts and exact times against the report and the CSV.
    with open(report_path) as f:
        report = json.load(f)
    want = dict(report.get("counts", {}))
    want["nvtx"] = sum(k.get("count", 0) for k in report.get("nvtx", []))
    want["metrics"] = report.get("metrics", {}).get("records", 0)
    for cat in ("kernel", "memcpy", "memset", "graph", "api", "nvtx", "metrics"):
        if cat_counts.get(cat, 0) != want.get(cat, 0):
            fails.append("%d %s slices, the report counts %d" % (cat_counts.get(cat, 0), cat,
                                                                 want.get(cat, 0)))
    want_marks = sum(k.get("count", 0) for k in report.get("marks", []))
    if cat_counts.get("instant", 0) != want_marks:
        fails.append("%d instant events, the report counts %d marks"
                     % (cat_counts.get("instant", 0), want_marks))
    with open(csv_path) as f:
        rows = collections.Counter((int(r["start_ns"]), int(r["end_ns"]))
                                   for r in csv.DictReader(f))
    if rows != act_times:
        fails.append("times: %d CSV rows not found exactly, %d activities not in the CSV"
                     % (sum((rows - act_times).values()), sum((act_times - rows).values())))

    # Flows: from API calls to GPU work.
    orphan = [fl for fl in flows_act if fl not in flows_api]
    dangling = [fl for fl in flows_api if fl not in flows_act]
    if orphan or dangling:
        fails.append("flows: %d reach GPU work from no API call, %d API calls reach none"
                     % (len(orphan), len(dangling)))
    if bad_counter:
        fails.append("%d counter values are not finite" % bad_counter)

    if fails:
        for f in fails:
            print("not ok - perfetto %s: %s" % (name, f))
        return 1
    print("ok - perfetto %s: %d packets, %d slices on %d tracks nest, %d counter values, "
          "%d flows; %s" % (
              name, len(packets), nslices, len(events), counters, len(flows_api),
              "%.1f bytes per kernel slice, %.1f bytes of file per kernel" % (
                  kernel_bytes / kernel_slices, len(data) / kernel_slices)
              if kernel_slices else "no kernels"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
