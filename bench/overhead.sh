#!/usr/bin/env bash
# Overhead benchmarks: builds what is missing or stale (bench/build.sh), then
# runs bench/bench.py, which prints a markdown report and writes
# BUILD_DIR/bench/results.md and BUILD_DIR/bench/raw.csv.
#
#   bash bench/overhead.sh BUILD_DIR [--only NAME[,NAME]] [--quick]
#
# BENCH_QUICK=1 runs a shorter version.  Expects the recorder, wrapper and
# analyzer in BUILD_DIR (make).  bench/bench.py describes the rest.
set -u

here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
[ $# -gt 0 ] && shift

if ! bash "$here/build.sh" "$build"; then
	echo "bench: some benchmark programs did not build; their results will read 'error'" >&2
fi
exec python3 "$here/bench.py" "$build" "$@"
