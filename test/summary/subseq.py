#!/usr/bin/env python3
"""usage: subseq.py DIRECT.txt SUMMARY.txt: every line of the report of a
summary, but its "Summaries:" note, is in the direct report, in order (the
summary's report leaves out tables, never changes one).  Medians marked ~
are not compared here (compare.py bounds them in JSON), nor the padding
their ~ adds to a column."""
import sys

d = open(sys.argv[1]).read().splitlines()
s = open(sys.argv[2]).read().splitlines()


def same(direct, summ):
    """Equal lines, or table rows equal but for a median marked ~ (an estimate)."""
    if direct == summ:
        return True
    # A column an estimate's ~ widened: separators of as many columns, cells equal
    # but for their padding.
    if set(direct) <= set("-+") and set(summ) <= set("-+"):
        return direct.count("+") == summ.count("+") and "+" in direct
    a, b = direct.split("|"), summ.split("|")
    if len(a) == len(b) > 1 and all(x.strip() == y.strip() for x, y in zip(a, b)):
        return True
    if len(a) != len(b) or not any(c.strip().startswith("~") for c in b):
        return False
    return all(x.strip() == y.strip() or y.strip().startswith("~") for x, y in zip(a, b))


i = 0
skip = False
for n, line in enumerate(s):
    if line.startswith("Summaries:") or (skip and line.startswith("              ")):
        skip = True
        continue
    skip = False
    while i < len(d) and not same(d[i], line):
        i += 1
    if i == len(d):
        print(f"{sys.argv[2]}: line {n + 1} is not in the direct report (in order): {line!r}")
        sys.exit(1)
    i += 1
