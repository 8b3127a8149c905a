#!/usr/bin/env python3
"""Every key of the JSON export is documented in docs/JSON.md.

    json-doc-checks.py [JSON ...]

Walks each JSON export given (by default the expected exports of the
golden traces, test/golden/*.json) and checks that every object key it
holds is named in docs/JSON.md in backquotes (bare, as `key`, or at the end
of a path, as `devices[].key`).  Keys inside `values_sum` are metric names,
not schema.  Prints "ok - ..." or "not ok - ..." and exits 1 on any key
not documented.
"""
import glob
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DOC = os.path.join(HERE, "..", "..", "docs", "JSON.md")


def main():
    files = sys.argv[1:] or sorted(glob.glob(os.path.join(HERE, "*.json")))
    with open(DOC) as f:
        documented = set(re.findall(r"`(?:[\w\[\]]+\.)*(\w+)`", f.read()))
    missing = {}
    keys = set()

    def walk(x, path):
        if isinstance(x, dict):
            for k, v in x.items():
                if path.endswith(".values_sum"):
                    continue
                keys.add(k)
                if k not in documented:
                    missing.setdefault(k, path + "." + k)
                walk(v, path + "." + k)
        elif isinstance(x, list):
            for v in x:
                walk(v, path + "[]")

    for name in files:
        with open(name) as f:
            walk(json.load(f), "")
    if missing:
        print("not ok - json docs: %d keys not in docs/JSON.md: %s"
              % (len(missing), ", ".join(sorted(missing.values()))))
        return 1
    print("ok - json docs: all %d keys of %d exports documented" % (len(keys), len(files)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
