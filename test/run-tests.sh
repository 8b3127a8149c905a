#!/usr/bin/env bash
# Runs the whole test suite against a build directory and sums it up.
#
#   bash test/run-tests.sh BUILD_DIR            (make test)
#
# In order: the unit test binaries BUILD/test/test_*, the golden analyzer
# tests (SQL over the SQLite export among them; the picture of the GPU over
# time), the benchmark's overtime and fleet rows (plan and arithmetic), make
# bench-analyzer's parts on small traces, the analyzer's layers
# and one name per source file (test/layering-check.py), docs/HACKING.md naming
# every folder and file (test/hacking-check.py), the wrapper tests, the
# build and install rules (install, man pages, uninstall), a check of the fault shim the GPU tests preload,
# the GPU end-to-end tests (they skip without a GPU), and checks of the
# recorder library's exported symbols and load-time dependencies.  Every
# step prints "ok - ...", "not ok - ..." or "skip - ..." lines; they are
# echoed as they come and counted.  The last line is "N passed, N failed,
# N skipped"; the exit status is 1 if anything failed.  A step that exits
# non-zero without printing a "not ok" line (a crash, a failed assertion)
# counts as one failure named after it.

set -u

build_arg=${1:?usage: test/run-tests.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
build=$(cd "$build_arg" 2>/dev/null && pwd) || {
	echo "run-tests: build directory $build_arg does not exist (run make)" >&2
	exit 1
}

results=$(mktemp "${TMPDIR:-/tmp}/gpuprof-tests.XXXXXX") || exit 1
step_out=$(mktemp "${TMPDIR:-/tmp}/gpuprof-step.XXXXXX") || exit 1
trap 'rm -f "$results" "$step_out"' EXIT

# Seconds a single step may run before it is killed and counted as failed.
STEP_TIMEOUT=${STEP_TIMEOUT:-1800}
timeout_cmd=()
if command -v timeout >/dev/null 2>&1; then
	timeout_cmd=(timeout -k 10 "$STEP_TIMEOUT")
fi

emit() {
	printf '%s\n' "$1" | tee -a "$results"
}

# run_step NAME COMMAND...: runs COMMAND, echoing and recording its output.
run_step() {
	local name=$1 status
	shift
	"${timeout_cmd[@]}" "$@" </dev/null 2>&1 | tee "$step_out"
	status=${PIPESTATUS[0]}
	cat "$step_out" >>"$results"
	if [ "$status" != 0 ] && ! grep -q '^not ok' "$step_out"; then
		if [ "$status" = 124 ] && [ ${#timeout_cmd[@]} -gt 0 ]; then
			emit "not ok - $name: killed after ${STEP_TIMEOUT}s"
		elif [ "$status" -gt 128 ]; then
			emit "not ok - $name: killed by signal $((status - 128)) ($(kill -l $((status - 128)) 2>/dev/null))"
		else
			emit "not ok - $name: exited with status $status without a failing test line"
		fi
	fi
}

# --- unit tests (no GPU)
shopt -s nullglob
for t in "$build"/test/test_*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	run_step "unit $(basename "$t")" "$t"
done
shopt -u nullglob

# --- the Python frame reader inside this CPython (ctypes; no GPU)
if command -v python3 >/dev/null 2>&1; then
	run_step "unit test_pystack.py" python3 test/unit/test_pystack.py "$build"
else
	emit "skip - unit test_pystack.py # python3 not found"
fi
# --- and in a program embedding a libpython loaded RTLD_LOCAL (skips without one)
run_step "unit pyembed_local" "$build/test/pyembed_local"

# --- golden analyzer tests
if [ -f test/golden/run.sh ]; then
	run_step "golden" bash test/golden/run.sh "$build"
fi
if [ -f test/golden/nvtx-checks.sh ]; then
	run_step "golden nvtx" bash test/golden/nvtx-checks.sh "$build"
	run_step "golden spill" bash test/golden/spill-checks.sh "$build"
	run_step "golden sqlite pipe" bash test/golden/sqlite-pipe-checks.sh "$build"
fi
if [ -f test/golden/sql-checks.py ]; then
	if command -v python3 >/dev/null 2>&1; then
		run_step "golden sql" python3 test/golden/sql-checks.py "$build"
	else
		emit "skip - golden sql # python3 not found"
	fi
fi
if [ -f test/golden/stacks-checks.sh ]; then
	run_step "golden stacks" bash test/golden/stacks-checks.sh "$build"
fi
if [ -f test/golden/diff-checks.sh ]; then
	run_step "golden diff" bash test/golden/diff-checks.sh "$build"
fi
if [ -f test/golden/ranks-checks.sh ]; then
	run_step "golden ranks" bash test/golden/ranks-checks.sh "$build"
fi
if [ -f test/summary/summary-checks.sh ] && command -v python3 >/dev/null 2>&1; then
	run_step "summaries" bash test/summary/summary-checks.sh "$build"
	run_step "summaries dask" bash test/summary/dask-checks.sh "$build"
fi
if [ -f test/golden/overtime-svg-checks.py ] && command -v python3 >/dev/null 2>&1; then
	run_step "golden overtime svg" python3 test/golden/overtime-svg-checks.py "$build"
fi

# --- the benchmark's overtime and fleet rows: their plan and arithmetic (no GPU)
if [ -f test/bench-sampling-checks.py ] && command -v python3 >/dev/null 2>&1; then
	run_step "bench sampling" python3 test/bench-sampling-checks.py "$build"
fi
# --- make bench-analyzer's parts on small traces: the floor, the writers, -j alike (no GPU)
if [ -f test/bench-analyzer-checks.sh ] && command -v python3 >/dev/null 2>&1; then
	run_step "bench analyzer" bash test/bench-analyzer-checks.sh "$build"
fi
# --- the report's peak memory does not grow with the records where it is bounded (no GPU)
if [ -f test/analyzer-memory-checks.sh ] && command -v python3 >/dev/null 2>&1; then
	run_step "analyzer memory" bash test/analyzer-memory-checks.sh "$build"
fi

# --- the analyzer's layers: no include loop, no arrow back up; one name, one file (no build needed)
if command -v python3 >/dev/null 2>&1; then
	run_step "layering" python3 test/layering-check.py
	run_step "hacking" python3 test/hacking-check.py
else
	emit "skip - layering # python3 not found"
fi

# --- wrapper tests (no GPU, no recorder)
if [ -f scripts/test-wrapper.sh ]; then
	run_step "wrapper" bash scripts/test-wrapper.sh "$build"
fi

# --- build rules, make install and make uninstall (no GPU)
if [ -f test/install-checks.sh ]; then
	run_step "install" bash test/install-checks.sh "$build"
fi

# --- the fault shim the GPU tests preload (no GPU needed)
if command -v python3 >/dev/null 2>&1 && [ -f test/shims/check.py ]; then
	run_step "fault shim" python3 test/shims/check.py "$build"
fi

# --- GPU end-to-end tests
if command -v python3 >/dev/null 2>&1; then
	run_step "gpu" python3 test/gpu/run.py "$build"
else
	emit "skip - gpu # python3 not found"
fi

# --- the recorder's ELF interface
lib=$build/lib/libgpuprof.so
if [ ! -f "$lib" ]; then
	emit "not ok - recorder exports: $lib is missing"
	emit "not ok - recorder dependencies: $lib is missing"
else
	# Only the injection entry points and gpuprof_* may be visible: a
	# leaked symbol (zstd's above all) can interpose on the program's own.
	# The CUPTI entry points a program's own CUPTI user is served through
	# (cupti/guest.c) are exported on purpose.
	allowed='^(InitializeInjection|InitializeInjectionNvtx2|gpuprof_.*|_init|_fini|cupti(Subscribe|Unsubscribe|Finalize|EnableCallback|EnableDomain|Activity(Enable|Disable|EnableRuntimeApi|EnableDriverApi|RegisterCallbacks|RegisterTimestampCallback|SetAttribute|FlushAll|GetNextRecord|GetNumDroppedRecords)))$'
	if ! syms=$(nm -D --defined-only "$lib" 2>&1); then
		emit "not ok - recorder exports: nm failed: $syms"
	else
		extra=$(printf '%s\n' "$syms" | awk 'NF >= 3 { sub(/@.*/, "", $3); print $3 }' |
			grep -Ev "$allowed" | sort -u | head -n 20 | tr '\n' ' ')
		if [ -n "$extra" ]; then
			emit "not ok - recorder exports: unexpected symbols: $extra"
		elif ! printf '%s\n' "$syms" | grep -q ' InitializeInjection$'; then
			emit "not ok - recorder exports: InitializeInjection is not exported"
		else
			emit "ok - recorder exports only its entry points"
		fi
	fi

	# zstd and PCRE2 are linked in statically (GPU machines may lack
	# libpcre2), CUPTI is dlopen()ed and libunwind is optional: none of them
	# may be a load-time dependency.
	if ! dyn=$(readelf -d "$lib" 2>&1); then
		emit "not ok - recorder dependencies: readelf failed: $dyn"
	else
		bad=$(printf '%s\n' "$dyn" | grep '(NEEDED)' | grep -Eio 'lib(zstd|pcre|unwind|cupti)[^] ]*' |
			sort -u | tr '\n' ' ')
		if [ -n "$bad" ]; then
			emit "not ok - recorder dependencies: NEEDED $bad"
		else
			emit "ok - recorder needs no zstd, PCRE2, libunwind or CUPTI at load time"
		fi
	fi
fi

# One configuration, read once: no recorder object but preload/config.o reads the environment.
readers=""
for o in "$build"/obj/preload/*.o "$build"/obj/cupti/*.o; do
	case $o in */preload/config.o) continue ;; esac
	if [ -f "$o" ] && nm -u "$o" 2>/dev/null | grep -Eq ' (secure_)?getenv$'; then
		readers="$readers ${o#"$build"/obj/}"
	fi
done
if [ -n "$readers" ]; then
	emit "not ok - recorder: the environment is read outside preload/config.c:$readers"
else
	emit "ok - recorder: only preload/config.c reads the environment"
fi

passed=$(grep -c '^ok\( \|$\)' "$results")
failed=$(grep -c '^not ok\( \|$\)' "$results")
skipped=$(grep -c '^skip\( \|$\)' "$results")
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ]
