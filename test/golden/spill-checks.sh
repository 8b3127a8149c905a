#!/usr/bin/env bash
# The Chrome, Perfetto and SQLite exports read NVTX ranges from an external
# sort on disk (model/ranges.h spill; their layout and SQLite's index in
# views/tracks.c): the same bytes (SQLite: the same tables) as with every
# range kept in memory (GPUPROF_NVTX_SPILL=0), on every
# golden trace, on all of them merged, and on bench/synth_job traces whose
# ranges fill several of the sort's runs (one thread, and steps on three
# threads).
#
# usage: test/golden/spill-checks.sh BUILD_DIR
# Prints "ok - spill NAME" or "not ok - spill NAME: why"; exits 1 if any
# failed.
set -u

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
analyze=$build/bin/gpuprof-analyze

if [ ! -x "$analyze" ]; then
	echo "not ok - spill checks: $analyze is not built"
	exit 1
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-spill.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# The SQLite export's tables are compared as sqlite3 dumps them (rows in
# the order written); without the sqlite3 tool, only Chrome and Perfetto.
formats="chrome perfetto"
if command -v sqlite3 >/dev/null 2>&1; then
	formats="$formats sqlite"
else
	echo "skip - spill sqlite: the sqlite3 tool is not installed"
fi

# same NAME TRACE...: each format's bytes (SQLite: tables) spilled and kept equal.
same() {
	local name=$1 t
	shift
	for t in $formats; do
		rm -f "$tmp/a.$t" "$tmp/b.$t"
		if ! "$analyze" export -t $t --no-symbolize -o "$tmp/a.$t" "$@" 2>"$tmp/err" ||
			! GPUPROF_NVTX_SPILL=0 "$analyze" export -t $t --no-symbolize \
				-o "$tmp/b.$t" "$@" 2>>"$tmp/err"; then
			echo "not ok - spill $name $t: export failed: $(head -n 1 "$tmp/err")"
			failed=1
			continue
		fi
		if [ $t = sqlite ]; then
			sqlite3 "$tmp/a.$t" .dump >"$tmp/a.sql" 2>>"$tmp/err"
			sqlite3 "$tmp/b.$t" .dump >"$tmp/b.sql" 2>>"$tmp/err"
			mv "$tmp/a.sql" "$tmp/a.$t"
			mv "$tmp/b.sql" "$tmp/b.$t"
		fi
		if ! cmp -s "$tmp/a.$t" "$tmp/b.$t"; then
			echo "not ok - spill $name $t: spilled ranges give other bytes than kept ones"
			failed=1
		elif [ ! -s "$tmp/a.$t" ]; then
			echo "not ok - spill $name $t: empty export"
			failed=1
		else
			echo "ok - spill $name $t"
		fi
	done
}

cd "$here" || exit 1
for f in *.gpuprof; do
	same "${f%.gpuprof}" "$f"
done
# shellcheck disable=SC2046 # every golden trace as its own argument
same "goldens merged" $(ls ./*.gpuprof)

# Filters read each activity's ranges from the spilled ranges' index.
same "goldens merged --nvtx a" --nvtx a $(ls ./*.gpuprof)
same "goldens merged --kernel a" --kernel a $(ls ./*.gpuprof)

# GPUPROF_VERBOSE=1 says the ranges went through the sort, and how many.
if GPUPROF_VERBOSE=1 "$analyze" export -t chrome -o /dev/null nvtx_threads.gpuprof 2>"$tmp/err" &&
	grep -q 'NVTX ranges sorted externally, not kept ([1-9][0-9]* ranges)' "$tmp/err"; then
	echo "ok - spill verbose: $(grep 'sorted externally' "$tmp/err")"
else
	echo "not ok - spill verbose: $(head -n 1 "$tmp/err")"
	failed=1
fi
# A trace whose ranges fit in memory needs no temporary file; one whose do
# not names the directory it could not write in.
if TMPDIR=/nonexistent "$analyze" export -t chrome -o "$tmp/small.json" nvtx_threads.gpuprof \
	2>"$tmp/err"; then
	echo "ok - spill small trace without a temporary directory"
else
	echo "not ok - spill small trace without a temporary directory: $(head -n 1 "$tmp/err")"
	failed=1
fi
if make --no-print-directory -s -C "$root" BUILD="$build" "$build/bench/synth_job" \
	>"$tmp/make.log" 2>&1; then
	# About 78,000 ranges: more than two of the sort's runs (GA_RANGES_SPILL_RUN).
	"$build/bench/synth_job" 600000 "$tmp/job1.gpuprof" >/dev/null &&
		same "synth_job 600000" "$tmp/job1.gpuprof"
	if TMPDIR=/nonexistent "$analyze" export -t perfetto -o "$tmp/big.pf" "$tmp/job1.gpuprof" \
		2>"$tmp/err"; then
		echo "not ok - spill without a temporary directory: the export did not fail"
		failed=1
	elif grep -q 'a temporary file in /nonexistent' "$tmp/err"; then
		echo "ok - spill without a temporary directory: $(head -n 1 "$tmp/err")"
	else
		echo "not ok - spill without a temporary directory: $(head -n 1 "$tmp/err")"
		failed=1
	fi
	# SQLite names each activity's innermost range by its index: found through the
	# index of the spilled ranges, which lies in a temporary file past 2,048 of them.
	if TMPDIR=/nonexistent "$analyze" export -t sqlite -o "$tmp/big.db" "$tmp/job1.gpuprof" \
		2>"$tmp/err"; then
		echo "not ok - spill sqlite without a temporary directory: the export did not fail"
		failed=1
	elif grep -q 'a temporary file in /nonexistent' "$tmp/err" && [ ! -e "$tmp/big.db" ]; then
		echo "ok - spill sqlite without a temporary directory: $(head -n 1 "$tmp/err")"
	else
		echo "not ok - spill sqlite without a temporary directory: $(head -n 1 "$tmp/err")"
		failed=1
	fi
	"$build/bench/synth_job" --threads 3 600000 "$tmp/job3.gpuprof" >/dev/null &&
		same "synth_job --threads 3 600000" "$tmp/job3.gpuprof"
	# NCCL's ranges of a domain of their own beside the steps, ranges left
	# open at the end, autograd's thread, PyTorch's op names.
	for opt in --nccl --open --autograd-ranges --emit --graphs; do
		"$build/bench/synth_job" $opt 200000 "$tmp/job$opt.gpuprof" >/dev/null &&
			same "synth_job $opt 200000" "$tmp/job$opt.gpuprof"
	done
	# A filter by a range nested in the steps, by a graph's capture range.
	same "synth_job --threads 3 600000 --nvtx ^layer" --nvtx ^layer "$tmp/job3.gpuprof"
	same "synth_job --graphs 200000 --nvtx capture" --nvtx capture "$tmp/job--graphs.gpuprof"
	same "synth_job --graphs 200000 --nvtx attn" --nvtx attn "$tmp/job--graphs.gpuprof"
else
	echo "not ok - spill synth_job: bench/synth_job does not build: $(tail -n 1 "$tmp/make.log")"
	failed=1
fi
exit $failed
