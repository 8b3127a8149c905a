#!/usr/bin/env bash
# Checks make bench-analyzer's parts on small traces, no GPU: the trace
# writers (bench/synth_trace, bench/synth_job) and the decompress+scan floor
# (bench/scan_floor) build; the floor counts the records the analyzer reads
# (export -t json's "records" per file); bench/analyzer.py runs every kind
# of trace with -j 1, 2 and the default and finds the report the same in
# every run, and writes the timeline, chrome and perfetto rows of the
# kernel-only trace (records/s, ratio to the floor, peak RSS; Perfetto's
# bytes per record), and the rank traces' -j speedups beside the floor's
# run as as many processes at once; a single NVTX trace file read once
# (paced) gives the report and JSON of it read twice (standard input), its
# summary too, and the pool of two ranks' summaries the report of the two
# read together.
# Prints "ok - ..." / "not ok - ..." lines.
#
#   bash test/bench-analyzer-checks.sh BUILD_DIR
set -u

build=${1:?usage: test/bench-analyzer-checks.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-bench-analyzer.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0

ok() { echo "ok - bench-analyzer: $1"; }
notok() { echo "not ok - bench-analyzer: $1"; fail=1; }

if ! make --no-print-directory -s BUILD="$build" "$build/bench/synth_trace" \
	"$build/bench/synth_job" "$build/bench/scan_floor" >"$tmp/make.log" 2>&1; then
	notok "the bench programs do not build: $(tail -3 "$tmp/make.log")"
	exit 1
fi
ok "synth_trace, synth_job and scan_floor build"

ana=$build/bin/gpuprof-analyze
"$build/bench/synth_job" --rank 3 30000 "$tmp/a.gpuprof" &&
	"$build/bench/synth_trace" --mix 20000 "$tmp/b.gpuprof" 2>/dev/null || {
	notok "the trace writers failed"
	exit 1
}
floor=$("$build/bench/scan_floor" "$tmp/a.gpuprof" "$tmp/b.gpuprof" | awk '{print $2}')
read_=$("$ana" export -t json "$tmp/a.gpuprof" "$tmp/b.gpuprof" |
	python3 -c 'import json,sys; print(sum(f["records"] for f in json.load(sys.stdin)["files"]))')
if [ -n "$floor" ] && [ "$floor" = "$read_" ]; then
	ok "the floor counts the records the analyzer reads ($floor)"
else
	notok "the floor counts '$floor' records, the analyzer '$read_'"
fi
"$build/bench/scan_floor" "$tmp/nope.gpuprof" >/dev/null 2>"$tmp/err"
if grep -q "nope.gpuprof" "$tmp/err"; then
	ok "the floor names a file it cannot read"
else
	notok "the floor's error: $(cat "$tmp/err")"
fi

if python3 bench/analyzer.py --build "$build" --records 40000 --ranks 3 --repeat 2 \
	--jobs "1 2 0" --dir "$tmp/traces" --out "$tmp/res.md" >"$tmp/out" 2>"$tmp/err"; then
	rows=$(grep -c '^| \(kern\|mix\|nvtx\|ranks\) ' "$tmp/res.md")
	if [ "$rows" = 12 ]; then
		ok "analyzer.py: 4 traces x 3 -j values, the same report each run"
	else
		notok "analyzer.py wrote $rows rows, not 12: $(cat "$tmp/res.md")"
	fi
	# | output | trace | records | floor | wall | CPU | M/s wall | M/s CPU | vs floor | RSS | B/record |
	if awk -F' *[|] *' '$2 ~ /^(timeline|chrome|perfetto)$/ && $3 ~ /^kern / {
			n++; if ($4 != 40028 || !($8 + 0 > 0) || !($9 + 0 > 0) || !($10 + 0 > 0) || !($11 + 0 > 0)) bad = 1
			if ($2 == "perfetto" && !($12 + 0 > 4 && $12 + 0 < 100)) bad = 1 }
		END { exit !(n == 3 && !bad) }' "$tmp/res.md"; then
		ok "analyzer.py: timeline, chrome and perfetto rows of the kernel-only trace"
	else
		notok "analyzer.py's export rows: $(grep -E '^[|] (timeline|chrome|perfetto) ' "$tmp/res.md")"
	fi
	# | -j | report speedup | floor speedup | report / floor |: -j 2 and the default
	if grep -q '^Scaling of ranks ' "$tmp/res.md" &&
		awk -F' *[|] *' '$2 ~ /^[0-9]+( [(]all[)])?$/ && $3 ~ /^[0-9.]+$/ {
				# each speedup printed to 0.01: the ratio of the printed ones within that
				n++; if (!($3 + 0 > 0 && $4 + 0 > 0)) { bad = 1; next }
				d = $5 - $3 / $4; if (d < 0) d = -d
				if (d > $5 * (0.006 / $3 + 0.006 / $4) + 0.006) bad = 1 }
			END { exit !(n == 2 && !bad) }' "$tmp/res.md"; then
		ok "analyzer.py: the rank traces' speedups beside the floor's on as many processes"
	else
		notok "analyzer.py's scaling rows: $(grep -A5 '^Scaling' "$tmp/res.md")"
	fi
