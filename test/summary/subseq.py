#!/usr/bin/env python3
"""usage: subseq.py DIRECT.txt SUMMARY.txt: every line of the report of a
summary, but its "Summaries:" note, is in the direct report, in order (the
summary's report leaves out tables, never changes one).  Medians marked ~
are not compared here (compare.py bounds them)."""
import sys

d = open(sys.argv[1]).read().splitlines()
s = open(sys.argv[2]).read().splitlines()
i = 0
skip = False
for n, line in enumerate(s):
    if line.startswith("Summaries:") or (skip and line.startswith("              ")):
        skip = True
        continue
    skip = False
    while i < len(d) and d[i] != line:
        i += 1
    if i == len(d):
        print(f"{sys.argv[2]}: line {n + 1} is not in the direct report (in order): {line!r}")
        sys.exit(1)
    i += 1
