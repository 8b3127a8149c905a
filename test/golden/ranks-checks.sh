#!/usr/bin/env bash
# 2-rank jobs recorded on GPUs, one directory each:
#   ranks/       test/apps/mpi_ranks.cu under "mpirun -np 2 gpuprof run -o
#                'job-%q{OMPI_COMM_WORLD_RANK}'", both ranks on one GPU;
#   ranks_nccl/  test/apps/torch_ranks.py nccl under "gpuprof run -o
#                'job-%q{RANK}' torchrun --standalone --nproc-per-node 2", on
#                two H200s, rank r on cuda:r, 5 NCCL all-reduce kernels per
#                rank (4 steps and the barrier).
# The merged report and JSON export of the two traces (given in reverse
# order) must equal the expected files beside them (merged.report.txt,
# merged.json); the merged Chrome export must pass chrome-checks.py and
# nest-checks.py and show rank 0 then rank 1; the rank table must name both and say rank 1 was
# slowest in step 1; for the NCCL job, report --align nccl must correct
# rank 1's clock from its matching collectives.
#
# usage: test/golden/ranks-checks.sh BUILD_DIR
#   GOLDEN_REGENERATE=1 test/golden/ranks-checks.sh build   rewrites the expected files
set -u

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
analyze=$build/bin/gpuprof-analyze
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-ranks.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# check_job NAME: the checks of directory NAME (see above).
check_job() {
local name=$1 dir=$here/$1
if [ ! -f "$dir/job-0.gpuprof" ] || [ ! -f "$dir/job-1.gpuprof" ]; then
	echo "skip - golden $name # no $name/job-0 and job-1 traces"
	return
fi
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
		echo "not ok - golden $name $kind: exited non-zero: $(head -c 300 "$tmp/err")"
		failed=1
		continue
	fi
	if [ "${GOLDEN_REGENERATE:-0}" = 1 ]; then
		cp "$tmp/$kind" "$expected"
		echo "ok - golden $name $kind (expected file regenerated)"
		continue
	fi
	if d=$(diff -u --label "expected/$name/${expected##*/}" --label actual "$expected" "$tmp/$kind"); then
		echo "ok - golden $name merged $kind"
	else
		echo "not ok - golden $name merged $kind differs"
		printf '%s\n' "$d" | sed 's/^/# /'
		failed=1
	fi
done

"$analyze" report --no-symbolize --align nccl "$dir/job-1.gpuprof" "$dir/job-0.gpuprof" \
	>"$tmp/align" 2>&1
why=$(python3 - "$tmp/report" "$tmp/json" "$name" "$tmp/align" <<'EOF'
import json, re, sys
rep = open(sys.argv[1]).read()
js = json.load(open(sys.argv[2]))
nccl = sys.argv[3] == "ranks_nccl"
errs = []
for r in (0, 1):
    if "rank %d, pid" % r not in rep or "cuda:%d [rank %d]" % (r if nccl else 0, r) not in rep:
        errs.append("the report does not name rank %d" % r)
if nccl:
    if [r.get("nccl_kernels") for r in js.get("ranks", [])] != [5, 5]:
        errs.append("NCCL kernels per rank %s, expected 5 and 5"
                    % [r.get("nccl_kernels") for r in js.get("ranks", [])])
    m = re.search(r"^rank 1 \|\s+[+-]?[\d.]+ \S+ \|\s+- \|\s+[+-]?[\d.]+ \S+ \|\s+5 \|\s+(\d) \|",
                  open(sys.argv[4]).read(), re.M)
    if not m or int(m.group(1)) < 3:
        errs.append("report --align nccl corrects rank 1 from fewer than 3 of its 5 collectives")
    # Each GPU names the rank that ran on it, not every rank that saw it.
    for d in (0, 1):
        if not re.search(r"^(GPU:)?\s+cuda:%d\s.*\[rank %d\]$" % (d, d), rep, re.M):
            errs.append("the GPU line of cuda:%d does not name rank %d alone" % (d, d))
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
	echo "not ok - golden $name views: $why"
	failed=1
else
	echo "ok - golden $name views name rank 0 and rank 1, in order"
fi

if [ "${GOLDEN_REGENERATE:-0}" != 1 ]; then
	if ! "$analyze" export --format chrome --no-symbolize -o "$tmp/c.json" "$dir/job-1.gpuprof" "$dir/job-0.gpuprof" ||
		! "$analyze" export --format csv --no-symbolize -o "$tmp/c.csv" "$dir/job-1.gpuprof" "$dir/job-0.gpuprof"; then
		echo "not ok - golden $name chrome: export failed"
		failed=1
	else
		out=$(python3 "$here/chrome-checks.py" "$tmp/c.json" "$tmp/c.csv")
		rc=$?
		printf '%s\n' "$out" | sed "s|$tmp/c.json|$name merged|"
		[ "$rc" = 0 ] || failed=1
		python3 "$here/nest-checks.py" "$tmp/c.json" "$name merged" || failed=1
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
			echo "not ok - golden $name chrome order: $order"
			failed=1
		else
			echo "ok - golden $name chrome shows rank 0 then rank 1"
		fi
	fi
fi
}

check_job ranks
check_job ranks_nccl
exit $failed
