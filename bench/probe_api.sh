#!/usr/bin/env bash
# What host-side API tracing costs, measured on the 1-thread empty-launch
# loop: no profiler, mincupti (the floor), mincupti + CUPTI API activity
# records, mincupti + an empty launch callback, mincupti + a callback that
# keeps its own 32-byte API record, and gpuprof's device-only and default
# configurations.  Interleaved, REPS rounds, medians in µs per launch.
# Then the cost of one NVTX push/pop pair with and without gpuprof.
#
#   bash bench/probe_api.sh BUILD_DIR [REPS] [LAUNCHES]
set -u
build=${1:-build}
reps=${2:-5}
n=${3:-200000}
bash "$(dirname "$0")/build.sh" "$build" >&2 || exit 1
loop=$build/bench/launch_loop
min=$(cd "$build/bench" && pwd)/libmincupti.so
gp=$build/bin/gpuprof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
configs="none mincupti min+api min+cb min+cb-record gp-device gp-default"
for r in $(seq "$reps"); do
	for c in $configs; do
		case $c in
		none) out=$("$loop" st "$n") ;;
		mincupti) out=$(CUDA_INJECTION64_PATH=$min "$loop" st "$n" 2>/dev/null) ;;
		min+api) out=$(MINCUPTI_API=1 CUDA_INJECTION64_PATH=$min "$loop" st "$n" 2>/dev/null) ;;
		min+cb) out=$(MINCUPTI_CALLBACK=1 CUDA_INJECTION64_PATH=$min "$loop" st "$n" 2>/dev/null) ;;
		min+cb-record) out=$(MINCUPTI_CALLBACK=2 CUDA_INJECTION64_PATH=$min "$loop" st "$n" 2>/dev/null) ;;
		gp-device) out=$("$gp" run -f -o "$tmp/d" --report=none --trace=kernel,memcpy,memset "$loop" st "$n" 2>/dev/null) ;;
		gp-default) out=$("$gp" run -f -o "$tmp/a" --report=none "$loop" st "$n" 2>/dev/null) ;;
		esac
		v=$(printf '%s\n' "$out" | sed -n 's/^BENCH us_per_launch //p')
		echo "$c ${v:-error}" >>"$tmp/all"
	done
done
printf '%-14s %s\n' config "median µs/launch (all rounds)"
for c in $configs; do
	vals=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/all" | sort -g | tr '\n' ' ')
	med=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/all" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	printf '%-14s %s   (%s)\n' "$c" "$med" "$vals"
done

# NVTX: one push/pop pair, no profiler (NVTX calls are no-ops) against
# gpuprof recording them.
loopn=$build/bench/nvtx_loop
for r in $(seq "$reps"); do
	for c in none gp-default; do
		case $c in
		none) out=$("$loopn") ;;
		gp-default) out=$("$gp" run -f -o "$tmp/n" --report=none "$loopn" 2>/dev/null) ;;
		esac
		v=$(printf '%s\n' "$out" | sed -n 's/^BENCH ns_per_pair //p')
		echo "nvtx-$c ${v:-error}" >>"$tmp/all"
	done
done
printf '%-14s %s\n' config "median ns per NVTX push/pop pair (all rounds)"
for c in nvtx-none nvtx-gp-default; do
	vals=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/all" | sort -g | tr '\n' ' ')
	med=$(awk -v c="$c" '$1 == c { print $2 }' "$tmp/all" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
	printf '%-14s %s   (%s)\n' "$c" "$med" "$vals"
done
