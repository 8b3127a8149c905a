#!/usr/bin/env python3
"""SQL over the SQLite export of the golden traces reproduces the report's totals.

    sql-checks.py BUILD_DIR

For each test/golden/*.gpuprof, and for all of them merged, exports the
trace with `export --format sqlite` and with `export --format json` (the
report's numbers), then asks the database, through the sqlite3 command-line
tool, for the same totals: activity and API call counts; per kernel its
count, total, min and max time; per memory copy kind count, bytes and time,
per memset memory kind the same; per API function count, total time, errors and
threads; per NVTX range (domain, name; PyTorch's emit_nvtx() names by op) its count and CPU time, per mark its
count; per launch site its launches and GPU time; memory in use per device (peak,
when, final, allocations, frees, unmatched frees) replayed from the
allocation records; hardware metrics of each profiled launch summed per
kernel and metric; the GPU over time's statistics per device, source and
metric (against `export --format csv --table gpu_metrics`); the process ids; and that
every kernel row has its launch configuration.  The CSV tables
(`export --format csv --table kernels|api|nvtx|sites`) are compared too.  Also checks that the
export refuses standard output and leaves an existing file alone when a
trace cannot be read.  Prints "ok - ..." / "not ok - ..." lines, or one
"skip - ..." line when the sqlite3 tool is missing; exits 1 if any failed.
"""
import csv
import glob
import io
import json
import re
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


class SqlError(Exception):
    pass


def sql(db, query):
    r = subprocess.run(["sqlite3", "-batch", "-json", db, query], capture_output=True, text=True)
    if r.returncode != 0:
        raise SqlError("sqlite3 exited %d on %r: %s" % (r.returncode, query[:60], r.stderr.strip()))
    return json.loads(r.stdout) if r.stdout.strip() else []


KERNELS = """SELECT s.value AS mangled, count(*) AS count, sum(k.end_ns - k.start_ns) AS total_ns,
  min(k.end_ns - k.start_ns) AS min_ns, max(k.end_ns - k.start_ns) AS max_ns
  FROM kernels k JOIN strings s ON s.id = k.name_id GROUP BY k.name_id"""
MEMCPY = """SELECT copy_kind AS kind, count(*) AS count, sum(bytes) AS bytes,
  sum(end_ns - start_ns) AS total_ns FROM memcpy GROUP BY copy_kind"""
MEMSET = """SELECT replace(mem_kind, '_', ' ') AS kind, count(*) AS count, sum(bytes) AS bytes,
  sum(end_ns - start_ns) AS total_ns FROM memset GROUP BY mem_kind"""
API = """SELECT s.value AS name, count(*) AS count, sum(a.end_ns - a.start_ns) AS total_ns,
  sum(a.return_code <> 0) AS errors, count(DISTINCT a.process || ':' || a.tid) AS threads
  FROM api_calls a JOIN strings s ON s.id = a.name_id GROUP BY a.name_id"""
NVTX = """SELECT coalesce(d.value, '') AS domain, n.value AS name, count(*) AS count,
  sum(r.end_ns - r.start_ns) AS cpu_total_ns
  FROM nvtx_ranges r JOIN strings n ON n.id = r.name_id
  LEFT JOIN strings d ON d.id = r.domain_id GROUP BY r.domain_id, r.name_id"""
MARKS = """SELECT coalesce(d.value, '') AS domain, n.value AS name, count(*) AS count
  FROM nvtx_marks k JOIN strings n ON n.id = k.name_id
  LEFT JOIN strings d ON d.id = k.domain_id GROUP BY k.domain_id, k.name_id"""
SITES = """SELECT s.value AS site, l.launches AS launches, l.gpu_ns AS gpu_ns
  FROM launch_sites l JOIN strings s ON s.id = l.id"""
