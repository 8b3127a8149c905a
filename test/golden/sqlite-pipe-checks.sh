#!/usr/bin/env bash
# The SQLite export's streamed rows go through a pipe (views/sqlite.c
# struct sqpipe): recorded by the reading thread, inserted eight rows of a
# table a statement, on a thread of their own at -j above 1.  Checks that
# the database is the one of every row bound directly, one a statement
# (GPUPROF_SQLITE_PIPE=0), at -j 1, 2 and 4, as sqlite3 dumps it: on every
# golden trace merged, on a bench/synth_trace --mix trace (copies, memsets,
# allocations, profiled launches and their values) and on a bench/synth_job
# trace whose NVTX ranges are written while the activities stream (more
# rows than the pipe's blocks hold); and that a write that fails half way
# (a file size limit) fails the export at every -j, naming the file, the old
# file left as it was and no temporary file left.
#
# usage: test/golden/sqlite-pipe-checks.sh BUILD_DIR
# Prints "ok - sqlite pipe NAME" or "not ok - sqlite pipe NAME: why";
# exits 1 if any failed.
set -u

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
analyze=$build/bin/gpuprof-analyze

if [ ! -x "$analyze" ]; then
	echo "not ok - sqlite pipe: $analyze is not built"
	exit 1
fi
if ! command -v sqlite3 >/dev/null 2>&1; then
	echo "skip - sqlite pipe: the sqlite3 tool is not installed"
	exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-sqpipe.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# dump OUT ARGS...: exports ARGS to a database and dumps it to OUT; 1 on failure.
dump() {
	local out=$1
	shift
	rm -f "$tmp/x.db"
	"$analyze" export -t sqlite --no-symbolize -o "$tmp/x.db" "$@" 2>"$tmp/err" &&
		sqlite3 "$tmp/x.db" .dump >"$out" 2>>"$tmp/err"
}

# same NAME TRACE...: the piped databases at -j 1, 2, 4 equal the directly bound one.
same() {
	local name=$1 j bad=""
	shift
	if ! GPUPROF_SQLITE_PIPE=0 dump "$tmp/ref.sql" -j 2 "$@"; then
		echo "not ok - sqlite pipe $name: export failed: $(head -n 1 "$tmp/err")"
		failed=1
		return
	fi
	for j in 1 2 4; do
		if ! dump "$tmp/j.sql" -j $j "$@"; then
			bad="$bad -j $j failed ($(head -n 1 "$tmp/err"));"
		elif ! cmp -s "$tmp/ref.sql" "$tmp/j.sql"; then
			bad="$bad -j $j other rows ($(diff "$tmp/ref.sql" "$tmp/j.sql" | head -n 2 | tail -n 1 | cut -c1-120));"
		fi
	done
	if [ -n "$bad" ]; then
		echo "not ok - sqlite pipe $name:$bad"
		failed=1
	else
		echo "ok - sqlite pipe $name: -j 1, 2, 4 as one row a statement ($(grep -c '^INSERT' "$tmp/ref.sql") rows)"
	fi
}

cd "$here" || exit 1
# shellcheck disable=SC2046 # every golden trace as its own argument
same "goldens merged" $(ls ./*.gpuprof)
if make --no-print-directory -s -C "$root" BUILD="$build" "$build/bench/synth_job" \
	"$build/bench/synth_trace" >"$tmp/make.log" 2>&1; then
	"$build/bench/synth_trace" --mix 200000 "$tmp/mix.gpuprof" >/dev/null 2>&1 &&
		same "synth_trace --mix 200000" "$tmp/mix.gpuprof"
	"$build/bench/synth_job" --threads 3 300000 "$tmp/job.gpuprof" >/dev/null &&
		same "synth_job --threads 3 300000" "$tmp/job.gpuprof"
	# A file size limit fails a write half way (SIGXFSZ ignored: the write fails instead).
	mkdir -p "$tmp/keep"
	for j in 1 2; do
		printf 'previous contents\n' >"$tmp/keep/old.db"
		(trap '' XFSZ && ulimit -f 2048 &&
			exec "$analyze" export -t sqlite -j $j -o "$tmp/keep/old.db" "$tmp/mix.gpuprof") \
			>/dev/null 2>"$tmp/err"
		rc=$?
		if [ $rc = 1 ] && grep -q "$tmp/keep/old.db" "$tmp/err" &&
			[ "$(cat "$tmp/keep/old.db")" = "previous contents" ] &&
			[ "$(ls "$tmp/keep")" = old.db ]; then
			echo "ok - sqlite pipe -j $j: a failed write fails the export: $(head -n 1 "$tmp/err")"
		else
			echo "not ok - sqlite pipe -j $j: a failed write: exit $rc, files $(ls "$tmp/keep" | tr '\n' ' '), $(head -n 1 "$tmp/err")"
			failed=1
		fi
	done
else
	echo "not ok - sqlite pipe: bench/synth_job does not build: $(tail -n 1 "$tmp/make.log")"
	failed=1
fi
exit $failed
