#!/usr/bin/python3
"""gpuprof-dask.py: the summarize map of a large job as Dask tasks.

Called by 'gpuprof report --dask ADDRESS' and 'gpuprof export -t json --dask
ADDRESS' (analyzer/cmd/dask.c), or by hand:

  gpuprof-dask.py --analyze /path/gpuprof-analyze --scheduler ADDRESS \
                  -o MERGED.sum [--exact | --exact-limit N] TRACE|PATTERN...

Each trace (patterns are expanded here, in sorted order; paths are made
absolute: the workers must see them at the same path, on a shared file
system) is one task that runs 'gpuprof-analyze summarize -o - TRACE' on a
worker and returns the summary's bytes.  The summaries are merged by a tree
reduce of tasks running 'gpuprof-analyze summarize' on up to FAN_IN parts
each; the merge is associative and commutative, so the order tasks finish in
does not matter.  A worker that dies is replaced by Dask, which runs its tasks
again elsewhere (tasks are idempotent: they write nothing but their result).
A trace that cannot be summarized is named on stderr with the analyzer's
message; the others are still merged, and the exit status is 3.

ADDRESS is tcp://HOST:PORT (or HOST:PORT), or 'env' for the address in
DASK_SCHEDULER_ADDRESS (Dask's own configuration, as Nsight Systems recipes
use it).  Every other DASK_* variable configures the client as usual (TLS
among them).  The analyzer must exist at the same path on every worker.
Needs Debian's python3-distributed (this script runs under /usr/bin/python3).

Exit status: 0 all merged, 3 some traces missing (the rest merged), 1 nothing
to merge or the cluster could not be used, 2 bad usage.
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile

FAN_IN = 8


def summarize_task(analyze, path, limit_args):
    """Runs on a worker: one trace to one summary's bytes."""
    r = subprocess.run([analyze, "summarize", *limit_args, "-o", "-", path],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        msg = r.stderr.decode(errors="replace").strip() or f"exit status {r.returncode}"
        raise RuntimeError(msg)
    return r.stdout


def merge_task(analyze, limit_args, *parts):
    """Runs on a worker: several summaries' bytes to one."""
    with tempfile.TemporaryDirectory(prefix="gpuprof-merge.") as d:
        names = []
        for i, b in enumerate(parts):
            name = os.path.join(d, f"part{i}.sum")
            with open(name, "wb") as f:
                f.write(b)
            names.append(name)
        r = subprocess.run([analyze, "summarize", *limit_args, "-o", "-", *names],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        raise RuntimeError(r.stderr.decode(errors="replace").strip())
    return r.stdout


def expand(patterns):
    paths, unmatched = [], []
    for p in patterns:
        if any(c in p for c in "*?["):
            got = sorted(glob.glob(p))
            if not got:
                unmatched.append(p)
            paths.extend(got)
        else:
            paths.append(p)
    seen, out = set(), []
    for p in paths:
        a = os.path.abspath(p)
        if a not in seen:
            seen.add(a)
            out.append(a)
    return out, unmatched


def main():
    ap = argparse.ArgumentParser(prog="gpuprof-dask.py", add_help=True)
    ap.add_argument("--analyze", required=True)
    ap.add_argument("--scheduler", required=True)
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--exact", action="store_true")
    ap.add_argument("--exact-limit", type=int)
    ap.add_argument("--timeout", help="connecting to the scheduler (default: Dask's "
                    "distributed.comm.timeouts.connect, 30 s)")
    ap.add_argument("traces", nargs="+")
    a = ap.parse_args()
    limit_args = ["--exact"] if a.exact else \
        (["--exact-limit", str(a.exact_limit)] if a.exact_limit else [])
    paths, unmatched = expand(a.traces)
    for p in unmatched:
        print(f"gpuprof: {p}: no file matches", file=sys.stderr)
    if not paths:
        print("gpuprof: --dask: no trace to summarize", file=sys.stderr)
        return 1
    try:
        from distributed import Client, as_completed
    except ImportError as e:
        print(f"gpuprof: --dask needs Dask's distributed module for {sys.executable} "
              f"(Debian: apt-get install --no-install-recommends python3-distributed): {e}",
              file=sys.stderr)
        return 1
    analyze = os.path.abspath(a.analyze)
    kw = {"timeout": a.timeout} if a.timeout else {}
    try:
        if a.scheduler == "env":
            if not os.environ.get("DASK_SCHEDULER_ADDRESS"):
                print("gpuprof: --dask env: DASK_SCHEDULER_ADDRESS is not set", file=sys.stderr)
                return 1
            client = Client(**kw)
        else:
            client = Client(a.scheduler, **kw)
    except Exception as e:  # OSError, TimeoutError, ValueError from Dask
        print(f"gpuprof: --dask {a.scheduler}: cannot connect to the scheduler: {e}",
              file=sys.stderr)
        return 1
    missing = []
    try:
        # pure=False: a trace rewritten in place is summarized again.
        futs = client.map(summarize_task, [analyze] * len(paths), paths,
                          [limit_args] * len(paths), pure=False)
        name = {f.key: p for f, p in zip(futs, paths)}
        level, pending = [], []
        for f in as_completed(futs):
            if f.status != "finished":
                try:
                    err = f.exception()
                except Exception as e:  # the exception could not be fetched
                    err = e
                missing.append((name[f.key], err))
                continue
            level.append(f)
            # Tree reduce: FAN_IN finished parts become one merge task.
            if len(level) == FAN_IN:
                pending.append(client.submit(merge_task, analyze, limit_args, *level,
                                             pure=False))
                level = []
        parts = level + pending
        while len(parts) > 1:
            nxt = []
            for i in range(0, len(parts), FAN_IN):
                group = parts[i:i + FAN_IN]
                nxt.append(group[0] if len(group) == 1 else
                           client.submit(merge_task, analyze, limit_args, *group,
                                         pure=False))
            parts = nxt
        for p, err in sorted(missing):
            print(f"gpuprof: --dask: {p}: not summarized, missing from the report: {err}",
                  file=sys.stderr)
        if not parts:
            print("gpuprof: --dask: no trace could be summarized", file=sys.stderr)
            return 1
        data = parts[0].result()
    except Exception as e:
        print(f"gpuprof: --dask: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        client.close()
    tmp = a.output + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, a.output)
    if missing:
        print(f"gpuprof: --dask: {len(missing)} of {len(paths)} traces missing from the "
              f"report", file=sys.stderr)
        return 3
    return 0


if __name__ == "__main__":
    sys.exit(main())
