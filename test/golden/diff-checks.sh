#!/usr/bin/env bash
# gpuprof diff over two traces recorded on a GPU from test/apps/diff_pair.cu:
# diff_base.gpuprof (spin_a and spin_b, 100 us each, 20 times) and
# diff_slow.gpuprof (the same with spin_b twice as long).  The diff must name
# spin_b first with a ratio near 2, spin_a near 1, and --fail-above must
# answer with exit status 3 above 50% and 0 above 150%.
#
# usage: test/golden/diff-checks.sh BUILD_DIR
set -u

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
analyze=$build/bin/gpuprof-analyze
base=$here/diff_base.gpuprof
slow=$here/diff_slow.gpuprof

if [ ! -f "$base" ] || [ ! -f "$slow" ]; then
	echo "skip - golden diff # no diff_base/diff_slow traces"
	exit 0
fi
out=$("$analyze" diff --json "$base" "$slow") || {
	echo "not ok - golden diff: diff --json exited $?"
	exit 1
}
why=$(printf '%s' "$out" | python3 -c '
import json, sys
d = json.load(sys.stdin)
items = d["items"]
k = [i for i in items if i["kind"] == "kernel"]
errs = []
if not items or items[0]["kind"] != "kernel" or items[0]["name"] != "spin_b":
    errs.append("first item %s, expected kernel spin_b" % (items[:1],))
b = [i for i in k if i["name"] == "spin_b"]
a = [i for i in k if i["name"] == "spin_a"]
if not b or not 1.9 <= b[0]["ratio"] <= 2.1:
    errs.append("spin_b %s, expected a ratio near 2" % b)
if not a or not 0.9 <= a[0]["ratio"] <= 1.1:
    errs.append("spin_a %s, expected a ratio near 1" % a)
print("; ".join(errs))
')
if [ -n "$why" ]; then
	echo "not ok - golden diff: $why"
	exit 1
fi
"$analyze" diff --fail-above 50 "$base" "$slow" >/dev/null
rc1=$?
"$analyze" diff --fail-above 150 "$base" "$slow" >/dev/null
rc2=$?
if [ "$rc1" != 3 ] || [ "$rc2" != 0 ]; then
	echo "not ok - golden diff: --fail-above 50 exited $rc1 (want 3), 150 exited $rc2 (want 0)"
	exit 1
fi
echo "ok - golden diff: spin_b first, ratio near 2; --fail-above answers 3 and 0"
