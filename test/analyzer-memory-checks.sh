#!/usr/bin/env bash
# Checks that the analyzer's memory does not grow with the records where it
# is bounded, no GPU: the peak RSS of gpuprof-analyze report (the child's
# ru_maxrss) on a kernel-only trace of 4M records against one of 1M (past
# 1M the findings' tables of launches by correlation, 32 MiB, are full)
# (bench/synth_trace N), and on the compression bomb (synth_trace --same:
# records of one stream that differ only by a constant step) of 4M records
# against 1M, with findings and without: the busy intervals retire as they
# are read (model/busy.h) and the findings scan their gaps as they retire
# (model/findings.h); kernel records 200000 launches before their API
# records (synth_trace --api-late), 8M records against 2M, at most 1 byte a
# record more; a trace of the GPU over time (synth_trace
# --gpu-samples, 4M records against 1M: samples spilled in blocks, kernels
# sorted externally, model/gpusamples.h), report and JSON export, at most 2
# bytes a record more (the kernels' sort fills its first run of 8 MiB up to
# 4M); the bomb of 1e7 records under 96 MiB; its summary,
# JSON and CSV exports and diff too (its busy intervals past
# GA_SUM_BUSY_KEEP not carried, its gaps scanned as they retire,
# model/summary.h), and four such traces on GPUs of their own read together
# (as many as two: each file's busy unions close once it is read);
# the Chrome, CSV, Perfetto and pprof exports of two, on GPUs of their own
# and sharing one (model/analysis.h busy_bound_ok).  A mixed trace
# (synth_trace --mix: API calls, copies, memory records) of 4M records
# against 1M: the findings add at most 1 byte a record to what the report
# without them grows.  The mixed report of 16M records against 4M: at most
# 0.5 bytes a record more (the allocations and frees, 3% of the records, go
# through an external sort, model/memuse.h, past 4M spilled; the model's
# copies and copy calls by correlation id wait in a window of 2^16 ids,
# model.h GA_CORR_WINDOW, each staged pair until both legs are read).  Its
# Chrome and Perfetto exports, 32M records against 16M: at most 1 byte a
# record more (the flows' launch index keeps the last 2^22 correlation ids
# of a process, model/ranges.h GA_RANGES_LWIN).  The
# bound is bytes of peak RSS per record more.  The durations of one
# kernel, 2M and 8M launches, without findings: the same peak, where --exact
# grows by 4 bytes a launch; past 65536 launches the row's median, P90 and
# P99 are marked as estimates (~, the header's Quantiles: line), not with
# --exact.  A trace with nested NVTX ranges (bench/synth_job, 12% ranges,
# 45% API calls) of 16M records against 4M (past about 2.3M the scan's ring
# of API calls, 16 MiB, has been filled once: it rides in the report's read
# of a single trace, model/ranges.h pace), without findings: at most 0.5 bytes a
# record more (the ranges fold into the table and tree as they close, the
# launches' innermost ranges go to a temporary file, model/ranges.h fold;
# so do the steps past the newest 4096, for the ranks); with findings (one
# decoding thread), at most 0.04 (the ranks' busy intervals retire, and
# one process's steps are counted, not kept, model/ranks.h); its summary
# at most 0.1 (its busy time retires and its findings stream as a report's);
# and four such rank traces of
# 1M read together against one.
# A report from standard input against the same file: at most 8 MiB more
# (the pipe is copied into a temporary file, model/load.c spill()).
# The Chrome export of the kernel-only traces (API calls not traced): no
# launching call to keep for its flows.  Prints "ok - ..." /
# "not ok - ..." lines; about 40 seconds.
#
#   bash test/analyzer-memory-checks.sh BUILD_DIR
set -u