# Memory in use per device, replayed as the report does: device memory only
# (host allocations left out), events in time then arrival order; an
# allocation adds its bytes and ends a live allocation at its address, a free
# ends the live one (the last event at its address was an allocation) and
# changes nothing otherwise.
MEMUSE = """WITH ev AS (SELECT rowid AS seq, * FROM memory_events
  WHERE operation IN ('alloc', 'free') AND mem_kind NOT IN ('pageable', 'pinned')),
d AS (SELECT process, device, time_ns, seq, operation,
  lag(operation) OVER w IS 'alloc' AS ends_live,
  (CASE WHEN operation = 'alloc' THEN bytes ELSE 0 END)
  - (CASE WHEN lag(operation) OVER w = 'alloc' THEN lag(bytes) OVER w ELSE 0 END) AS delta
  FROM ev WINDOW w AS (PARTITION BY process, device, address ORDER BY time_ns, seq)),
u AS (SELECT *, sum(delta) OVER (PARTITION BY process, device ORDER BY time_ns, seq
  ROWS UNBOUNDED PRECEDING) AS in_use,
  row_number() OVER (PARTITION BY process, device ORDER BY time_ns DESC, seq DESC) AS from_end FROM d)
SELECT p.pid AS pid, u.device AS device, max(in_use) AS peak_bytes,
  (SELECT min(time_ns) FROM u x WHERE x.process = u.process AND x.device = u.device
   AND x.in_use = max(u.in_use)) AS peak_ns,
  sum(CASE WHEN from_end = 1 THEN in_use ELSE 0 END) AS final_bytes,
  sum(operation = 'alloc') AS allocs, sum(operation = 'free') AS frees,
  sum(operation = 'free' AND NOT ends_live) AS unmatched_frees
  FROM u JOIN processes p ON p.id = u.process GROUP BY u.process, u.device"""
MX_VALUES = """SELECT p.pid AS pid, l.ordinal AS device, k.value AS mangled, n.value AS metric,
  sum(v.value) AS value, count(*) AS launches
  FROM metrics_launches l JOIN metrics_launch_values v ON v.launch = l.id
  JOIN strings k ON k.id = l.name_id JOIN strings n ON n.id = v.name_id
  JOIN processes p ON p.id = l.process GROUP BY l.process, l.ordinal, l.name_id, v.name_id"""
COUNTS = """SELECT (SELECT count(*) FROM kernels) AS kernel, (SELECT count(*) FROM memcpy) AS memcpy,
  (SELECT count(*) FROM memset) AS memset, (SELECT count(*) FROM graph_launches) AS graph,
  (SELECT count(*) FROM api_calls) AS api"""


GPU_METRICS = """SELECT p.pid, r.ordinal, r.source, s.value AS metric, count(*) AS samples,
  sum(g.value * (g.end_ns - g.start_ns)) / sum(g.end_ns - g.start_ns) AS avg,
  min(g.value) AS min, max(g.value) AS max
  FROM gpu_samples g JOIN gpu_series r ON r.id = g.series JOIN strings s ON s.id = g.name_id
  JOIN processes p ON p.id = r.process GROUP BY g.series, g.name_id"""


def op_name(name):
    """A range's name as the report counts it: PyTorch's emit_nvtx() names
    without their ", seq = N", ", op_id = M" and ", input_op_ids = ..."
    (docs/USAGE.md, NVTX ranges); the database keeps each as recorded."""
    name = re.sub(r", input_op_ids = .*\Z", "", name, flags=re.S)
    return re.sub(r", (?:seq|op_id) = [0-9]+(?=, |\Z)", "", name)


def by_op(rows):
    """NVTX rows of the database summed by op_name()."""
    out = {}
    for r in rows:
        k = (r["domain"], op_name(r["name"]))
        o = out.setdefault(k, {"domain": k[0], "name": k[1], "count": 0, "cpu_total_ns": 0})
        o["count"] += r["count"]
        o["cpu_total_ns"] += r["cpu_total_ns"]
    return list(out.values())


def keyed(rows, key, fields):
    return {tuple(r[k] for k in key): tuple(r[f] for f in fields) for r in rows}


