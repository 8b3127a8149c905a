#!/usr/bin/env python3
"""The analyzer's layers: no include loop, and no arrow back up; and one
name, one file across the tree.

    python3 test/layering-check.py

The analyzer is layered base <- read <- model <- views <- cmd <- main.c: a
file may include the files of its own folder and of the folders below it,
never those above (model/ prints nothing and knows no view; views/ read the
finished model and parse no options).  A source file and its header
(ranks.c, ranks.h) are one module; no module may reach itself through the
includes of others (model.c including ranks.h while ranks.c includes
model.h is such a loop, though neither header includes the other).

Reads every analyzer/**/*.[ch] and its #include "..." lines; includes that
are not the analyzer's (gpuprof/trace.h, system headers) are left out.
Prints one "not ok" line per arrow back up and per loop, a "skip" line per
loop listed in KNOWN_LOOPS with what ends it, and an "ok" line when nothing
else is wrong; exit status 1 on any failure.

Names: no two tracked source files share a base name, a .c and its .h in
one folder counting as one (views/export.h beside cmd/export.c, or
model/diff.c beside cmd/diff.c, had readers and tools open the wrong one).
Source files are code, headers, scripts and schemas (SOURCE_EXT, and names
without an extension such as scripts/gpuprof); the golden cases' traces and
expected outputs are data laid out alike on purpose (ranks/job-0.gpuprof,
ranks_nccl/job-0.gpuprof) and are left out.  Prints one "not ok" line per
name used twice, else an "ok" line.
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ANA = os.path.join(ROOT, "analyzer")
LAYERS = ["base", "read", "model", "views", "cmd"]
# Loops known and owned: each says what ends it.  A loop not listed fails.
KNOWN_LOOPS = {
}
SOURCE_EXT = (".c", ".h", ".cu", ".cuh", ".py", ".sh", ".bash", ".proto")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer(rel):
    """Layer of an analyzer path: its folder's index; main.c and other top-level files above cmd."""
    top = rel.split("/")[0]
    if "/" not in rel:
        return len(LAYERS) if rel.endswith(".c") else -1   # version.h: a leaf anyone may read
    if top not in LAYERS:
        return None
    return LAYERS.index(top)


def module(rel):
    return os.path.splitext(rel)[0]


def resolve(src_rel, name):
    """The analyzer file an #include "name" in src_rel reads (-Ianalyzer, then its own folder)."""
    for cand in (os.path.normpath(name),
                 os.path.normpath(os.path.join(os.path.dirname(src_rel), name))):
        if os.path.isfile(os.path.join(ANA, cand)):
            return cand
    return None


def tracked_files():
    """The repository's tracked files, relative to ROOT ('git ls-files'; without git, the tree less hidden and build* folders)."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True)
        names = [n for n in out.stdout.decode("utf-8", "replace").split("\0") if n]
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for d, dirs, files in os.walk(ROOT):
        dirs[:] = [x for x in dirs if not x.startswith((".", "build"))]
        for n in files:
            names.append(os.path.relpath(os.path.join(d, n), ROOT).replace(os.sep, "/"))
    return names


def name_check():
    """One name, one file: returns the number of base names used in more than one folder."""
    where = {}
    for path in tracked_files():
        base = path.rsplit("/", 1)[-1]
        stem, ext = os.path.splitext(base)
        if ext and ext not in SOURCE_EXT:
            continue
        key = stem if ext in (".c", ".h") else base
        where.setdefault(key, []).append(path)
    bad = 0
    for key in sorted(where):
        dirs = {os.path.dirname(p) for p in where[key]}
        if len(dirs) > 1:
            print("not ok - names: %s is the name of %s; one name, one file"
                  % (key, ", ".join(sorted(where[key]))))
            bad += 1
    if not bad:
        print("ok - names: %d source files, no base name in two folders" % len(where))
    return bad


def main():
    names_bad = name_check()
    files = []
    for d, _, names in os.walk(ANA):
        for n in names:
            if n.endswith((".c", ".h")):
                files.append(os.path.relpath(os.path.join(d, n), ANA).replace(os.sep, "/"))
    files.sort()
    bad = 0
    edges = {}
    for f in files:
        text = open(os.path.join(ANA, f), encoding="utf-8", errors="replace").read()
        lf = layer(f)
        if lf is None:
            print("not ok - layering: analyzer/%s is in no layer (%s)" % (f, ", ".join(LAYERS)))
            bad += 1
            continue
        for name in INCLUDE.findall(text):
            to = resolve(f, name)
            if to is None:
                continue
            lt = layer(to)
            if lt is not None and lt > lf:
                print("not ok - layering: analyzer/%s includes %s, a layer above it" % (f, to))
                bad += 1
            if module(to) != module(f):
                edges.setdefault(module(f), set()).add(module(to))
    # Loops: strongly connected components of more than one module (Tarjan).
    index, low, stack, on, loops = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                loops.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted({module(f) for f in files}):
        if v not in index:
            visit(v)
    for comp in loops:
        names = ", ".join(c + ".[ch]" for c in comp)
        why = KNOWN_LOOPS.get(tuple(comp))
        if why:
            print("skip - layering: include loop among %s # known: %s" % (names, why))
            continue
        print("not ok - layering: include loop among %s" % names)
        bad += 1
    if not bad:
        print("ok - layering: %d analyzer files, no arrow back up (%s), no include loop "
              "but the known ones" % (len(files), " <- ".join(LAYERS + ["main.c"])))
    return 1 if bad or names_bad else 0


if __name__ == "__main__":
    sys.exit(main())