build=${1:?usage: test/analyzer-memory-checks.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-memory.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
fail=0
ana=$build/bin/gpuprof-analyze
# A sanitizer's shadow memory and quarantine are not the analyzer's memory.
if ldd "$ana" 2>/dev/null | grep -q 'libasan\|libtsan\|libmsan'; then
	echo "skip - analyzer memory: $ana is built with a sanitizer (its peak RSS is the sanitizer's)"
	exit 0
fi

ok() { echo "ok - analyzer memory: $1"; }
notok() { echo "not ok - analyzer memory: $1"; fail=1; }

if ! make --no-print-directory -s BUILD="$build" "$build/bench/synth_trace" \
	"$build/bench/synth_job" "$build/bench/scan_floor" >"$tmp/make.log" 2>&1; then
	notok "the bench programs do not build: $(tail -3 "$tmp/make.log")"
	exit 1
fi

# Peak RSS in KiB of the analyzer's run with these arguments (output dropped), -1 failed.
peak_kib() {
	python3 -c 'import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdout=subprocess.DEVNULL)
_, st, ru = os.wait4(p.pid, 0)
print(ru.ru_maxrss if os.waitstatus_to_exitcode(st) == 0 else -1)' "$ana" "$@"
}

# grows LABEL SMALL LARGE MAX REPORT_ARGS...: the larger trace's peak RSS over
# the smaller's is at most MAX bytes per record more.  grows_cmd: the same
# with the subcommand first in ARGS.
grows() {
	grows_cmd "$1" "$2" "$3" "$4" report "${@:5}"
}

grows_cmd() {
	local label=$1 small=$2 large=$3 max=$4 a b ra rb
	shift 4
	ra=$("$build/bench/scan_floor" "$small" | awk '{print $2}')
	rb=$("$build/bench/scan_floor" "$large" | awk '{print $2}')
	a=$(peak_kib "$@" "$small")
	b=$(peak_kib "$@" "$large")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
		notok "$label: a report failed ($a, $b KiB; $ra, $rb records)"
	elif [ $(((b - a) * 1024)) -le $((max * (rb - ra))) ]; then
		ok "$label: $a KiB at $ra records, $b KiB at $rb (at most $max B/record more)"
	else
		notok "$label grows with the records: $a KiB at $ra, $b KiB at $rb (more than $max B/record)"
	fi
}

"$build/bench/synth_trace" 1000000 "$tmp/k1.gpuprof" 2>/dev/null &&
	"$build/bench/synth_trace" 4000000 "$tmp/k4.gpuprof" 2>/dev/null &&
	"$build/bench/synth_trace" --same 1000000 "$tmp/s1.gpuprof" 2>/dev/null &&
	"$build/bench/synth_trace" --same 4000000 "$tmp/s4.gpuprof" 2>/dev/null || {
	notok "synth_trace did not write the traces"
	exit 1
}
# Before: 36 B/record (each kernel kept for the GPU over time) and 52 (that and each busy interval).
grows "peak RSS of a kernel-only report" "$tmp/k1.gpuprof" "$tmp/k4.gpuprof" 3
# Kernels whose records come 200000 launches before their cudaLaunchKernel
# records (synth_trace --api-late, as activity buffers can reach a trace
# first): each counts at its runtime call, which waits in launch latency's
# ring.  Before: 16 B/record (each kernel waiting a generation, 2^20 entries).
if "$build/bench/synth_trace" --api-late 200000 1000000 "$tmp/l1.gpuprof" 2>/dev/null &&
	"$build/bench/synth_trace" --api-late 200000 4000000 "$tmp/l4.gpuprof" 2>/dev/null; then
	grows "report of kernels before their API records" "$tmp/l1.gpuprof" "$tmp/l4.gpuprof" 1
else
	notok "synth_trace did not write the --api-late traces"
fi
rm -f "$tmp/l1.gpuprof" "$tmp/l4.gpuprof"
# The GPU over time (synth_trace --gpu-samples: PM samples every 1 ms, NVML
# every 50, kernels and ranges): the samples spilled in blocks and read back,
# the kernels sorted by an external sort.  Before: 73 B/record (every sample,
# 72 bytes, and kernel, 32, kept).
if "$build/bench/synth_trace" --gpu-samples 2500 "$tmp/o1.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_trace" --gpu-samples 10000 "$tmp/o4.gpuprof" >/dev/null 2>&1; then
	grows "report of the GPU over time" "$tmp/o1.gpuprof" "$tmp/o4.gpuprof" 2
	grows_cmd "export -t json of the GPU over time" "$tmp/o1.gpuprof" "$tmp/o4.gpuprof" 2 \
		export -t json -o /dev/null
else
	notok "synth_trace did not write the --gpu-samples traces"
fi
rm -f "$tmp/o1.gpuprof" "$tmp/o4.gpuprof"
# From a pipe: copied into a temporary file a chunk at a time, not held (it took the trace's size).
a=$(peak_kib report "$tmp/k4.gpuprof")
b=$(peak_kib report - <"$tmp/k4.gpuprof")
sz=$(($(stat -c %s "$tmp/k4.gpuprof") / 1024))
if [ "$a" -gt 0 ] && [ "$b" -gt 0 ] && [ $((b - a)) -le 8192 ]; then
	ok "a report from standard input peaks at $b KiB, from the file at $a KiB (the trace: $sz KiB)"
else
	notok "a report from standard input peaks at $b KiB, from the file at $a KiB (the trace: $sz KiB; at most 8 MiB more)"
fi
grows "peak RSS of the bomb's report without findings" "$tmp/s1.gpuprof" "$tmp/s4.gpuprof" 1 \
	--findings=none
# Before: 16 B/record (every busy interval kept for the findings' gaps).
grows "peak RSS of the bomb's report with findings" "$tmp/s1.gpuprof" "$tmp/s4.gpuprof" 1
# Before: 27 B/record (every busy interval and host call kept for the summary).
grows_cmd "peak RSS of the bomb's summary" "$tmp/s1.gpuprof" "$tmp/s4.gpuprof" 1 \
	summarize -j 1 -o "$tmp/s.sum"
# Before: 16 B/record each (busy time retired in report only; diff: both sides).
grows_cmd "peak RSS of the bomb's JSON export" "$tmp/s1.gpuprof" "$tmp/s4.gpuprof" 1 \
	export -t json -j 1 -o /dev/null
grows_cmd "peak RSS of the bomb's CSV export" "$tmp/s1.gpuprof" "$tmp/s4.gpuprof" 1 \
	export -t csv -j 1 -o /dev/null
grows_cmd "peak RSS of the bomb's diff against itself" "$tmp/s1.gpuprof" "$tmp/s4.gpuprof" 2 \
	diff -j 1 "$tmp/s1.gpuprof"
# The bomb on four GPUs of their own, read together (GPUPROF_READ_TOGETHER, not the pool of
# summaries): their busy time retires too (model.h busy_shared).  Before:
# 16 B/record.
for g in 1 2 3; do
	"$build/bench/synth_trace" --gpu "$g" --same 1000000 "$tmp/g1-$g.gpuprof" 2>/dev/null
	"$build/bench/synth_trace" --gpu "$g" --same 4000000 "$tmp/g4-$g.gpuprof" 2>/dev/null
done
a=$(GPUPROF_READ_TOGETHER=1 peak_kib report -j 1 "$tmp/s1.gpuprof" "$tmp"/g1-*.gpuprof)
b=$(GPUPROF_READ_TOGETHER=1 peak_kib report -j 1 "$tmp/s4.gpuprof" "$tmp"/g4-*.gpuprof)
if [ "$a" -le 0 ] || [ "$b" -le 0 ]; then
	notok "the bomb on four GPUs read together: a report failed ($a, $b KiB)"
elif [ $(((b - a) * 1024)) -le 12000000 ]; then
	ok "the bomb on four GPUs read together: $a KiB at 4M records, $b KiB at 16M (at most 1 B/record more)"
else
	notok "the bomb on four GPUs read together grows: $a KiB at 4M records, $b KiB at 16M (more than 1 B/record)"
fi
# Traces read together: each file's busy unions (the device's, the ranks')
# close once it is read (model.h ga_model_on_file_done), so that only the
# file being read holds its last second of intervals.  Before: each file's
# stayed until the end, 46 MiB more for two more bombs.
a=$(GPUPROF_READ_TOGETHER=1 peak_kib report -j 1 "$tmp/s1.gpuprof" "$tmp/g1-1.gpuprof")
b=$(GPUPROF_READ_TOGETHER=1 peak_kib report -j 1 "$tmp/s1.gpuprof" "$tmp"/g1-*.gpuprof)
if [ "$a" -le 0 ] || [ "$b" -le 0 ]; then
	notok "the bomb read together: a report failed ($a, $b KiB)"
elif [ $((b - a)) -le 8192 ]; then
	ok "the bomb read together: $a KiB for two traces, $b KiB for four (at most 8 MiB more)"
else
	notok "the bomb read together grows with the traces: $a KiB for two, $b KiB for four (more than 8 MiB)"
fi
# Exports of several traces that take in what they write as they read (no
# read again), where nothing written needs busy time (lean: Chrome,
# Perfetto, CSV's activities; pprof, the span only, which stays exact) or
# SQLite takes it from its rows:
# busy time retires as in a report, also where the traces
# share a GPU (model/analysis.h busy_bound_ok).  Before: 16 B/record.
# bound2 SMALL1 SMALL2 LARGE1 LARGE2 LABEL ARGS...: at most 1 B/record more.
bound2() {
	local s1=$1 s2=$2 l1=$3 l2=$4 label=$5 a b
	shift 5
	a=$(peak_kib "$@" "$s1" "$s2")
	b=$(peak_kib "$@" "$l1" "$l2")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ]; then
		notok "$label: an export failed ($a, $b KiB)"
	elif [ $(((b - a) * 1024)) -le 6000000 ]; then
		ok "$label: $a KiB at 2M records, $b KiB at 8M (at most 1 B/record more)"
	else
		notok "$label grows: $a KiB at 2M records, $b KiB at 8M (more than 1 B/record)"
	fi
}
cp "$tmp/s1.gpuprof" "$tmp/h1.gpuprof" && cp "$tmp/s4.gpuprof" "$tmp/h4.gpuprof"
bound2 "$tmp/s1.gpuprof" "$tmp/g1-1.gpuprof" "$tmp/s4.gpuprof" "$tmp/g4-1.gpuprof" \
	"the Chrome export of the bomb on two GPUs" export -t chrome -o /dev/null