def check_set(analyze, name, inputs, tmp):
    fails = []
    db = os.path.join(tmp, name + ".sqlite")
    js = os.path.join(tmp, name + ".json")
    for fmt, out in (("sqlite", db), ("json", js)):
        r = subprocess.run([analyze, "export", "--format", fmt, "--no-symbolize", "-o", out]
                           + inputs, capture_output=True, text=True)
        if r.returncode != 0:
            return ["export --format %s exited %d: %s" % (fmt, r.returncode, r.stderr[:300])]
    with open(js) as f:
        j = json.load(f)

    def same(what, expected, got):
        if expected != got:
            fails.append("%s: report %s, SQL %s" % (what, expected, got))

    c = sql(db, COUNTS)[0]
    for k in ("kernel", "memcpy", "memset", "graph", "api"):
        same("%s count" % k, j["counts"][k], c[k])
    f = ("count", "total_ns", "min_ns", "max_ns")
    same("kernel table", keyed(j["kernels"], ["mangled"], f), keyed(sql(db, KERNELS), ["mangled"], f))
    f = ("count", "bytes", "total_ns")
    same("memcpy table", keyed(j["memcpy"], ["kind"], f), keyed(sql(db, MEMCPY), ["kind"], f))
    same("memset table", keyed(j["memset"], ["kind"], f), keyed(sql(db, MEMSET), ["kind"], f))
    f = ("count", "total_ns", "errors", "threads")
    same("API table", keyed(j["api"], ["name"], f), keyed(sql(db, API), ["name"], f))
    f = ("count", "cpu_total_ns")
    same("NVTX ranges", keyed(j["nvtx"], ["domain", "name"], f),
         keyed(by_op(sql(db, NVTX)), ["domain", "name"], f))
    same("NVTX marks", keyed(j["marks"], ["domain", "name"], ["count"]),
         keyed(sql(db, MARKS), ["domain", "name"], ["count"]))
    f = ("launches", "gpu_ns")
    same("launch sites", keyed(j["launch_sites"], ["site"], f), keyed(sql(db, SITES), ["site"], f))
    # Memory in use (traces with allocation records): peak, when, final, per device.
    f = ("peak_bytes", "peak_ns", "final_bytes", "allocs", "frees", "unmatched_frees")
    same("memory usage", keyed(j.get("memory_usage", {}).get("devices", []), ["pid", "device"], f),
         keyed(sql(db, MEMUSE), ["pid", "device"], f))
    # Hardware metrics: each profiled launch's values summed per kernel and metric.
    want = {(k["pid"], k["device"], k["mangled"], n): (k["launches"], v)
            for k in j.get("metrics", {}).get("kernels", []) for n, v in k["values_sum"].items()}
    got = {(r["pid"], r["device"], r["mangled"], r["metric"]): (r["launches"], r["value"])
           for r in sql(db, MX_VALUES)}
    if set(want) != set(got) or any(
            want[k][0] != got[k][0] or abs(want[k][1] - got[k][1]) > 1e-9 * abs(want[k][1])
            for k in want):
        fails.append("metrics per launch: report %s, SQL %s"
                     % (sorted(want.items())[:2], sorted(got.items())[:2]))
    same("process ids", sorted(p["pid"] for p in j["processes"]),
         sorted(r["pid"] for r in sql(db, "SELECT pid FROM processes")))
    same("kernels without launch configuration", 0,
         sql(db, "SELECT count(*) AS n FROM kernels WHERE grid_x IS NULL OR block_x IS NULL"
                 " OR registers_per_thread IS NULL")[0]["n"])
    same("kernels on streams not listed", 0,
         sql(db, "SELECT count(*) AS n FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM streams s"
                 " WHERE s.process = k.process AND s.device = k.device AND s.context = k.context"
                 " AND s.stream = k.stream)")[0]["n"])
    same("kernels on devices not listed", 0,
         sql(db, "SELECT count(*) AS n FROM kernels k WHERE NOT EXISTS (SELECT 1 FROM"
                 " process_devices p JOIN devices d ON d.id = p.device_id"
                 " WHERE p.process = k.process AND p.device = k.device)")[0]["n"])
    # Each kernel row's stack leads to its launch site.
    same("launch sites from kernel rows", keyed(j["launch_sites"], ["site"], ("launches", "gpu_ns")),
         keyed(sql(db, "SELECT s.value AS site, count(*) AS launches,"
                       " sum(k.end_ns - k.start_ns) AS gpu_ns FROM kernels k"
                       " JOIN launch_stacks l ON l.process = k.process AND l.stack_id = k.stack_id"
                       " JOIN strings s ON s.id = l.site GROUP BY l.site"),
               ["site"], ("launches", "gpu_ns")))
    # The CSV tables of the same report (export --format csv --table NAME).
    for table, jkey, key, fields in (("kernels", "kernels", ["mangled"], ["count", "total_ns", "med_ns", "stddev_ns"]),
                                     ("memory", "memory_ops", ["operation", "copy_kind", "src_kind", "dst_kind"],
                                      ["count", "bytes", "total_ns", "med_ns", "stddev_ns"]),
                                     ("launch", "launch_configs", ["name", "block_x", "grid_x", "registers"],
                                      ["count", "total_ns", "blocks_per_sm"]),
                                     ("api", "api", ["name"], ["count", "total_ns", "errors", "threads"]),
                                     ("nvtx", "nvtx", ["domain", "name"], ["count", "cpu_total_ns", "gpu_ns", "kernels"]),
                                     ("sites", "launch_sites", ["site"], ["launches", "gpu_ns"])):
        r = subprocess.run([analyze, "export", "--format", "csv", "--table", table, "--no-symbolize"]
                           + inputs, capture_output=True, text=True)
        if r.returncode != 0:
            fails.append("csv --table %s exited %d: %s" % (table, r.returncode, r.stderr[:200]))
            continue
        rows = [{k: (int(v) if v.isdigit() else v) for k, v in row.items()}
                for row in csv.DictReader(io.StringIO(r.stdout))]
        want = j[jkey]
        if table == "memory":
            # JSON names the operation "op" and gives no copy kind for memsets.
            want = [dict(o, operation=o["op"], copy_kind=o.get("kind", "")) for o in want]
        elif table == "launch":
            want = [dict(c, block_x=c["block"][0], grid_x=c["grid"][0]) for c in want]
        same("csv table " + table, keyed(want, key, fields), keyed(rows, key, fields))
    # The GPU over time: docs/SQL.md's query of gpu_samples gives the report's statistics
    # (export --format csv --table gpu_metrics), per process, device, source and metric.
    r = subprocess.run([analyze, "export", "--format", "csv", "--table", "gpu_metrics",
                        "--no-symbolize"] + inputs, capture_output=True, text=True)
    if r.returncode != 0:
        fails.append("csv --table gpu_metrics exited %d: %s" % (r.returncode, r.stderr[:200]))
    else:
        want = {(int(x["pid"]), int(x["device"]), x["source"], x["metric"]):
                (int(x["samples"]), float(x["avg"]), float(x["min"]), float(x["max"]))
                for x in csv.DictReader(io.StringIO(r.stdout)) if int(x["samples"])}
        got = {(x["pid"], x["ordinal"], x["source"], x["metric"]):
               (x["samples"], x["avg"], x["min"], x["max"]) for x in sql(db, GPU_METRICS)}
        if set(want) != set(got) or any(
                want[k][0] != got[k][0] or any(abs(a - b) > 1e-9 * max(abs(a), 1)
                                               for a, b in zip(want[k][1:], got[k][1:]))
                for k in want):
            fails.append("GPU over time: csv %s, SQL %s" % (sorted(want.items())[:2],
                                                            sorted(got.items())[:2]))
    return fails


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    analyze = os.path.join(os.path.abspath(sys.argv[1]), "bin", "gpuprof-analyze")
    if not shutil.which("sqlite3"):
        print("skip - golden sql # the sqlite3 command-line tool is not installed")
        return 0
    traces = sorted(glob.glob(os.path.join(HERE, "*.gpuprof")))
    if not traces:
        return 0
    failed = 0
    with tempfile.TemporaryDirectory(prefix="gpuprof-sql.") as tmp:
        sets = [(os.path.basename(t)[:-len(".gpuprof")], [t]) for t in traces]
        sets.append(("merged", traces))
        for name, inputs in sets:
            try:
                fails = check_set(analyze, name, inputs, tmp)
            except SqlError as e:
                fails = [str(e)]
            if fails:
                failed = 1
                print("not ok - golden sql %s: %s" % (name, fails[0]))
                for x in fails[1:]:
                    print("# " + x)
            else:
                print("ok - golden sql %s: totals match the report" % name)

        # A database needs a file: standard output is refused (usage error).
        r = subprocess.run([analyze, "export", "--format", "sqlite", "-o", "-", traces[0]],
                           capture_output=True, text=True)
        r2 = subprocess.run([analyze, "export", "--format", "sqlite", traces[0]],
                            capture_output=True, text=True)
        if r.returncode == 2 and r2.returncode == 2 and not r.stdout and "-o" in r.stderr:
            print("ok - golden sql: standard output refused")
        else:
            failed = 1
            print("not ok - golden sql: -o - exited %d, no -o exited %d" % (r.returncode, r2.returncode))

        # An unreadable trace leaves the old file as it was, and no temporary file.
        old = os.path.join(tmp, "keep", "old.sqlite")
        os.makedirs(os.path.dirname(old))
        with open(old, "w") as f:
            f.write("previous contents\n")
        r = subprocess.run([analyze, "export", "--format", "sqlite", "-o", old,
                            os.path.join(tmp, "missing.gpuprof")], capture_output=True, text=True)
        with open(old) as f:
            kept = f.read() == "previous contents\n"
        left = os.listdir(os.path.dirname(old))
        if r.returncode == 1 and kept and left == ["old.sqlite"]:
            print("ok - golden sql: a failed export keeps the old file")
        else:
            failed = 1
            print("not ok - golden sql: failed export: exit %d, old file kept %s, files %s"
                  % (r.returncode, kept, left))
    return failed


if __name__ == "__main__":
    sys.exit(main())
