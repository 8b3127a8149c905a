#!/usr/bin/env python3
"""docs/HACKING.md names every folder and every file of the tree.

    python3 test/hacking-check.py

A tracked folder is named when HACKING mentions it in backquotes (`preload/`,
`test/unit/`, `unit/py/` for a path's end, or any path under it shown with its
folder).  A tracked file is
named when a backquoted word in HACKING is its path or the end of its path
(`gpu/metrics.py`), its base name, its base
name with the extensions of a pair (`ring.[ch]`, `ring.c`; a header
is named with its source file), its stem, or a
pattern that matches it (`text-*.c`, `test_*.c`, `*.gpuprof`).  Files under
folders that HACKING declares as data (the golden traces and their expected
outputs, the test apps, the fuzz corpora) are named by their folder.  Prints
one "not ok" line per file or folder not named; exit status 1 then.
"""
import fnmatch
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Folders whose files are data or one-per-case programs: the folder is enough.
DATA_DIRS = ("test/golden/", "test/apps/", "test/unit/py/", "cupti/cshim/",
             "bench/data/", "docs/")
SKIP_FILES = {".gitignore", ".clang-format", "README.md", "LICENSE", "Makefile"}


def words(text):
    out = set()
    for w in re.findall(r"`([^`\n]+)`", text):
        for part in re.split(r"[\s,]+", w.strip()):
            part = part.strip("(),;:").rstrip(".")
            if part:
                out.add(part)
    return out


def expand(word):
    """ring.[ch] -> ring.c, ring.h; keeps patterns with * as they are."""
    m = re.match(r"^(.*)\[([a-z]+)\](.*)$", word)
    if m and "*" not in word:
        return {m.group(1) + c + m.group(3) for c in m.group(2)}
    return {word}


def main():
    text = open(os.path.join(ROOT, "docs", "HACKING.md"), encoding="utf-8").read()
    ws = set()
    for w in words(text):
        ws |= expand(w)
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                           text=True, check=True).stdout.split()
    dirs = set()
    for f in files:
        parts = f.split("/")[:-1]
        for i in range(1, len(parts) + 1):
            dirs.add("/".join(parts[:i]) + "/")
    bad = 0
    for d in sorted(dirs):
        base = d.rstrip("/").split("/")[-1] + "/"
        if (d in ws or base in ws or any(w.startswith(d) for w in ws)
                or any(w.endswith("/") and ("/" + d).endswith("/" + w) for w in ws)):
            continue
        print("not ok - HACKING.md does not name the folder %s" % d)
        bad += 1
    for f in files:
        if f in SKIP_FILES or any(f.startswith(p) for p in DATA_DIRS):
            continue
        name = os.path.basename(f)
        stem = name.split(".")[0]
        cands = {f, name, stem}
        # A header is named with its source file: HACKING names pairs once.
        if name.endswith(".h"):
            cands |= {f[:-2] + ".c", stem + ".c"}
        if any(c in ws for c in cands) or any("/" in w and f.endswith("/" + w) for w in ws):
            continue
        if any(("*" in w or "?" in w) and
               (fnmatch.fnmatch(name, w) or fnmatch.fnmatch(f, w)) for w in ws):
            continue
        print("not ok - HACKING.md does not name %s" % f)
        bad += 1
    if not bad:
        print("ok - HACKING.md names every folder and file (%d files, %d folders)"
              % (len(files), len(dirs)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
