#!/usr/bin/env bash
# Summaries (gpuprof summarize, model/summary.h) against the traces they
# come from, without a GPU:
#  - every golden trace: export -t json of its summary equals that of the
#    trace in every field the summary holds (test/summary/compare.py),
#    findings[] included (less the rules of hardware metrics), what it does
#    not hold is null and named; the report of the summary is the trace's
#    report less the tables summaries leave out (subseq.py), its Findings
#    section the trace's, and its NVTX tree (--tree) the trace's less launch
#    sites and hardware metrics;
#  - the same with a row limit of 2 durations, so that medians come from the
#    histogram: within 1/256, marked as estimates;
#  - four traces' summaries merged in several groupings and orders, and
#    traces mixed with summaries: the same summary bytes and the same JSON,
#    equal to the JSON of the four traces read together;
#  - the tables of NVTX ranges, launch latency and launch configurations of
#    each golden trace's summary equal the trace's line for line;
#  - jobs of ranks (the golden two-rank jobs, synth_job ranks): the per-rank
#    table, its steps and clock corrections, the NVTX tables and tree, and
#    the findings (JSON and the report's section) in every grouping and
#    order; the golden jobs' ranks share a GPU: their summaries say so in a
#    warning (their gaps are scanned part by part), the report's pool reads
#    them together;
#  - report -j1 and -j2 (the pool on one thread and on two) equal the
#    traces read together by one model (GPUPROF_READ_TOGETHER=1) with
#    findings top and all, and with --fail-on; the pool runs
#    with findings on; --fail-on on summaries exits 3 when a finding fires;
#    a version 4 summary (no findings' state) is read and its findings are
#    said missing;
#  - damaged, truncated and foreign summaries are named with a byte offset;
#    filters, --fail-on and non-JSON exports refuse summaries, --align nccl
#    those older than version 8; --align nccl of summaries (and of the
#    pool) corrects the clocks as the traces read together do;
#    diff of a summary against its trace shows no change.
# Prints "ok - ..." / "not ok - ..." lines (test/run-tests.sh counts them).
set -u
build=${1:?usage: test/summary/summary-checks.sh BUILD_DIR}
A=$build/bin/gpuprof-analyze
G=test/golden
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-sum.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
fail=0
ok() { echo "ok - summary $1"; }
bad() { echo "not ok - summary $1"; fail=1; }
# Tables a report of summaries prints whole, as the traces' report does.
tables() {
	sed -n '/^Ranks (/,/^$/p;/^Steps (/,/^$/p;/^Clock alignment (/,/^$/p;/^NVTX ranges (/,/^$/p;/^NVTX marks:/,/^$/p;/^Launch latency (/,/^$/p;/^Launch configurations (/,/^$/p' "$1"
}
# The report's Findings section; the report less it.
findings_of() { sed -n '/^Findings (/,/^$/p' "$1"; }
nofind() { sed '/^Findings (/,/^$/d' "$1" >"$1.nf"; echo "$1.nf"; }
# 1 when a JSON export has findings of hardware metrics (summaries lack them).
has_mx_findings() { grep -q '"rule": *"\(below-roof\|memory-bound\|fp32-gemm\)"' "$1"; }
# The NVTX tree of a report --tree, less what summaries do not hold (launch
# sites, hardware metrics: rows with no time), cells stripped of padding.
tree_of() {
	sed -n '/^NVTX tree (/,/^$/p' "$1" | grep -v '── from \|^ *|\|^Under each kernel: its hardware metrics' |
		sed 's/ *| */|/g; s/^ *//; s/ *$//; /^-*+[-+]*$/d'
}

