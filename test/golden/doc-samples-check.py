#!/usr/bin/env python3
"""Sample outputs in README.md and docs/ are real: each equals a golden report.

    python3 test/golden/doc-samples-check.py

A sample is the fenced block that follows a line
    <!-- sample: test/golden/NAME.report.txt, TRACE.gpuprof as SHOWN -->
in README.md or docs/*.md.  From the block's line equal to the golden's first
line on, each line must be the golden's next line, with the masked trace name
TRACE.gpuprof read as SHOWN; a line "…" alone skips golden lines up to the
block's next line (a cut).  What comes before that line (the command, the
program's own output, the wrapper's lines) is free text.  Prints "ok - doc
sample FILE:LINE" or "not ok - ..." per sample; exit status 1 on a mismatch,
and when no sample is found at all.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MARK = re.compile(r"<!-- sample: (\S+), TRACE\.gpuprof as (\S+) -->")


def check(block, golden, shown):
    want = [l.replace("TRACE.gpuprof", shown) for l in golden]
    try:
        start = block.index(want[0])
    except ValueError:
        return "the golden's first line %r is not in the sample" % want[0]
    gi = 0
    bi = start
    while bi < len(block):
        line = block[bi]
        if line == "\u2026" and not (gi < len(want) and want[gi] == line):
            nxt = block[bi + 1] if bi + 1 < len(block) else None
            if nxt is None:
                return None
            while gi < len(want) and want[gi] != nxt:
                gi += 1
            if gi == len(want):
                return "after the cut at sample line %d, %r is not in the golden" % (bi + 1, nxt)
            bi += 1
            continue
        if gi >= len(want):
            return "sample line %d %r: the golden has ended" % (bi + 1, line)
        if line != want[gi]:
            return "sample line %d is %r, the golden's line %d is %r" % (bi + 1, line, gi + 1,
                                                                        want[gi])
        gi += 1
        bi += 1
    return None


def main():
    docs = [os.path.join(ROOT, "README.md")]
    ddir = os.path.join(ROOT, "docs")
    docs += sorted(os.path.join(ddir, f) for f in os.listdir(ddir) if f.endswith(".md"))
    found = failed = 0
    for doc in docs:
        lines = open(doc, encoding="utf-8").read().split("\n")
        for i, l in enumerate(lines):
            m = MARK.search(l)
            if not m:
                continue
            found += 1
            where = "%s:%d" % (os.path.relpath(doc, ROOT), i + 1)
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            k = j + 1
            while k < len(lines) and not lines[k].startswith("```"):
                k += 1
            gpath = os.path.join(ROOT, m.group(1))
            if j >= len(lines) or k >= len(lines) or not os.path.isfile(gpath):
                why = "no fenced block follows" if k >= len(lines) else "no " + m.group(1)
            else:
                golden = open(gpath, encoding="utf-8").read().rstrip("\n").split("\n")
                why = check(lines[j + 1:k], golden, m.group(2))
            if why:
                failed += 1
                print("not ok - doc sample %s: %s" % (where, why))
            else:
                print("ok - doc sample %s" % where)
    if not found:
        print("not ok - doc samples: no <!-- sample: ... --> mark in README.md or docs/")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
