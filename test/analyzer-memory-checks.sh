#!/usr/bin/env bash
# Checks that the analyzer's memory does not grow with the records where it
# is bounded, no GPU: the peak RSS of gpuprof-analyze report (the child's
# ru_maxrss) on a kernel-only trace of 4M records against one of 1M (past
# 1M the findings' tables of launches by correlation, 32 MiB, are full)
# (bench/synth_trace N), and on the compression bomb (synth_trace --same:
# records of one stream that differ only by a constant step) of 4M records
# against 1M, reported without findings, where the busy intervals retire as
# they are read (model/busy.h; the findings read every busy interval).
# The bound is bytes of peak RSS per record more.  The durations of one
# kernel, 2M and 8M launches, without findings: the same peak, where --exact
# grows by 4 bytes a launch; past 65536 launches the row's median, P90 and
# P99 are marked as estimates (~, the header's Quantiles: line), not with
# --exact.  A trace with nested NVTX ranges (bench/synth_job, 12% ranges,
# 45% API calls) of 4M records against 1M, without findings: the ranges
# and each activity's launching call are kept from the scan to the end, in
# 49 bytes a range and 4 bytes a correlation id (12 while the trace is
# scanned).  The Chrome export of the kernel-only traces (API calls not
# traced): no launching call to keep for its flows.  Prints "ok - ..." /
# "not ok - ..." lines; about 30 seconds.
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
grows "peak RSS of the bomb's report without findings" "$tmp/s1.gpuprof" "$tmp/s4.gpuprof" 1 \
	--findings=none
# Before: 20 B/record (the launching call of every kernel, though none was traced).
grows_cmd "peak RSS of a kernel-only Chrome export" "$tmp/k1.gpuprof" "$tmp/k4.gpuprof" 3 \
	export -t chrome -o /dev/null

# Before: 29 B/record (80 bytes a range and 24 more for its GPU time, 20 an
# activity for its launching call); after about 21, of which 11 the ranges'
# and launches' own and 4 the copy legs.
if "$build/bench/synth_job" 1000000 "$tmp/n1.gpuprof" >/dev/null 2>&1 &&
	"$build/bench/synth_job" 4000000 "$tmp/n4.gpuprof" >/dev/null 2>&1; then
	grows "peak RSS of an NVTX report without findings" "$tmp/n1.gpuprof" "$tmp/n4.gpuprof" 25 \
		--findings=none
else
	notok "synth_job did not write the NVTX traces"
fi
rm -f "$tmp/n1.gpuprof" "$tmp/n4.gpuprof"

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