for g in "$G"/*.gpuprof; do
	n=$(basename "$g" .gpuprof)
	if ! "$A" summarize -o "$T/$n.sum" "$g" 2>"$T/err"; then
		bad "$n: summarize failed: $(head -c 300 "$T/err")"
		continue
	fi
	"$A" export -t json -o "$T/$n.d.json" "$g" 2>/dev/null
	"$A" export -t json -o "$T/$n.s.json" "$T/$n.sum" 2>/dev/null
	"$A" report --no-timeline "$g" >"$T/$n.d.txt" 2>/dev/null
	"$A" report --no-timeline "$T/$n.sum" >"$T/$n.s.txt" 2>/dev/null
	"$A" report --tree --no-timeline "$g" >"$T/$n.dt.txt" 2>/dev/null
	"$A" report --tree --no-timeline "$T/$n.sum" >"$T/$n.st.txt" 2>/dev/null
	# The Findings section whole, where no finding needs hardware metrics.
	same_findings=1
	if ! has_mx_findings "$T/$n.d.json"; then
		diff <(findings_of "$T/$n.d.txt") <(findings_of "$T/$n.s.txt") >"$T/fcmp" || same_findings=0
		grep -q '^Findings (' "$T/$n.s.txt" || same_findings=0
	fi
	if python3 test/summary/compare.py "$T/$n.d.json" "$T/$n.s.json" >"$T/cmp" &&
	   python3 test/summary/subseq.py "$(nofind "$T/$n.d.txt")" "$(nofind "$T/$n.s.txt")" >>"$T/cmp" &&
	   grep -q '^Summaries: *1 part merged; not in summaries yet' "$T/$n.s.txt" &&
	   grep -q '^NVTX tree (' "$T/$n.st.txt" && [ $same_findings = 1 ] &&
	   diff <(tables "$T/$n.d.txt") <(tables "$T/$n.s.txt") >>"$T/cmp" &&
	   diff <(tree_of "$T/$n.dt.txt") <(tree_of "$T/$n.st.txt") >>"$T/cmp"; then
		ok "$n: JSON (findings[] included), report, its Findings and NVTX tree equal the trace's where summaries hold them"
	elif [ $same_findings = 0 ]; then
		bad "$n: Findings section: $(head -5 "$T/fcmp")"
	else
		bad "$n: $(head -5 "$T/cmp")"
	fi
	if "$A" summarize --exact-limit 2 -o "$T/$n.e.sum" "$g" &&
	   "$A" export -t json -o "$T/$n.e.json" "$T/$n.e.sum" 2>/dev/null &&
	   python3 test/summary/compare.py "$T/$n.d.json" "$T/$n.e.json" --estimates >"$T/cmp"; then
		ok "$n: histogram medians within 1/256 and marked"
	else
		bad "$n (histogram): $(head -5 "$T/cmp")"
	fi
done
# Jobs of ranks: the per-rank table and its steps from summaries, one per
# rank merged in every grouping and order, traces mixed in, equal to the
# traces read together (JSON, and the report's Ranks and Steps tables line
# for line): the two-rank golden jobs and six synth_job ranks with steps.
rank_job() { # NAME TRACE...
	local n=$1 i f same=1 parts=() fwd=() rev=()
	shift
	"$A" export -t json -o "$T/$n.d.json" "$@" 2>/dev/null
	"$A" report --no-timeline "$@" >"$T/$n.d.txt" 2>/dev/null
	"$A" report --tree --no-timeline "$@" >"$T/$n.dt.txt" 2>/dev/null
	i=0
	for f in "$@"; do
		"$A" summarize -o "$T/$n.p$i.sum" "$f" || { bad "$n: summarize $f failed"; return; }
		parts+=("$T/$n.p$i.sum")
		i=$((i + 1))
	done
	for ((i = ${#parts[@]} - 1; i >= 0; i--)); do rev+=("${parts[i]}"); done
	# Groupings: all at once, in reverse, left fold, right fold, traces mixed.
	"$A" summarize -o "$T/$n.g1.sum" "$@" &&
	"$A" summarize -o "$T/$n.g2.sum" "${rev[@]}" &&
	cp "${parts[0]}" "$T/$n.g3.sum" &&
	for ((i = 1; i < ${#parts[@]}; i++)); do
		"$A" summarize -o "$T/$n.g3t.sum" "$T/$n.g3.sum" "${parts[i]}" &&
		mv "$T/$n.g3t.sum" "$T/$n.g3.sum" || break
	done &&
	cp "${rev[0]}" "$T/$n.g4.sum" &&
	for ((i = 1; i < ${#rev[@]}; i++)); do
		"$A" summarize -o "$T/$n.g4t.sum" "${rev[i]}" "$T/$n.g4.sum" &&
		mv "$T/$n.g4t.sum" "$T/$n.g4.sum" || break
	done &&
	"$A" summarize -o "$T/$n.g5.sum" "${rev[0]}" "${@:1:$#-1}" || { bad "$n: merging failed"; return; }
	for i in 2 3 4 5; do
		cmp -s "$T/$n.g1.sum" "$T/$n.g$i.sum" || { same=0; bad "$n: grouping $i: other bytes"; }
	done
	"$A" export -t json -o "$T/$n.s.json" "$T/$n.g3.sum"
	"$A" export -t json -o "$T/$n.m.json" "${parts[@]:1}" "$1"
	"$A" report --no-timeline "$T/$n.g4.sum" >"$T/$n.s.txt" 2>"$T/$n.s.err"
	"$A" report --tree --no-timeline "$T/$n.g2.sum" >"$T/$n.st.txt" 2>/dev/null
	# Ranks sharing a GPU: their gaps are scanned part by part, said in a
	# warning (summarizing and reporting); else the findings are the traces'.
	local fopt=() fsame=1 what="findings (JSON and report) equal"
	if grep -q 'a GPU is in several parts' "$T/$n.s.err"; then
		fopt=(--no-findings)
		what="a GPU shared by ranks said in a warning"
		GPUPROF_READ_TOGETHER=1 "$A" report -j1 --no-timeline "$@" >/dev/null 2>"$T/$n.d.err"
		"$A" report -j1 --no-timeline "$@" >/dev/null 2>>"$T/$n.d.err"
		"$A" report -j2 --no-timeline "$@" >/dev/null 2>>"$T/$n.d.err"
		! grep -q 'a GPU is in several parts' "$T/$n.d.err" || { fsame=0; echo "warning on traces" >"$T/fcmp"; }
	else
		diff <(findings_of "$T/$n.d.txt") <(findings_of "$T/$n.s.txt") >"$T/fcmp" || fsame=0
	fi
	if [ $fsame = 0 ]; then
		bad "$n: findings: $(head -5 "$T/fcmp")"
		return
	fi
	if [ $same = 1 ] && python3 test/summary/compare.py "$T/$n.d.json" "$T/$n.s.json" "${fopt[@]}" >"$T/cmp" &&
	   python3 test/summary/compare.py "$T/$n.d.json" "$T/$n.m.json" "${fopt[@]}" >>"$T/cmp" &&
	   python3 test/summary/subseq.py "$(nofind "$T/$n.d.txt")" "$(nofind "$T/$n.s.txt")" >>"$T/cmp" &&
	   grep -q '"ranks":\[' "$T/$n.s.json" && grep -q '^Ranks (' "$T/$n.s.txt" &&
	   [ "$(grep -c '"index":' "$T/$n.s.json")" = "$(grep -c '"index":' "$T/$n.d.json")" ] &&
	   diff <(tables "$T/$n.d.txt") <(tables "$T/$n.s.txt") >>"$T/cmp" &&
	   diff <(tree_of "$T/$n.dt.txt") <(tree_of "$T/$n.st.txt") >>"$T/cmp"; then
		ok "$n: per-rank table, steps, NVTX ranges and tree of $# ranks' summaries in 6 groupings equal the traces'; $what"
	else
		bad "$n: $(head -5 "$T/cmp")"
	fi
}
for d in "$G"/ranks "$G"/ranks_nccl; do
	[ -d "$d" ] && rank_job "$(basename "$d")" "$d"/job-*.gpuprof
done
# Launch sites merged in every grouping: traces recorded with --backtrace,
# sites of one program in three (findings+0x5482 ... main+0x533 in each).
rank_job sites "$G"/callsites_static.gpuprof "$G"/findings_alloc.gpuprof \
	"$G"/findings_chase.gpuprof "$G"/findings_copy.gpuprof
# Hardware metrics (the roofline, its findings) and memory in use merged in
# every grouping: traces recorded with --metrics, one with allocations.
rank_job metrics "$G"/metrics_launches.gpuprof "$G"/metrics_truth.gpuprof \
	"$G"/synth_mix.gpuprof "$G"/torch_transformer.gpuprof
# The GPU over time (series, their averages over kernels and ranges) too.
rank_job overtime "$G"/nvtx_threads.gpuprof "$G"/overtime_gpu.gpuprof "$G"/synth_overtime.gpuprof
if make --no-print-directory -s BUILD="$build" "$build/bench/synth_job" >"$T/make.log" 2>&1; then
	jobs=()
	for r in 0 1 2 3 4 5; do
		"$build/bench/synth_job" --rank $r --sync $((10000 + 2000 * r)) "$T/job-$r.gpuprof" >/dev/null &&
			jobs+=("$T/job-$r.gpuprof")
	done
	rank_job synth_job "${jobs[@]}"
else
	bad "bench/synth_job does not build: $(tail -3 "$T/make.log")"
fi
# report of several traces with -j 2: each trace analyzed on a thread of its
# own into a summary, merged, where every table printed is carried (findings
# too, from the merged findings' state; traces sharing a GPU are read
# together); the same bytes and exit status as the traces read together by
# one model (GPUPROF_READ_TOGETHER=1), also on one thread (-j 1), and summarize -j gives the same summary whatever
# N.  With strace: -j 2 ran the pool (its 2 threads, the traces' chunks
# decoded on them) with findings off and on.
par_same=1
# Two ranks of more activities than a report's busy time retires after
# (GA_FIND_RETIRE_AFTER, 65536): a summary holds every busy interval.
for r in 0 1; do
	"$build/bench/synth_job" --rank $r --sync 200000 "$T/big-$r.gpuprof" >/dev/null
done
par_sets=("$G/ranks/job-0.gpuprof $G/ranks/job-1.gpuprof"
	  "$G/ranks_nccl/job-0.gpuprof $G/ranks_nccl/job-1.gpuprof"
	  "$(echo "$T"/job-*.gpuprof)" "$(echo "$G"/*.gpuprof)"
	  "$G/ranks/job-1.gpuprof $G/ranks/job-0.gpuprof"
	  "$(echo "$G"/findings_*.gpuprof)" "$T/big-0.gpuprof $T/big-1.gpuprof")
for set in "${par_sets[@]}"; do
	for opts in "--findings=none --no-timeline" "--findings=none" "--findings=none --exact" \
		    "--no-timeline" "--findings=all --no-timeline" "--fail-on=warning --no-timeline" \
		    "--fail-on=staged-peer-copy --findings=none --no-timeline" \
		    "--align nccl --no-timeline"; do
		# shellcheck disable=SC2086
		GPUPROF_READ_TOGETHER=1 "$A" report -j1 $opts $set >"$T/par1.txt" 2>/dev/null; rc1=$?
		for j in 1 2; do
			# shellcheck disable=SC2086
			"$A" report -j$j $opts $set >"$T/par2.txt" 2>/dev/null; rc2=$?
			if ! cmp -s "$T/par1.txt" "$T/par2.txt" || [ ! -s "$T/par1.txt" ] || [ $rc1 != $rc2 ]; then
				par_same=0
				bad "report -j$j $opts of $(echo $set | wc -w) traces differs from the traces read together (rc $rc2, $rc1): $(diff "$T/par1.txt" "$T/par2.txt" | head -3)"
			fi
		done
	done
	# export -t json runs the same pool.
	# shellcheck disable=SC2086
	GPUPROF_READ_TOGETHER=1 "$A" export -t json -j1 $set >"$T/parj1.json" 2>"$T/parj1.err"; rc1=$?
	for j in 1 2; do
		# shellcheck disable=SC2086
		"$A" export -t json -j$j $set >"$T/parj2.json" 2>"$T/parj2.err"; rc2=$?
		if ! cmp -s "$T/parj1.json" "$T/parj2.json" || ! cmp -s "$T/parj1.err" "$T/parj2.err" ||
		   [ ! -s "$T/parj1.json" ] || [ $rc1 != $rc2 ]; then
			par_same=0
			bad "export -t json -j$j of $(echo $set | wc -w) traces differs from the traces read together (rc $rc2, $rc1): $(cmp "$T/parj1.json" "$T/parj2.json" 2>&1 | head -1)"
		fi
	done
done
# A trace cut short among several: its warning once, as -j1 says it (the
# pool's workers leave it to the merged summary); also where the pool reads
# the traces again (launch sites are not carried).
head -c 60000 "$G/torch_ops.gpuprof" >"$T/cut.gpuprof"
warn_same=1
for set in "$G/ranks/job-0.gpuprof $T/cut.gpuprof" "$G/callsites_static.gpuprof $T/cut.gpuprof"; do
	# shellcheck disable=SC2086
	GPUPROF_READ_TOGETHER=1 "$A" report -j1 --no-timeline $set >"$T/w1.txt" 2>"$T/w1.err"
	# shellcheck disable=SC2086
	"$A" report -j1 --no-timeline $set >"$T/w0.txt" 2>"$T/w0.err"
	# shellcheck disable=SC2086
	"$A" report -j2 --no-timeline $set >"$T/w2.txt" 2>"$T/w2.err"
	# shellcheck disable=SC2086
	"$A" export -t json -j2 $set >"$T/w2.json" 2>"$T/w2j.err"
	if [ "$(grep -c 'cut.gpuprof' "$T/w1.err")" != 1 ] || ! cmp -s "$T/w1.err" "$T/w2.err" ||
	   ! cmp -s "$T/w1.err" "$T/w0.err" || ! cmp -s "$T/w1.txt" "$T/w0.txt" ||
	   ! cmp -s "$T/w1.err" "$T/w2j.err" || ! cmp -s "$T/w1.txt" "$T/w2.txt"; then
		warn_same=0
		bad "a cut trace among several: -j2 warns otherwise than -j1: $(cat "$T/w2.err" | head -3)"
	fi
done
[ $warn_same = 1 ] && ok "a trace cut short among several: its warning once with -j2 (report and export -t json), as with -j1"
# The synth_job ranks (each its GPU, with findings): the pool's findings are
# those of the traces read together, and --fail-on fires alike.
"$A" report -j2 --findings=all --no-timeline "$T"/job-*.gpuprof >"$T/pf.txt" 2>/dev/null
"$A" report -j2 --fail-on=host-sync --findings=none "$T"/job-*.gpuprof >/dev/null 2>&1; rc2=$?
GPUPROF_READ_TOGETHER=1 "$A" report -j1 --fail-on=host-sync --findings=none "$T"/job-*.gpuprof >/dev/null 2>&1; rc1=$?
if [ "$(grep -c '^ *[0-9]*\. \[' "$T/pf.txt")" -ge 4 ] && grep -q 'gpu-starvation' "$T/pf.txt" &&
   [ $rc1 = 3 ] && [ $rc2 = 3 ]; then
	ok "report -j2 of 6 ranks with findings: $(grep -c '^ *[0-9]*\. \[' "$T/pf.txt") findings as the traces read together; --fail-on exits 3 alike"
else
	par_same=0
	bad "report -j2 of ranks with findings: rc $rc2 (-j1 $rc1), $(grep -c '^ *[0-9]*\. \[' "$T/pf.txt") findings"
fi
"$A" summarize -j1 -o "$T/pj1.sum" "$T"/job-*.gpuprof && "$A" summarize -j2 -o "$T/pj2.sum" "$T"/job-*.gpuprof &&
	"$A" summarize -j5 -o "$T/pj5.sum" "$T"/job-*.gpuprof && cmp -s "$T/pj1.sum" "$T/pj2.sum" &&
	cmp -s "$T/pj1.sum" "$T/pj5.sum" || { par_same=0; bad "summarize -j1, -j2, -j5: other bytes"; }
[ $par_same = 1 ] && ok "report and export -t json of several traces at -j1 and -j2 (the pool of summaries, or the traces read together where it stops) equal the traces read together by one model byte for byte; summarize -j alike"
if command -v strace >/dev/null 2>&1; then
	# Threads started (not processes: the pool forks its demangling helper first).
	threads() { strace -f -e trace=clone,clone3 "$A" "$@" 2>&1 >/dev/null | grep -c CLONE_THREAD; }
	clones() { threads report --no-timeline "$@"; }
	# Threads beyond -j1's (a sanitizer's leak check starts one of its own at exit).
	base=$(clones -j1 --findings=none "$T"/job-*.gpuprof)
	pool=$(( $(clones -j2 --findings=none "$T"/job-*.gpuprof) - ${base:-0} ))
	fpool=$(( $(clones -j2 "$T"/job-*.gpuprof) - ${base:-0} ))
	# Named out of order (as rank{0..N} names them): sorted, on the pool too.
	mapfile -t rev < <(printf '%s\n' "$T"/job-*.gpuprof | sort -r)
	rpool=$(( $(clones -j2 "${rev[@]}") - ${base:-0} ))
	"$A" report -j2 --no-timeline "${rev[@]}" >"$T/rev.txt" 2>/dev/null
	GPUPROF_READ_TOGETHER=1 "$A" report -j1 --no-timeline "$T"/job-*.gpuprof >"$T/fwd.txt" 2>/dev/null
	jpool=$(( $(threads export -t json -j2 -o /dev/null "$T"/job-*.gpuprof) - ${base:-0} ))
	if [ "$pool" = 2 ] && [ "$fpool" = 2 ] && [ "$rpool" = 2 ] && [ "$jpool" = 2 ] &&
	   cmp -s "$T/rev.txt" "$T/fwd.txt"; then
		ok "report -j2 of 6 traces ran on a pool of 2 threads with findings off and on, and with the traces named in reverse order (the same report); export -t json -j2 too"
	else
		bad "report -j2's threads: $pool with findings off, $fpool on, $rpool in reverse order, $jpool for export -t json; reverse order's report $(cmp -s "$T/rev.txt" "$T/fwd.txt" && echo same || echo differs)"
	fi
else
	echo "skip - summary report -j2's threads: no strace"
fi

if "$A" report "$T/synth_mix.e.sum" 2>/dev/null | grep -q 'medians marked ~ are estimates within 0.4%' &&
   "$A" report "$T/synth_mix.e.sum" 2>/dev/null | grep -q ' ~[0-9.]* [µnm]*s '; then
	ok "report marks estimated medians with ~ and states the error"
else
	bad "report does not mark estimated medians"
fi

"$A" report --timeline "$T/torch_nvtx.sum" >"$T/tt.txt" 2>&1
if grep -q '^Summaries:' "$T/tt.txt" && ! grep -q '^CUDA timeline' "$T/tt.txt"; then
	ok "--timeline prints nothing of summaries (named in the header)"
else
	bad "--timeline of a summary: $(grep '^CUDA timeline' "$T/tt.txt")"
fi

# Merging: groupings and orders, traces mixed with summaries.
P="demo diff_base diff_slow multistream"
for n in $P; do "$A" summarize -o "$T/p_$n.sum" "$G/$n.gpuprof"; done
"$A" summarize -o "$T/ab.sum" "$T/p_demo.sum" "$T/p_diff_base.sum" &&
"$A" summarize -o "$T/abc.sum" "$T/ab.sum" "$T/p_diff_slow.sum" &&
"$A" summarize -o "$T/m1.sum" "$T/abc.sum" "$T/p_multistream.sum" &&
"$A" summarize -o "$T/cd.sum" "$T/p_multistream.sum" "$T/p_diff_slow.sum" &&
"$A" summarize -o "$T/m2.sum" "$T/p_diff_base.sum" "$T/cd.sum" "$T/p_demo.sum" &&
"$A" summarize -o "$T/ba.sum" "$T/p_diff_base.sum" "$T/p_demo.sum" &&
"$A" summarize -o "$T/m3.sum" "$T/cd.sum" "$T/ba.sum" &&
"$A" summarize -o "$T/m4.sum" "$G/multistream.gpuprof" "$T/p_diff_slow.sum" "$G/demo.gpuprof" \
	"$T/p_diff_base.sum" &&
"$A" summarize -o "$T/m5.sum" "$G/diff_slow.gpuprof" "$G/multistream.gpuprof" "$G/diff_base.gpuprof" \
	"$G/demo.gpuprof" || bad "merging: summarize failed"
same=1
for i in 2 3 4 5; do
	cmp -s "$T/m1.sum" "$T/m$i.sum" || { same=0; bad "merge grouping $i: other bytes than ((a b) c) d"; }
done
for i in 1 2 3 4 5; do "$A" export -t json -o "$T/m$i.json" "$T/m$i.sum"; done
"$A" export -t json -o "$T/m6.json" "$T/p_multistream.sum" "$G/diff_slow.gpuprof" "$T/ab.sum"
for i in 2 3 4 5 6; do
	cmp -s "$T/m1.json" "$T/m$i.json" || { same=0; bad "merge grouping $i: other JSON"; }
done
[ $same = 1 ] && ok "merged in 6 groupings and orders, traces mixed in: identical bytes and JSON"
"$A" export -t json -o "$T/all.json" "$G/demo.gpuprof" "$G/diff_base.gpuprof" "$G/diff_slow.gpuprof" \
	"$G/multistream.gpuprof" 2>/dev/null
# These four share a GPU (recorded on one): findings are said scanned part by part.
"$A" report "$T/m1.sum" >/dev/null 2>"$T/m1.err"
fopt=()
grep -q 'a GPU is in several parts' "$T/m1.err" && fopt=(--no-findings)
if python3 test/summary/compare.py "$T/all.json" "$T/m1.json" "${fopt[@]}" >"$T/cmp" &&
   grep -q '"parts":4' "$T/m1.json"; then
	ok "four merged summaries equal the four traces read together"
else
	bad "merged vs traces: $(head -5 "$T/cmp")"
fi
# Every golden trace at once: several hosts (times moved to CLOCK_REALTIME by
# their clock syncs, as traces read together are), shared GPUs, estimates
# (launch latency's medians among them: compared in JSON, within 1/256).
for g in "$G"/*.gpuprof; do "$A" summarize --exact-limit 1000 -o "$T/x_$(basename "$g").sum" "$g"; done
"$A" summarize --exact-limit 1000 -o "$T/every.sum" "$T"/x_*.sum
"$A" export -t json -o "$T/every.d.json" "$G"/*.gpuprof 2>/dev/null
"$A" export -t json -o "$T/every.s.json" "$T/every.sum"
"$A" report --no-timeline "$G"/*.gpuprof >"$T/every.d.txt" 2>/dev/null
"$A" report --no-timeline "$T/every.sum" >"$T/every.s.txt" 2>/dev/null
"$A" report --tree --no-timeline "$G"/*.gpuprof >"$T/every.dt.txt" 2>/dev/null
"$A" report --tree --no-timeline "$T/every.sum" >"$T/every.st.txt" 2>/dev/null
"$A" report "$T/every.sum" >/dev/null 2>"$T/every.err"
fopt=()
grep -q 'a GPU is in several parts' "$T/every.err" && fopt=(--no-findings)
if python3 test/summary/compare.py "$T/every.d.json" "$T/every.s.json" "${fopt[@]}" >"$T/cmp" &&
   python3 test/summary/subseq.py "$(nofind "$T/every.d.txt")" "$(nofind "$T/every.s.txt")" >>"$T/cmp" &&
   diff <(tables "$T/every.d.txt" | sed '/^Launch latency (/,/^$/d') \
	<(tables "$T/every.s.txt" | sed '/^Launch latency (/,/^$/d') >>"$T/cmp" &&
   diff <(tree_of "$T/every.dt.txt") <(tree_of "$T/every.st.txt") >>"$T/cmp"; then
	ok "all golden traces of several hosts: merged summaries equal the traces read together"
else
	bad "all golden traces: $(head -5 "$T/cmp")"
fi

# Exact limits merge by their minimum, and the rule is all exact and n <= limit.
"$A" summarize --exact-limit 3 -o "$T/l3.sum" "$T/m1.sum" &&
"$A" summarize --exact-limit 3 -o "$T/l3b.sum" "$T/p_demo.sum" "$T/p_diff_base.sum" "$T/p_diff_slow.sum" \
	"$T/p_multistream.sum" && cmp -s "$T/l3.sum" "$T/l3b.sum" &&
	ok "a lower exact limit applies to merged parts alike" || bad "exact limit of a merge"

# Damage and refusals.
cp "$T/demo.sum" "$T/flip.sum"
printf '\xff' | dd of="$T/flip.sum" bs=1 seek=40 conv=notrunc 2>/dev/null
head -c 30 "$T/demo.sum" >"$T/short.sum"
cp "$T/demo.sum" "$T/vers.sum"
printf '\x09' | dd of="$T/vers.sum" bs=1 seek=8 conv=notrunc 2>/dev/null
check_err() { # NAME FILE PATTERN
	if "$A" report "$2" >/dev/null 2>"$T/err"; then
		bad "$1: read without error"
	elif grep -q "$3" "$T/err"; then
		ok "$1: $(head -1 "$T/err")"
	else
		bad "$1: $(head -1 "$T/err")"
	fi
}
check_err "bit flip" "$T/flip.sum" "flip.sum: byte 32: checksum mismatch"
check_err "version" "$T/vers.sum" "vers.sum: byte 8: summary version 9"
"$A" report "$T/demo.sum" "$T/short.sum" >/dev/null 2>"$T/err"
grep -q 'short.sum' "$T/err" && ok "a summary too short to be one is read as a trace and named" ||
	bad "short summary: $(head -1 "$T/err")"
"$A" report --kernel foo "$T/demo.sum" >/dev/null 2>"$T/err" && bad "filter accepted" ||
	{ grep -q 'filters do not apply to summaries' "$T/err" && ok "filters refuse summaries" ||
	  bad "filter: $(head -1 "$T/err")"; }
# --fail-on gates on the findings of summaries as on the traces'.
"$A" report --fail-on=warning "$G/findings_alloc.gpuprof" >/dev/null 2>&1; rcd=$?
"$A" report --fail-on=warning "$T/findings_alloc.sum" >/dev/null 2>"$T/err"; rc=$?
"$A" report --fail-on=staged-peer-copy "$T/findings_alloc.sum" >/dev/null 2>&1; rc0=$?
[ $rc = 3 ] && [ $rcd = 3 ] && [ $rc0 = 0 ] && ok "--fail-on on a summary exits 3 when a finding fires, 0 when none" ||
	bad "--fail-on on summaries: rc $rc (trace $rcd), unfired rc $rc0 $(head -1 "$T/err")"
# A version 4 summary (no findings' state): read; its findings said missing.
V4=test/summary/v4-demo.sum
"$A" report --no-timeline "$V4" >"$T/v4.txt" 2>"$T/v4.err"; rc=$?
"$A" report --no-timeline "$V4" "$T/findings_alloc.sum" >"$T/v4m.txt" 2>"$T/v4m.err"; rcm=$?
"$A" export -t json -o "$T/v4.json" "$V4" 2>/dev/null
if [ $rc = 0 ] && [ $rcm = 0 ] && grep -q '^Kernel summary\|^CUDA activity summary' "$T/v4.txt" &&
   grep -q 'findings of 1 of 1 parts are missing' "$T/v4.err" &&
   grep -q 'findings of 1 of 2 parts are missing' "$T/v4m.err" && grep -q '^Findings (' "$T/v4m.txt" &&
   python3 -c 'import json,sys; assert json.load(open(sys.argv[1]))["findings"] is None' "$T/v4.json"; then
	ok "a version 4 summary is read; its findings are said missing (one line)"
else
	bad "version 4 summary: rc $rc/$rcm $(head -2 "$T/v4.err" "$T/v4m.err")"
fi
"$A" report --align nccl "$V4" "$T/demo.sum" >/dev/null 2>"$T/err" && bad "--align accepted v4" ||
	{ grep -q "align nccl: $V4: summary version 4 holds no NCCL collectives" "$T/err" &&
	  ok "--align nccl refuses a summary older than version 8, naming it" ||
	  bad "--align: $(head -1 "$T/err")"; }
# --align nccl of summaries: the NCCL job's clock alignment, ranks, steps and
# tables as its traces read together give them (their findings differ: the
# ranks share a GPU, which the report of summaries says).
NJ="$G/ranks_nccl"
"$A" summarize -o "$T/nccl0.sum" "$NJ/job-0.gpuprof" 2>/dev/null &&
	"$A" summarize -o "$T/nccl1.sum" "$NJ/job-1.gpuprof" 2>/dev/null
GPUPROF_READ_TOGETHER=1 "$A" report -j1 --align nccl "$NJ/job-0.gpuprof" "$NJ/job-1.gpuprof" >"$T/nccl.d.txt" 2>/dev/null
"$A" report --align nccl "$T/nccl1.sum" "$T/nccl0.sum" >"$T/nccl.s.txt" 2>/dev/null
if grep -q '^Clock alignment (' "$T/nccl.s.txt" && grep -q '^rank 1 | *+789 ns' "$T/nccl.s.txt" &&
   diff <(tables "$T/nccl.d.txt") <(tables "$T/nccl.s.txt") >"$T/cmp" &&
   diff <(sed -n '/^Wall span/,/^GPU busy/p' "$T/nccl.d.txt") \
	<(sed -n '/^Wall span/,/^GPU busy/p' "$T/nccl.s.txt") >>"$T/cmp"; then
	ok "--align nccl of summaries: the NCCL job's corrections and tables as its traces give them"
else
	bad "--align nccl of summaries: $(head -5 "$T/cmp")"
fi
"$A" export -t csv -o "$T/x.csv" "$T/demo.sum" 2>"$T/err" && bad "csv accepted" ||
	{ grep -q 'only -t json reads them' "$T/err" && ok "non-JSON exports refuse summaries" ||
	  bad "csv: $(head -1 "$T/err")"; }
"$A" diff --json "$T/synth_mix.sum" "$G/synth_mix.gpuprof" >"$T/d.json" 2>/dev/null
if python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
assert "nvtx" in d["not_compared"], d
assert d["items"], "no items"
for it in d["items"]:
    assert it["kind"] in ("kernel", "memory", "api"), it
    assert it["base_ns"] == it["new_ns"] and it["base_count"] == it["new_count"], it
' "$T/d.json" 2>"$T/err"; then
	ok "diff of a summary and its trace: no change, NVTX and findings not compared"
else
	bad "diff: $(tail -1 "$T/err")"
fi
exit $fail
