#!/usr/bin/env bash
# A 2-rank job recorded on a GPU (test/golden/ranks/): test/apps/mpi_ranks.cu
# under "mpirun -np 2 gpuprof run -o 'job-%q{OMPI_COMM_WORLD_RANK}'", both
# ranks on one GPU.  The merged report and JSON export of the two traces
# (given in reverse order) must equal the expected files beside them
# (ranks/merged.report.txt, ranks/merged.json); the merged Chrome export
# must pass chrome-checks.py and show rank 0 then rank 1; the rank table
# must name both and say rank 1 was slowest in step 1.
#
# usage: test/golden/ranks-checks.sh BUILD_DIR
#   GOLDEN_REGENERATE=1 test/golden/ranks-checks.sh build   rewrites the expected files
set -u

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
analyze=$build/bin/gpuprof-analyze
dir=$here/ranks

if [ ! -f "$dir/job-0.gpuprof" ] || [ ! -f "$dir/job-1.gpuprof" ]; then
	echo "skip - golden ranks # no ranks/job-0 and job-1 traces"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-ranks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

for kind in report json; do
	if [ $kind = report ]; then
		expected=$dir/merged.report.txt
		args=(report --no-symbolize)
	else
		expected=$dir/merged.json
		args=(export --format json --no-symbolize)
	fi
	if ! (cd "$dir" && "$analyze" "${args[@]}" job-1.gpuprof job-0.gpuprof) \
		>"$tmp/$kind" 2>"$tmp/err"; then
		echo "not ok - golden ranks $kind: exited non-zero: $(head -c 300 "$tmp/err")"
		failed=1
		continue
	fi
	if [ "${GOLDEN_REGENERATE:-0}" = 1 ]; then
		cp "$tmp/$kind" "$expected"
		echo "ok - golden ranks $kind (expected file regenerated)"
		continue
	fi
	if d=$(diff -u --label "expected/ranks/${expected##*/}" --label actual "$expected" "$tmp/$kind"); then
		echo "ok - golden ranks merged $kind"
	else
		echo "not ok - golden ranks merged $kind differs"
		printf '%s\n' "$d" | sed 's/^/# /'
		failed=1
	fi
done

why=$(python3 - "$tmp/report" "$tmp/json" <<'EOF'
import json, sys
rep = open(sys.argv[1]).read()
js = json.load(open(sys.argv[2]))
errs = []
for r in (0, 1):
    if "rank %d, pid" % r not in rep or "cuda:0 [rank %d]" % r not in rep:
        errs.append("the report does not name rank %d" % r)
if "Ranks (" not in rep or "Warnings:" in rep:
    errs.append("no rank table, or a warning")
if [r.get("rank") for r in js.get("ranks", [])] != [0, 1]:
    errs.append("JSON ranks %s" % [r.get("rank") for r in js.get("ranks", [])])
if [p.get("rank") for p in js.get("processes", [])] != [0, 1]:
    errs.append("JSON processes not in rank order")
if [p.get("clock_syncs", 0) >= 2 for p in js.get("processes", [])] != [True, True]:
    errs.append("clock sync records %s, expected 2 or more per trace"
                % [p.get("clock_syncs") for p in js.get("processes", [])])
slow = [s for s in js.get("steps", []) if s.get("index") == 1]
if not slow or slow[0].get("slowest_rank") != 1:
    errs.append("step 1 slowest %s, expected rank 1" % slow)
print("; ".join(errs))
EOF
)
if [ -n "$why" ]; then
	echo "not ok - golden ranks views: $why"
	failed=1
else
	echo "ok - golden ranks views name rank 0 and rank 1, in order"
fi

if [ "${GOLDEN_REGENERATE:-0}" != 1 ]; then
	if ! "$analyze" export --format chrome --no-symbolize -o "$tmp/c.json" "$dir/job-1.gpuprof" "$dir/job-0.gpuprof" ||
		! "$analyze" export --format csv --no-symbolize -o "$tmp/c.csv" "$dir/job-1.gpuprof" "$dir/job-0.gpuprof"; then
		echo "not ok - golden ranks chrome: export failed"
		failed=1
	else
		out=$(python3 "$here/chrome-checks.py" "$tmp/c.json" "$tmp/c.csv")
		rc=$?
		printf '%s\n' "$out" | sed "s|$tmp/c.json|ranks merged|"
		[ "$rc" = 0 ] || failed=1
		order=$(python3 - "$tmp/c.json" <<'EOF'
import json, sys
ch = json.load(open(sys.argv[1]))
ev = ch.get("traceEvents", ch) if isinstance(ch, dict) else ch
name, order = {}, {}
for e in ev:
    if isinstance(e, dict) and e.get("ph") == "M":
        if e.get("name") == "process_name":
            name[e["pid"]] = e["args"]["name"]
        elif e.get("name") == "process_sort_index":
            order[e["pid"]] = e["args"]["sort_index"]
shown = [name[p] for p in sorted(name, key=lambda p: (order.get(p, 0), p))]
ok = len(shown) == 2 and shown[0].startswith("rank 0:") and shown[1].startswith("rank 1:")
print("" if ok else "processes shown as %s" % shown)
EOF
)
		if [ -n "$order" ]; then
			echo "not ok - golden ranks chrome order: $order"
			failed=1
		else
			echo "ok - golden ranks chrome shows rank 0 then rank 1"
		fi
	fi
fi
exit $failed