else
	notok "analyzer.py failed: $(tail -5 "$tmp/err") $(grep FAILED "$tmp/out")"
fi

# The traces only asked for, a row per -j, the same report: many kernel
# names, and kernels before their API records (--only late).
for kind in "names 20000 names 2e+03x2e+04 2,000 kernel names" \
	    "late 40000 late 4e+04 kernels before their API records"; do
	# shellcheck disable=SC2086
	set -- $kind
	only=$1 n=$2 label="$3 $4"
	shift 4
	if python3 bench/analyzer.py --build "$build" --records "$n" --repeat 1 --jobs "1 0" \
		--only "$only" --exports "" --dir "$tmp/traces" --out "$tmp/$only.md" \
		>"$tmp/out" 2>"$tmp/err"; then
		rows=$(grep -c "^| $label | " "$tmp/$only.md")
		if [ "$rows" = 2 ]; then
			ok "analyzer.py --only $only: $*, 2 -j values, the same report"
		else
			notok "analyzer.py --only $only wrote $rows rows, not 2: $(cat "$tmp/$only.md")"
		fi
	else
		notok "analyzer.py --only $only failed: $(tail -5 "$tmp/err")"
	fi
done

# A single trace file's NVTX pass rides in the report's read of it (paced);
# from standard input it is read twice: the same report and JSON but for the
# name.  With a range around everything announced open at the start and
# written last (--open), the paced read folds what follows in it; written
# last only (--open-unannounced, as traces of recorders before
# GP_REC_NVTX_OPEN), the paced read gives up at the end and the trace is
# read twice; without ranges (--flat), its launches are read as outside any
# as they come.
for open in "" --open --open-unannounced --flat; do
	p=$tmp/paced$open.gpuprof
	if ! "$build/bench/synth_job" $open 60000 "$p" >/dev/null 2>&1; then
		notok "synth_job $open did not write its trace"
		continue
	fi
	same=1
	for cmd in "report" "export -t json"; do
		"$ana" $cmd "$p" >"$tmp/once.out" 2>&1
		sed "s|$p|(stdin)|g" "$tmp/once.out" >"$tmp/once"
		"$ana" $cmd - <"$p" >"$tmp/twice" 2>&1
		# The report's NVTX table, where the trace has ranges.
		want=kernel
		[ "$cmd" = report ] && [ "$open" != --flat ] && want="launched inside a range"
		if ! cmp -s "$tmp/once" "$tmp/twice" || ! grep -q "$want" "$tmp/twice"; then
			notok "$cmd of synth_job${open:+ $open}: a file and standard input differ: $(diff "$tmp/once" "$tmp/twice" | head -5)"
			same=0
		fi
	done
	[ $same = 1 ] && ok "report and export -t json of synth_job${open:+ $open}: a trace file read once (paced) as standard input read twice"
done