bound2 "$tmp/s1.gpuprof" "$tmp/g1-1.gpuprof" "$tmp/s4.gpuprof" "$tmp/g4-1.gpuprof" \
	"the CSV export of the bomb on two GPUs" export -t csv -o /dev/null
bound2 "$tmp/s1.gpuprof" "$tmp/h1.gpuprof" "$tmp/s4.gpuprof" "$tmp/h4.gpuprof" \
	"the Perfetto export of two bombs sharing a GPU" export -t perfetto -o /dev/null
bound2 "$tmp/s1.gpuprof" "$tmp/h1.gpuprof" "$tmp/s4.gpuprof" "$tmp/h4.gpuprof" \
	"the pprof export of two bombs sharing a GPU" export -t pprof -o /dev/null
# SQLite takes the shared GPU's busy time from its activity rows (views/sqlite.c busy_of).
rm -f "$tmp/x.db"
bound2 "$tmp/s1.gpuprof" "$tmp/h1.gpuprof" "$tmp/s4.gpuprof" "$tmp/h4.gpuprof" \
	"the SQLite export of two bombs sharing a GPU" export -t sqlite -o "$tmp/x.db"
rm -f "$tmp/x.db"
rm -f "$tmp"/g1-*.gpuprof "$tmp"/g4-*.gpuprof "$tmp/h1.gpuprof" "$tmp/h4.gpuprof"
rm -f "$tmp/s1.gpuprof" "$tmp/s4.gpuprof"
# Before: 173 MiB (1544 MiB at 1e8 records).
if "$build/bench/synth_trace" --same 10000000 "$tmp/s10.gpuprof" 2>/dev/null; then
	a=$(peak_kib report "$tmp/s10.gpuprof")
	if [ "$a" -gt 0 ] && [ "$a" -le $((96 * 1024)) ]; then
		ok "the bomb of 1e7 records reports with findings in $a KiB (at most 96 MiB)"
	else
		notok "the bomb of 1e7 records: $a KiB with findings (more than 96 MiB, or failed)"
	fi