# NVTX ranges folded as they close give what every range kept gives
# (GPUPROF_NVTX_FOLD=0): report and JSON byte for byte, on the job traces
# (ranges announced open, a range around everything, autograd's thread, a
# CUDA graph, emit_nvtx() names, GPU samples, NCCL's ranges that do not nest
# in the steps) and every golden trace.
fold_same=1
for how in "" --open --open-unannounced --autograd --autograd-ranges --graphs --emit --sync --gpu-samples --nccl "--nccl --autograd"; do
	p=$tmp/fold${how// /}.gpuprof
	# shellcheck disable=SC2086
	"$build/bench/synth_job" $how 60000 "$p" >/dev/null 2>&1 || { fold_same=0; notok "synth_job $how failed"; }
done
for p in "$tmp"/fold*.gpuprof "$root"/test/golden/*.gpuprof "$root"/test/golden/*/*.gpuprof; do
	for cmd in "report" "export -t json"; do
		# shellcheck disable=SC2086
		"$ana" $cmd "$p" >"$tmp/folded" 2>&1
		# shellcheck disable=SC2086
		GPUPROF_NVTX_FOLD=0 "$ana" $cmd "$p" >"$tmp/kept" 2>&1
		if ! cmp -s "$tmp/folded" "$tmp/kept"; then
			fold_same=0
			notok "$cmd of $(basename "$p"): folded differs from every range kept: $(diff "$tmp/folded" "$tmp/kept" | head -4)"
		fi
	done
done
[ $fold_same = 1 ] && ok "NVTX ranges folded as they close: report and JSON as with every range kept (GPUPROF_NVTX_FOLD=0), job traces and golden traces"
# GPUPROF_VERBOSE=1 says whether the ranges folded, and how several traces
# were read (the golden ranks share a GPU: read together, as their heads say).
v1=$(GPUPROF_VERBOSE=1 "$ana" report "$tmp/fold--open.gpuprof" 2>&1 >/dev/null)
# (unannounced, "main" comes last: kept whole where the fold went on before it)
"$build/bench/synth_job" --open-unannounced 400000 "$tmp/unannounced.gpuprof" >/dev/null 2>&1
v2=$(GPUPROF_VERBOSE=1 "$ana" report "$tmp/unannounced.gpuprof" 2>&1 >/dev/null)
# NCCL's communicator's range, open from inside the first step to exit: folded
"$build/bench/synth_job" --nccl 400000 "$tmp/nccl.gpuprof" >/dev/null 2>&1
v5=$(GPUPROF_VERBOSE=1 "$ana" report "$tmp/nccl.gpuprof" 2>&1 >/dev/null)
"$build/bench/synth_job" --rank 1 60000 "$tmp/rank1.gpuprof" >/dev/null 2>&1
v3=$(GPUPROF_VERBOSE=1 "$ana" report -j 1 "$tmp/fold.gpuprof" "$tmp/rank1.gpuprof" 2>&1 >/dev/null)
v4=$(GPUPROF_VERBOSE=1 "$ana" report -j 1 "$root"/test/golden/ranks/job-*.gpuprof 2>&1 >/dev/null)
if [[ $v1 == *"NVTX ranges folded into their name paths"* ]] &&
	[[ $v2 == *"NVTX ranges kept whole: "* ]] &&
	[[ $v3 == *"2 traces summarized one by one and merged"* ]] &&
	[[ $v4 == *"2 traces read together by one model: a GPU of one host in the heads"* ]] &&
	[[ $v5 == *"NVTX ranges folded into their name paths"* ]]; then
	ok "GPUPROF_VERBOSE=1: the fold said (folded, kept whole and why), and how several traces were read"
else
	notok "GPUPROF_VERBOSE=1 said: '$v1' | '$v2' | '$v3' | '$v4' | '$v5'"
fi

# Summaries pace their NVTX pass too, each rank's compute intervals kept
# for its steps until they are known (model/ranks.h spill): a rank trace's
# summary as that of it read twice from standard input; two ranks' report
# on the pool of summaries (-j 2) as the traces read together by one model.
if "$build/bench/synth_job" --rank 2 --sync 200000 "$tmp/s2.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_job" --rank 3 --sync 200000 "$tmp/s3.gpuprof" >/dev/null 2>&1 &&
	"$ana" summarize -o "$tmp/file.sum" "$tmp/s2.gpuprof" &&
	"$ana" summarize -o "$tmp/stdin.sum" - <"$tmp/s2.gpuprof" &&
	"$ana" export -t json "$tmp/file.sum" | sed "s|$tmp/s2.gpuprof|(stdin)|g" >"$tmp/once" &&
	"$ana" export -t json "$tmp/stdin.sum" >"$tmp/twice" &&
	"$ana" report -j 2 "$tmp/s2.gpuprof" "$tmp/s3.gpuprof" >"$tmp/pool" 2>&1 &&
	GPUPROF_READ_TOGETHER=1 "$ana" report -j 1 "$tmp/s2.gpuprof" "$tmp/s3.gpuprof" >"$tmp/together" 2>&1; then
	if cmp -s "$tmp/once" "$tmp/twice" && cmp -s "$tmp/pool" "$tmp/together" &&
		grep -q "slowest_steps" "$tmp/once" && grep -q "^Ranks" "$tmp/pool"; then
		ok "summaries read once (paced): a rank's as read twice, two ranks' pool as read together"
	else
		notok "summaries read once differ: $(diff "$tmp/once" "$tmp/twice" | head -3) $(diff "$tmp/pool" "$tmp/together" | head -3)"
	fi
else
	notok "synth_job, summarize or report of the rank traces failed"
fi
exit $fail