else
	notok "synth_trace did not write the bomb of 1e7 records"
fi
rm -f "$tmp/s10.gpuprof"
# The findings' share of a mixed report's growth: host calls, gap candidates and
# copy stacks kept only while a later gap can use them (this trace keeps few
# calls: a bound against regressions).  One decoding thread: the peak with
# several varies by 2-3 MiB from run to run.
if "$build/bench/synth_trace" --mix 1000000 "$tmp/m1.gpuprof" 2>/dev/null &&
	"$build/bench/synth_trace" --mix 4000000 "$tmp/m4.gpuprof" 2>/dev/null; then
	ra=$("$build/bench/scan_floor" "$tmp/m1.gpuprof" | awk '{print $2}')
	rb=$("$build/bench/scan_floor" "$tmp/m4.gpuprof" | awk '{print $2}')
	a=$(peak_kib report -j 1 "$tmp/m1.gpuprof")
	b=$(peak_kib report -j 1 "$tmp/m4.gpuprof")
	na=$(peak_kib report -j 1 --findings=none "$tmp/m1.gpuprof")
	nb=$(peak_kib report -j 1 --findings=none "$tmp/m4.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "$na" -le 0 ] || [ "$nb" -le 0 ] ||
		[ "${rb:-0}" -le "${ra:-0}" ]; then
		notok "mixed: a report failed ($a, $b, $na, $nb KiB; $ra, $rb records)"
	elif [ $(((b - a - (nb - na)) * 1024)) -le $((rb - ra)) ]; then
		ok "mixed: $a KiB at $ra records, $b KiB at $rb with findings; $na and $nb KiB without (at most 1 B/record more with them)"
	else
		notok "mixed: the findings grow with the records: $a KiB at $ra records, $b KiB at $rb with them; $na and $nb KiB without"
	fi
else
	notok "synth_trace did not write the mixed traces"
fi
rm -f "$tmp/m1.gpuprof"
# Before: 2.6 B/record (each allocation and free kept, 48 bytes, for the
# memory-in-use replay); after about 1.0, then 0.23 (every DtoH and HtoD
# leg and copy call was kept by correlation id).
if "$build/bench/synth_trace" --mix 16000000 "$tmp/m16.gpuprof" 2>/dev/null; then
	ra=$("$build/bench/scan_floor" "$tmp/m4.gpuprof" | awk '{print $2}')
	rb=$("$build/bench/scan_floor" "$tmp/m16.gpuprof" | awk '{print $2}')
	a=$(peak_kib report -j 1 "$tmp/m4.gpuprof")
	b=$(peak_kib report -j 1 "$tmp/m16.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
		notok "mixed report: a report failed ($a, $b KiB; $ra, $rb records)"
	elif [ $(((b - a) * 1024 * 2)) -le $((rb - ra)) ]; then
		ok "mixed report: $a KiB at $ra records, $b KiB at $rb (at most 0.5 B/record more)"
	else
		notok "mixed report grows with the records: $a KiB at $ra, $b KiB at $rb (more than 0.5 B/record)"
	fi
else
	notok "synth_trace did not write the mixed trace of 16M records"
fi
# The Chrome and Perfetto flows' launch index past 2^22 correlation ids of a
# process: a ring of the last 2^22 (model/ranges.h GA_RANGES_LWIN), both
# traces past it (16M mixed records hold about 7M ids).  Before: 3.5
# B/record (8 bytes an id, every id of the trace kept).
if "$build/bench/synth_trace" --mix 32000000 "$tmp/m32.gpuprof" 2>/dev/null; then
	grows_cmd "peak RSS of a mixed Perfetto export past 2^22 correlation ids" \
		"$tmp/m16.gpuprof" "$tmp/m32.gpuprof" 1 export -t perfetto -o /dev/null
	grows_cmd "peak RSS of a mixed Chrome export past 2^22 correlation ids" \
		"$tmp/m16.gpuprof" "$tmp/m32.gpuprof" 1 export -t chrome -o /dev/null
else
	notok "synth_trace did not write the mixed trace of 32M records"
fi
rm -f "$tmp/m4.gpuprof" "$tmp/m16.gpuprof" "$tmp/m32.gpuprof"
# Before: 20 B/record (the launching call of every kernel, though none was traced).
grows_cmd "peak RSS of a kernel-only Chrome export" "$tmp/k1.gpuprof" "$tmp/k4.gpuprof" 3 \
	export -t chrome -o /dev/null

# Before: 29 B/record (80 bytes a range and 24 more for its GPU time, 20 an
# activity for its launching call); then 15 (49 bytes a range and 8 a
# correlation id, kept to the end of the scan); folded, 0.2.  From 4M
# records: the scan's ring of API calls has been filled once.
if "$build/bench/synth_job" 1000000 "$tmp/n1.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_job" 4000000 "$tmp/n2.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_job" 16000000 "$tmp/n16.gpuprof" >/dev/null 2>&1; then
	ra=$("$build/bench/scan_floor" "$tmp/n2.gpuprof" | awk '{print $2}')
	rb=$("$build/bench/scan_floor" "$tmp/n16.gpuprof" | awk '{print $2}')
	a=$(peak_kib report --findings=none "$tmp/n2.gpuprof")
	b=$(peak_kib report --findings=none "$tmp/n16.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
		notok "NVTX report: a report failed ($a, $b KiB; $ra, $rb records)"
	elif [ $(((b - a) * 1024 * 2)) -le $((rb - ra)) ]; then
		ok "NVTX report: $a KiB at $ra records, $b KiB at $rb (at most 0.5 B/record more)"
	else
		notok "NVTX report grows with the records: $a KiB at $ra, $b KiB at $rb (more than 0.5 B/record)"
	fi
	# With findings, one decoding thread: at most 0.04 B/record more.  The
	# job rank's busy, compute and NCCL unions retire as they are read, each
	# step's work taken from its compute intervals as they retire
	# (model/ranks.h); the scan's steps past the newest 4096 wait in a
	# temporary file, and the ranks of one process only count them.
	# Before: 0.45 (every busy interval kept for the steps), then 0.09
	# (each step's 24 bytes in the scan, 32 in the ranks; the same 0 KiB
	# more now).
	a=$(peak_kib report -j 1 "$tmp/n2.gpuprof")
	b=$(peak_kib report -j 1 "$tmp/n16.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
		notok "NVTX report with findings: a report failed ($a, $b KiB; $ra, $rb records)"
	elif [ $(((b - a) * 1024 * 25)) -le $((rb - ra)) ]; then
		ok "NVTX report with findings: $a KiB at $ra records, $b KiB at $rb (at most 0.04 B/record more)"
	else
		notok "NVTX report with findings grows with the records: $a KiB at $ra, $b KiB at $rb (more than 0.04 B/record)"
	fi
	# A summary of it (what report's pool makes of each rank's trace):
	# its ranges fold too, each name's CPU durations kept (model/ranges.h
	# keep_cpu), its NVTX pass paced as a report's, its busy time retiring
	# and its findings scanning gaps as they go, as a report's: at most
	# 0.1 B/record more.  Before: 8.8 (every range and every launch kept),
	# then 2.4 (every host call and busy interval kept for the findings).
	a=$(peak_kib summarize -j 1 -o "$tmp/n.sum" "$tmp/n2.gpuprof")
	b=$(peak_kib summarize -j 1 -o "$tmp/n.sum" "$tmp/n16.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ]; then
		notok "NVTX summary: a summarize failed ($a, $b KiB)"
	elif [ $(((b - a) * 1024 * 10)) -le $((rb - ra)) ]; then
		ok "NVTX summary: $a KiB at $ra records, $b KiB at $rb (at most 0.1 B/record more)"
	else
		notok "NVTX summary grows with the records: $a KiB at $ra, $b KiB at $rb (more than 0.1 B/record)"
	fi
else
	notok "synth_job did not write the NVTX traces"
fi
rm -f "$tmp/n2.gpuprof" "$tmp/n16.gpuprof"
# The same job with its backward passes launched from another thread, as
# PyTorch's autograd thread launches while "backward" is open on the main
# thread: without ranges of its own (synth_job --autograd), and with its
# layers' and ops' ranges there (--autograd-ranges, as emit_nvtx() writes
# them).  Their ranges fold too, each thread's nesting, a launch coded with
# its own thread's range and the other thread's it counts into
# (model/ranges.h Other threads).  Before: 8.5 and 11.5 B/record (the fold
# given up, every range and launch kept).  And a CUDA graph captured in a
# range and launched at each step's end (--graphs): its kernels count in the
# capture's range, placed by the range's id as it folds.  Before: 19 B/record.
# And each op's range named as PyTorch's emit_nvtx() names it, a string of
# its own each call (--emit): interned as the op's name, the call's string
# not kept (strtab.h group_ops).  Before: 26 B/record.  And PM samples
# every 100 us (--gpu-samples): the ranges go to the samples' averages over
# ranges as windows through an external sort by start (model/ranges.h gsw).
# Before: 7.5 B/record (the fold given up for the samples).  And a range
# "main" around everything, announced open at the start (GP_REC_NVTX_OPEN)
# and written last, unterminated (--open): what follows folds in it.
# Before: 11.5 B/record (the fold given up at the end, the trace read twice).
# And NCCL's ranges as a PyTorch job's (--nccl): the communicator's, opened
# inside the first step and open at exit, does not nest in it.  Before:
# 12.7 B/record (the fold given up, the trace read twice).  And each step
# on one of 80 threads in turn (--threads 80, a server's pool): more threads
# of ranges than other threads' kernels are counted for.  Before: 11.0
# B/record (the fold given up past 64 threads, every range kept).
for how in autograd autograd-ranges graphs emit gpu-samples open nccl "threads 80"; do
	if "$build/bench/synth_job" --$how 4000000 "$tmp/g4.gpuprof" >/dev/null 2>&1 &&
		"$build/bench/synth_job" --$how 16000000 "$tmp/g16.gpuprof" >/dev/null 2>&1; then
		ra=$("$build/bench/scan_floor" "$tmp/g4.gpuprof" | awk '{print $2}')
		rb=$("$build/bench/scan_floor" "$tmp/g16.gpuprof" | awk '{print $2}')
		a=$(peak_kib report --findings=none "$tmp/g4.gpuprof")
		b=$(peak_kib report --findings=none "$tmp/g16.gpuprof")
		if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
			notok "NVTX report, --$how: a report failed ($a, $b KiB; $ra, $rb records)"
		elif [ $(((b - a) * 1024 * 2)) -le $((rb - ra)) ]; then
			ok "NVTX report, --$how: $a KiB at $ra records, $b KiB at $rb (at most 0.5 B/record more)"
		else
			notok "NVTX report, --$how, grows with the records: $a KiB at $ra, $b KiB at $rb (more than 0.5 B/record)"
		fi
	else
		notok "synth_job did not write the --$how traces"
	fi
	rm -f "$tmp/g4.gpuprof" "$tmp/g16.gpuprof"
done
# Filtered reports: the ranges fold under --nvtx too (a launch's range names
# from its tree node's path), and a kernel a filter drops lets its launch
# call go (launch latency) instead of leaving it waiting for a generation.
# Before: 10 B/record (--nvtx) and 25 B/record (--kernel).
if "$build/bench/synth_job" 4000000 "$tmp/f4.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_job" 16000000 "$tmp/f16.gpuprof" >/dev/null 2>&1; then
	ra=$("$build/bench/scan_floor" "$tmp/f4.gpuprof" | awk '{print $2}')
	rb=$("$build/bench/scan_floor" "$tmp/f16.gpuprof" | awk '{print $2}')
	for opt in "--nvtx=layer" "--kernel=gemm" "--kind=memcpy"; do
		a=$(peak_kib report --findings=none "$opt" "$tmp/f4.gpuprof")
		b=$(peak_kib report --findings=none "$opt" "$tmp/f16.gpuprof")
		if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
			notok "filtered report $opt: a report failed ($a, $b KiB; $ra, $rb records)"
		elif [ $(((b - a) * 1024 * 2)) -le $((rb - ra)) ]; then
			ok "filtered report $opt: $a KiB at $ra records, $b KiB at $rb (at most 0.5 B/record more)"
		else
			notok "filtered report $opt grows with the records: $a KiB at $ra, $b KiB at $rb (more than 0.5 B/record)"
		fi
	done
	# The Chrome and Perfetto exports of the same traces, without flows
	# (whose launch index holds a window of correlation ids, up to
	# GA_RANGES_LWIN): the ranges go through external sorts, none kept
	# (model/ranges.h spill, views/tracks.h).  Before: 17 B/record (every
	# range kept, with its details and its track).
	for fmt in chrome perfetto; do
		a=$(peak_kib export -t $fmt --no-flows -o /dev/null "$tmp/f4.gpuprof")
		b=$(peak_kib export -t $fmt --no-flows -o /dev/null "$tmp/f16.gpuprof")
		if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
			notok "NVTX $fmt export: an export failed ($a, $b KiB; $ra, $rb records)"
		elif [ $(((b - a) * 1024 * 2)) -le $((rb - ra)) ]; then
			ok "NVTX $fmt export: $a KiB at $ra records, $b KiB at $rb (at most 0.5 B/record more)"
		else
			notok "NVTX $fmt export grows with the records: $a KiB at $ra, $b KiB at $rb (more than 0.5 B/record)"
		fi
	done
	# Under a filter too: each activity's ranges read from the spilled
	# ranges' index (views/tracks.c ga_range_layout_index()), found from its
	# launch, whose index fills up to GA_RANGES_LWIN ids (32 MiB; about 2.1
	# B/record more from 4e6 to 1.6e7 records).  Before: 17 B/record.
	a=$(peak_kib export -t chrome --no-flows --nvtx layer -o /dev/null "$tmp/f4.gpuprof")
	b=$(peak_kib export -t chrome --no-flows --nvtx layer -o /dev/null "$tmp/f16.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "${rb:-0}" -le "${ra:-0}" ]; then
		notok "filtered NVTX chrome export: an export failed ($a, $b KiB; $ra, $rb records)"
	elif [ $(((b - a) * 1024)) -le $((3 * (rb - ra))) ]; then
		ok "filtered NVTX chrome export: $a KiB at $ra records, $b KiB at $rb (at most 3 B/record more)"
	else
		notok "filtered NVTX chrome export grows with the records: $a KiB at $ra, $b KiB at $rb (more than 3 B/record)"
	fi
else
	notok "synth_job did not write the traces to filter"
fi
rm -f "$tmp/f4.gpuprof" "$tmp/f16.gpuprof"
# Four rank traces of 1M records read together (--tree): each file's
# launches come down to 4 bytes an id once its ranges are indexed, before
# the next file is read.  Before: 29 B/record more than one trace; after 16.
if "$build/bench/synth_job" --rank 1 1000000 "$tmp/r1.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_job" --rank 2 1000000 "$tmp/r2.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_job" --rank 3 1000000 "$tmp/r3.gpuprof" >/dev/null 2>&1; then
	ra=$("$build/bench/scan_floor" "$tmp/n1.gpuprof" | awk '{print $2}')
	rb=0
	for f in "$tmp/n1.gpuprof" "$tmp/r1.gpuprof" "$tmp/r2.gpuprof" "$tmp/r3.gpuprof"; do
		rb=$((rb + $("$build/bench/scan_floor" "$f" | awk '{print $2}')))
	done
	a=$(peak_kib report --findings=none --tree "$tmp/n1.gpuprof")
	b=$(peak_kib report --findings=none --tree "$tmp/n1.gpuprof" "$tmp/r1.gpuprof" \
		"$tmp/r2.gpuprof" "$tmp/r3.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "$rb" -le "${ra:-0}" ]; then
		notok "NVTX rank traces: a report failed ($a, $b KiB; $ra, $rb records)"
	elif [ $(((b - a) * 1024)) -le $((20 * (rb - ra))) ]; then
		ok "NVTX rank traces: $a KiB for one of $ra records, $b KiB for four ($rb) (at most 20 B/record more)"
	else
		notok "NVTX rank traces grow with the records: $a KiB for one of $ra records, $b KiB for four ($rb) (more than 20 B/record)"
	fi
else
	notok "synth_job did not write the NVTX rank traces"
fi
rm -f "$tmp/n1.gpuprof" "$tmp/r1.gpuprof" "$tmp/r2.gpuprof" "$tmp/r3.gpuprof"

# Durations (model/quantile.h): 2M and 8M launches of one kernel.  A row keeps
# 65536 exactly, then a histogram: the peak is the same (at most 0.5 B/record
# more); --exact keeps every one, 4 bytes each, as the model did for every
# report before: that run must grow by 3 B/record or more, or this check
# measures nothing.
if "$build/bench/synth_trace" --same 2000000 "$tmp/d2.gpuprof" 2>/dev/null &&
	"$build/bench/synth_trace" --same 8000000 "$tmp/d8.gpuprof" 2>/dev/null; then
	a=$(peak_kib report --findings=none "$tmp/d2.gpuprof")
	b=$(peak_kib report --findings=none "$tmp/d8.gpuprof")
	ea=$(peak_kib report --findings=none --exact "$tmp/d2.gpuprof")
	eb=$(peak_kib report --findings=none --exact "$tmp/d8.gpuprof")
	if [ "$a" -le 0 ] || [ "$b" -le 0 ] || [ "$ea" -le 0 ] || [ "$eb" -le 0 ]; then
		notok "durations: a report failed ($a, $b, $ea, $eb KiB)"
	elif [ $(((b - a) * 1024 * 2)) -gt 6000000 ]; then
		notok "durations grow with the records: $a KiB at 2M launches, $b KiB at 8M"
	elif [ $(((eb - ea) * 1024)) -lt $((3 * 6000000)) ]; then
		notok "durations: --exact grows by less than 3 B/record ($ea, $eb KiB): nothing measured"
	else
		ok "durations: $a KiB at 2M launches of one kernel, $b KiB at 8M; --exact $ea and $eb KiB"
	fi
	# Past 65536 a row the median is an estimate, marked and explained; --exact: exact.
	"$ana" report --findings=none "$tmp/d2.gpuprof" >"$tmp/d2.txt" 2>&1
	"$ana" report --findings=none --exact "$tmp/d2.gpuprof" >"$tmp/d2e.txt" 2>&1
	if grep -q '^Quantiles: *medians marked ~ are estimates within 0.4%' "$tmp/d2.txt" &&
		grep -Eq '\| ~1\.000 µs \| +1\.000 µs \| +1\.000 µs \| +0 ns \| ~1\.000 µs \| ~1\.000 µs \|' \
			"$tmp/d2.txt" &&
		! grep -q '~\|^Quantiles:' "$tmp/d2e.txt" &&
		grep -Eq '\| 1\.000 µs \| +1\.000 µs \| +1\.000 µs \| +0 ns \| 1\.000 µs \| 1\.000 µs \|' \
			"$tmp/d2e.txt"; then
		ok "durations: estimates past 65536 a row marked ~ and stated; --exact exact"
	else
		notok "durations: the kernel row's estimates are not marked, or --exact's are: $(grep -m1 -A4 '^Kernels' "$tmp/d2.txt")"
	fi
else
	notok "synth_trace did not write the duration traces"
fi
exit $fail
