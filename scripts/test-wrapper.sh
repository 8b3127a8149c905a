#!/usr/bin/env bash
# Tests of the gpuprof wrapper (scripts/gpuprof) that need no GPU and no
# recorder: the "program" plays the recorder's part (it reads the
# environment the wrapper set and writes the session file), and a stub
# analyzer logs how it was called.
#
#   scripts/test-wrapper.sh BUILD_DIR
#
# Prints "ok - wrapper NAME" or "not ok - wrapper NAME: WHY" per test; exits 1
# if any failed.

set -u

build=${1:?usage: test-wrapper.sh BUILD_DIR}
build=$(cd "$build" && pwd) || exit 1
gpuprof=$build/bin/gpuprof
[ -x "$gpuprof" ] || gpuprof=$(cd "$(dirname "$0")" && pwd)/gpuprof

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-wrapper-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

# An empty shared object stands in for the recorder.
fake_lib=$tmp/lib/libfake.so
mkdir -p lib
if ! ${CC:-cc} -shared -o "$fake_lib" -x c /dev/null 2>/dev/null; then
	fake_lib=/dev/null # works, but ld.so complains on stderr
fi
# The output template is checked by the real analyzer (one grammar).
cat >analyze <<EOF
#!/bin/sh
[ "\$1" = template ] && exec "$build/bin/gpuprof-analyze" "\$@"
EOF
cat >>analyze <<'EOF'
if [ "$1" = run-child ]; then
	# A runner that cannot say how the program ended: the wrapper then
	# judges by the exit status alone.
	LD_PRELOAD=$3
	export LD_PRELOAD
	shift 3
	exec "$@"
fi
echo "$*" >>"${0%/*}/analyze.log"
[ "$1" = --version ] && echo "gpuprof-analyze stub"
echo "REPORT $*"
EOF
chmod +x analyze
export GPUPROF_LIB=$fake_lib GPUPROF_ANALYZE=$tmp/analyze
# No measured peaks (gpuprof calibrate) unless a test makes some.
export GPUPROF_PEAKS_DIR=$tmp/no-peaks
unset CUDA_INJECTION64_PATH NVTX_INJECTION64_PATH LD_PRELOAD GPUPROF_OUTPUT \
	GPUPROF_FORCE GPUPROF_TRACE GPUPROF_GRAPH_TRACE GPUPROF_FLUSH_MS \
	GPUPROF_VERBOSE GPUPROF_SESSION_FILE

failed=0
ok() { echo "ok - wrapper $1"; }
fail() {
	echo "not ok - wrapper $1: $2"
	failed=1
}

# judge NAME WHY COMMAND...: ok if COMMAND succeeds.
judge() {
	local name=$1 why=$2
	shift 2
	if "$@"; then
		ok "$name"
	else
		fail "$name" "$why"
	fi
}

# gp ARGS...: runs the wrapper; sets rc, out, err.
gp() {
	"$gpuprof" "$@" >out 2>err
	rc=$?
	out=$(cat out)
	err=$(cat err)
}

# expect NAME RC [STDERR-SUBSTRING]
expect() {
	if [ "$rc" != "$2" ]; then
		fail "$1" "exit status $rc, expected $2; stderr: $(head -c 300 err)"
	elif [ $# -gt 2 ] && [[ $err != *"$3"* ]]; then
		fail "$1" "stderr lacks '$3': $(head -c 300 err)"
	else
		ok "$1"
	fi
}

# A program that acts like the recorder: writes one trace file whose name is
# GPUPROF_OUTPUT with %p expanded, lists it twice in the session file (the
# wrapper must dedupe), and dumps its environment.
cat >fakeapp <<'EOF'
#!/bin/sh
f=$(printf '%s' "$GPUPROF_OUTPUT" | sed "s/%p/$$/").gpuprof
: >"$f"
echo "$f" >>"$GPUPROF_SESSION_FILE"
echo "$f" >>"$GPUPROF_SESSION_FILE"
env >env.txt
echo "program output"
exit "${1:-0}"
EOF
chmod +x fakeapp

gp --help
expect help 0
[[ $out == *run* && $out == *report* && $out == *export* && $out == *diff* ]] || fail help-lists "commands missing from --help"

gp run --help
if [ "$rc" = 0 ] && [[ $out == *--output* && $out == *--force* && $out == *--trace* &&
	$out == *--graph-trace* && $out == *--report* && $out == *--flush-interval* &&
	$out == *--verbose* ]]; then
	ok run-help
else
	fail run-help "rc $rc or an option missing"
fi

gp --version
expect version 0
[[ $out == *"gpuprof-analyze stub"* ]] || fail version-output "got '$out'"

gp frobnicate
expect unknown-command 2 "unknown command"
gp run --bogus true
expect unknown-option 2 "unknown option"
gp run --stats=true true
expect unknown-option-value 2 "unknown option '--stats'"
gp run --force=yes true
expect flag-takes-no-value 2 "option --force takes no value"
vfail=""
for c in run report export diff calibrate start stop status list dump; do
	gp "$c" --version
	[ "$rc" = 0 ] && [[ $out == *"gpuprof-analyze stub"* || $out == "REPORT "*"--version"* ]] ||
		vfail+=" $c: rc $rc, out '$out', err '$err';"
	# The real analyzer answers it for each of its commands.
	[ "$c" = run ] || [ "$c" = calibrate ] ||
		[[ $("$build/bin/gpuprof-analyze" "$c" --version 2>&1) == "gpuprof "[0-9]* ]] ||
		vfail+=" gpuprof-analyze $c --version: $("$build/bin/gpuprof-analyze" "$c" --version 2>&1);"
done
judge version-every-command "$vfail" test -z "$vfail"
gp run
expect no-program 2 "no program"
gp run --trace=cuda,nvtx ./fakeapp
expect trace-cuda 0
judge trace-cuda-env "env: $(grep GPUPROF_TRACE env.txt)" grep -qx 'GPUPROF_TRACE=cuda,nvtx' env.txt
gp run --trace=kernel,bogus true
expect trace-bogus 2 "bogus"
gp run --trace= true
expect trace-empty 2 "--trace"
gp run --help
if [[ $out == *"nvtx,memory"* ]]; then ok run-help-memory; else fail run-help-memory "run --help does not list memory"; fi
gp run --graph-trace=edge true
expect graph-trace-bogus 2 "--graph-trace"
gp run --report=pie true
expect report-bogus 2 "--report"
gp run --flush-interval=soon true
expect flush-bogus 2 "--flush-interval"
gp run --capture-range=nvtx:@dom true
expect capture-range-no-name 2 "needs a range name"
gp run --capture-range-end=repeat:-1 true
expect capture-range-end-bogus 2 "--capture-range-end"
gp run -o 'x-%z' true
expect template-bogus 2 "template"
gp run --start=later true
expect start-bogus 2 "--start"
gp run --flight-recorder=512K true
expect flight-too-small 2 "--flight-recorder"
gp run --flight-recorder=lots true
expect flight-bogus 2 "--flight-recorder"
gp run --dump-on=cuda-error true
expect dump-on-needs-flight 2 "need --flight-recorder"
gp run --flight-recorder=64M --dump-on=nvtx: true
expect dump-on-bogus 2 "--dump-on"
gp run --flight-recorder=64M --dump-signal=TERM true
expect dump-signal-bogus 2 "--dump-signal"
gp run --flight-recorder=64M --start=dormant true
expect flight-and-dormant 2 "do not go together"
gp run --start=dormant --flight-recorder=64M --capture-range=cudaProfilerApi true
expect capture-and-dormant 2 "do not go together"
gp run --flight-recorder=1G --dump-on=nvtx:step,cuda-error --dump-signal=SIGUSR2 ./fakeapp
if [ "$rc" = 0 ] && grep -qx 'GPUPROF_FLIGHT_RECORDER=1G' env.txt &&
	grep -qx 'GPUPROF_DUMP_ON=nvtx:step,cuda-error' env.txt &&
	grep -qx 'GPUPROF_DUMP_SIGNAL=USR2' env.txt && grep -q '^GPUPROF_OUTPUT=.*/gpuprof-%p-%n$' env.txt; then
	ok flight-env
else
	fail flight-env "rc $rc; $(grep GPUPROF_ env.txt | tr '\n' ' ')"
fi
gp run --start=dormant ./fakeapp
if [ "$rc" = 0 ] && grep -qx 'GPUPROF_START=dormant' env.txt; then
	ok dormant-env
else
	fail dormant-env "rc $rc"
fi
for c in start stop status dump; do
	gp "$c" 1234
	if [ "$rc" = 0 ] && grep -qx "$c 1234" analyze.log; then
		ok "control-$c-execs-analyzer"
	else
		fail "control-$c-execs-analyzer" "rc $rc; $(tail -1 analyze.log)"
	fi
done
gp run -o
expect option-needs-value 2 "needs a value"
gp run -- no-such-program-gpuprof
expect command-not-found 127 "command not found"

GPUPROF_LIB=$tmp/nope.so gp run true
expect library-missing 1 "library not found"

gp run true
expect no-trace 0 "no trace was written"
gp run sh -c 'exit 3'
expect exit-status 3 "no trace was written"

# Environment handed to the program.
gp run -v -o 'o-%p' --trace kernel,api --graph-trace=graph --flush-interval=250 ./fakeapp 5
expect env-exit-status 5
want="GPUPROF_OUTPUT=$tmp/o-%p
GPUPROF_TRACE=kernel,api
GPUPROF_GRAPH_TRACE=graph
GPUPROF_FLUSH_MS=250
GPUPROF_VERBOSE=1
LD_PRELOAD=$fake_lib
CUDA_INJECTION64_PATH=$fake_lib
NVTX_INJECTION64_PATH=$fake_lib"
missing=""
while IFS= read -r line; do
	grep -qxF -- "$line" env.txt || missing+=" $line"
done <<<"$want"
if [ -n "$missing" ]; then
	fail env "missing:$missing"
elif grep -q '^GPUPROF_FORCE=' env.txt; then
	fail env "GPUPROF_FORCE set without -f"
elif ! grep -q '^GPUPROF_SESSION_FILE=/' env.txt; then
	fail env "no GPUPROF_SESSION_FILE"
else
	ok env
fi

# The metrics options; a relative cache directory becomes absolute.
gp run -o 'm-%p' --metrics --metrics-kernels='^gemm' --metrics-launches=3 \
	--metrics-nvtx=step --metrics-cache=mcache --metrics-replay=launches ./fakeapp
expect metrics-env-status 0
want="GPUPROF_METRICS=roofline
GPUPROF_METRICS_KERNELS=^gemm
GPUPROF_METRICS_LAUNCHES=3
GPUPROF_METRICS_NVTX=step
GPUPROF_METRICS_CACHE=$tmp/mcache
GPUPROF_METRICS_REPLAY=launches"
missing=""
while IFS= read -r line; do
	grep -qxF -- "$line" env.txt || missing+=" $line"
done <<<"$want"
judge metrics-env "missing:$missing" test -z "$missing"
gp run --metrics-cache= ./fakeapp
expect metrics-cache-empty 2 "--metrics-cache needs a directory"
gp run --metrics --metrics-replay=application ./fakeapp
expect metrics-replay-bad 2 "--metrics-replay must be kernel or launches"

# The GPU over time: bare options take their defaults, the interval is
# read in microseconds, and --gpu-metrics refuses --metrics.
gp run -o 'g-%p' --gpu-metrics --gpu-metrics-interval=250us --gpu-telemetry ./fakeapp
expect gpu-env-status 0
missing=""
for line in GPUPROF_GPU_METRICS=default GPUPROF_GPU_METRICS_INTERVAL_US=250 GPUPROF_GPU_TELEMETRY=100; do
	grep -qxF -- "$line" env.txt || missing+=" $line"
done
judge gpu-env "missing:$missing" test -z "$missing"
gp run -o 'g-%p' --gpu-metrics=dram__bytes_read.sum.per_second --gpu-metrics-interval=2ms --gpu-telemetry=50 ./fakeapp
missing=""
for line in GPUPROF_GPU_METRICS=dram__bytes_read.sum.per_second GPUPROF_GPU_METRICS_INTERVAL_US=2000 GPUPROF_GPU_TELEMETRY=50; do
	grep -qxF -- "$line" env.txt || missing+=" $line"
done
judge gpu-env-values "missing:$missing" test -z "$missing"
gp run --gpu-metrics --metrics ./fakeapp
expect gpu-metrics-with-metrics 2 "--gpu-metrics and --metrics do not go together"
gp run --gpu-metrics --gpu-metrics-interval=10us ./fakeapp
expect gpu-interval-bad 2 "--gpu-metrics-interval needs 20us to 1s"
gp run --gpu-telemetry=5 ./fakeapp
expect gpu-telemetry-bad 2 "--gpu-telemetry needs milliseconds from 10 to 60000"
# The opt-in queries: util and gpm, beside a period or alone (the default period).
gp run -o 'g-%p' --gpu-telemetry=gpm ./fakeapp
judge gpu-telemetry-gpm "env: $(grep GPUPROF_GPU_TELEMETRY env.txt)" grep -qxF GPUPROF_GPU_TELEMETRY=100,gpm env.txt
gp run -o 'g-%p' --gpu-telemetry=util,50,gpm ./fakeapp
judge gpu-telemetry-set "env: $(grep GPUPROF_GPU_TELEMETRY env.txt)" grep -qxF GPUPROF_GPU_TELEMETRY=50,util,gpm env.txt
for bad in 50,60 50,power 50, gpm,5; do
	gp run --gpu-telemetry=$bad ./fakeapp
	expect "gpu-telemetry-bad-$bad" 2 "--gpu-telemetry needs milliseconds from 10 to 60000 and util or gpm"
done

# %q{VAR} values are one path component, as the recorder expands them
# ('/' becomes '_', "." and ".." become "_"), so a template that starts with
# %q{...} is relative too and names gpuprof's directory, also for a program
# that starts its CUDA process elsewhere.  qapp expands like the recorder.
cat >qapp <<'EOF2'
#!/usr/bin/env bash
v=${RANK-}
case $v in . | ..) v=_ ;; esac
f=${GPUPROF_OUTPUT//'%q{RANK}'/${v//\//_}}.gpuprof
: >"$f"
echo "$PWD/$f" >>"$GPUPROF_SESSION_FILE"
EOF2
chmod +x qapp
mkdir -p sub
for rank in ../../x /abs/path .. .; do
	case $rank in
	../../x) want=.._.._x ;;
	/abs/path) want=_abs_path ;;
	*) want=_ ;;
	esac
	rm -f -- "$want-t.gpuprof" sub/*.gpuprof
	RANK=$rank gp run --report=none -o '%q{RANK}-t' sh -c 'cd sub && exec ../qapp'
	if [ "$rc" != 0 ]; then
		fail "q-value-$rank" "exit status $rc; stderr: $err"
	elif [ ! -e "$want-t.gpuprof" ]; then
		fail "q-value-$rank" "no $tmp/$want-t.gpuprof; stderr: $err; sub: $(ls sub)"
	else
		ok "q-value-$rank"
	fi
done

# Report: analyzer called once with the deduplicated file, after the
# program's output and a blank line.
rm -f analyze.log
gp run -o rep ./fakeapp
expect report-exit 0 "trace written to $tmp/rep.gpuprof"
if [ "$(cat analyze.log)" != "report $tmp/rep.gpuprof" ]; then
	fail report-args "analyzer called with: $(cat analyze.log)"
elif [ "$out" != "program output

REPORT report $tmp/rep.gpuprof" ]; then
	fail report-stdout "stdout: $out"
else
	ok report-args
fi

rm -f analyze.log
gp run -f -o rep --report=timeline ./fakeapp
judge report-timeline "analyzer called with: $(cat analyze.log 2>/dev/null)" \
	[ "$(cat analyze.log 2>/dev/null)" = "report --timeline $tmp/rep.gpuprof" ]

rm -f analyze.log
gp run -f -o rep --report=none ./fakeapp
if [ -e analyze.log ]; then
	fail report-none "analyzer was called"
else
	expect report-none 0 "trace written to $tmp/rep.gpuprof"
fi

# Overwrite protection.
: >exists.gpuprof
gp run -o exists true
expect refuse-existing 2 "exists (use -f to overwrite)"
gp run -o exists.gpuprof true
expect refuse-existing-ext 2 "exists (use -f to overwrite)"
gp run -f -o exists ./fakeapp
expect force 0
judge force-env "GPUPROF_FORCE=1 not set" grep -qx 'GPUPROF_FORCE=1' env.txt
gp run -o 'exists-%p' true
expect no-refuse-with-pid 0

# Existing LD_PRELOAD kept, after the recorder.  (The analyzer checks the
# template under that LD_PRELOAD: a sanitizer build must not refuse it.)
rm -f env.txt
LD_PRELOAD=$fake_lib ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0 \
	gp run ./fakeapp
judge ld-preload-prepend "$(grep LD_PRELOAD env.txt)" \
	grep -qx "LD_PRELOAD=$fake_lib:$fake_lib" env.txt

# Someone else's injection library wins, with a warning.
CUDA_INJECTION64_PATH=/opt/other/libinject.so gp run -f -o rep ./fakeapp
if ! grep -qx 'CUDA_INJECTION64_PATH=/opt/other/libinject.so' env.txt; then
	fail injection-kept "$(grep CUDA_INJECTION64_PATH env.txt)"
else
	expect injection-kept 0 "CUDA_INJECTION64_PATH is already set"
fi

# Death by signal: 128+N and a message.
gp run sh -c 'kill -TERM $$'
expect signal-exit 143 "was killed by signal 15 (TERM)"
gp run sh -c 'kill -SEGV $$'
if [[ $err == *"Segmentation fault"* ]]; then
	fail signal-quiet "the shell's own crash message leaked: $err"
else
	expect signal-segv 139 "signal 11 (SEGV)"
fi

# A program that dies still gets its report.
rm -f analyze.log
gp run -f -o rep sh -c './fakeapp; kill -KILL $$'
expect killed-reported 137 "signal 9 (KILL)"
judge killed-report-args "analyzer called with: $(cat analyze.log 2>/dev/null)" \
	[ "$(cat analyze.log 2>/dev/null)" = "report $tmp/rep.gpuprof" ]

# SIGINT, SIGTERM and SIGHUP sent to the wrapper reach the program, which
# finishes its trace; the wrapper waits for it, reports on the trace and
# exits with the program's status.  With the stub runner and the real one.
cat >trapapp <<'EOF2'
#!/bin/sh
trap 'echo "$GPUPROF_OUTPUT.gpuprof" >>"$GPUPROF_SESSION_FILE"; exit 7' INT TERM HUP
: >"$GPUPROF_OUTPUT.gpuprof"
echo $$ >ready
while :; do sleep 0.05; done
EOF2
chmod +x trapapp
# A background job of a script starts with SIGINT ignored, and bash cannot
# trap a signal ignored at its start: sigdfl starts the wrapper as a shell
# at a terminal would, with the default actions.
cat >sigdfl.c <<'EOF2'
#include <signal.h>
#include <unistd.h>
int main(int argc, char **argv)
{
	(void)argc;
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	execvp(argv[1], argv + 1);
	return 127;
}
EOF2
sigdfl=$tmp/sigdfl
${CC:-cc} -o sigdfl sigdfl.c 2>/dev/null || sigdfl=""
real=$build/bin/gpuprof-analyze
for runner in stub real; do
	[ "$runner" = stub ] || [ -x "$real" ] || {
		echo "skip - wrapper signal-forward-real # $real not built"
		continue
	}
	for sig in INT TERM HUP; do
		name=signal-forward-$sig
		[ "$runner" = stub ] || name+=-real
		if [ "$sig" = INT ] && [ -z "$sigdfl" ]; then
			echo "skip - wrapper $name # no C compiler to start it with SIGINT not ignored"
			continue
		fi
		rm -f ready analyze.log fwd.gpuprof
		if [ "$runner" = real ]; then
			GPUPROF_ANALYZE=$real $sigdfl "$gpuprof" run --report=none -o fwd ./trapapp >out 2>err &
		else
			$sigdfl "$gpuprof" run -o fwd ./trapapp >out 2>err &
		fi
		wpid=$!
		for _ in $(seq 200); do
			[ -e ready ] && break
			sleep 0.05
		done
		kill -"$sig" "$wpid"
		for _ in $(seq 100); do
			kill -0 "$wpid" 2>/dev/null || break
			sleep 0.05
		done
		if kill -0 "$wpid" 2>/dev/null; then
			fail "$name" "the wrapper did not end within 5 s of SIG$sig"
			kill -KILL "$(cat ready)" "$wpid"
			wait "$wpid"
			continue
		fi
		wait "$wpid"
		rc=$?
		err=$(cat err)
		if [ "$rc" != 7 ]; then
			fail "$name" "exit status $rc, expected 7; stderr: $(head -c 300 err)"
		elif [[ $err == *"killed by signal"* ]]; then
			fail "$name" "reported as killed: $err"
		elif [[ $err != *"trace written to $tmp/fwd.gpuprof"* ]]; then
			fail "$name" "no trace reported: $err"
		elif [ "$runner" = stub ] && [ "$(cat analyze.log 2>/dev/null)" != "report $tmp/fwd.gpuprof" ]; then
			fail "$name" "analyzer called with: $(cat analyze.log 2>/dev/null)"
		else
			ok "$name"
		fi
	done
done

# The program reads the wrapper's stdin.
# shellcheck disable=SC2016 # expanded by the program's shell
echo hello | "$gpuprof" run sh -c 'read -r x; [ "$x" = hello ]' 2>err
rc=$?
expect stdin 0

# report/export pass everything through.
rm -f analyze.log
gp report --timeline a.gpuprof b.gpuprof
judge report-passthrough "analyzer called with: $(cat analyze.log)" \
	[ "$(cat analyze.log)" = "report --timeline a.gpuprof b.gpuprof" ]
# Measured peaks: their place goes to report (when it exists) and calibrate.
mkdir -p "$tmp/peaks"
rm -f analyze.log
GPUPROF_PEAKS_DIR=$tmp/peaks gp report a.gpuprof
judge report-peaks-dir "analyzer called with: $(cat analyze.log)" \
	[ "$(cat analyze.log)" = "report --peaks-dir $tmp/peaks a.gpuprof" ]
rm -f analyze.log
GPUPROF_PEAKS_DIR=$tmp/peaks gp export --format json a.gpuprof
judge export-peaks-dir "analyzer called with: $(cat analyze.log)" \
	[ "$(cat analyze.log)" = "export --peaks-dir $tmp/peaks --format json a.gpuprof" ]
rm -f analyze.log
GPUPROF_PEAKS_DIR=$tmp/peaks gp run -f -o rep ./fakeapp
judge run-report-peaks-dir "analyzer called with: $(cat analyze.log 2>/dev/null)" \
	[ "$(cat analyze.log 2>/dev/null)" = "report --peaks-dir $tmp/peaks $tmp/rep.gpuprof" ]
cat >calstub <<'EOF2'
#!/bin/sh
echo "$*" >"${0%/*}/calibrate.log"
EOF2
chmod +x calstub
rm -f calibrate.log
XDG_CACHE_HOME=$tmp/xdg GPUPROF_PEAKS_DIR= GPUPROF_CALIBRATE=$tmp/calstub gp calibrate --device 1
judge calibrate-args "calibrate called with: $(cat calibrate.log 2>/dev/null)" \
	[ "$(cat calibrate.log 2>/dev/null)" = "--peaks-dir $tmp/xdg/gpuprof/peaks --device 1" ]
GPUPROF_CALIBRATE=$tmp/missing gp calibrate
expect calibrate-missing 1 "gpuprof-calibrate not found"

rm -f analyze.log
gp export --format csv a.gpuprof
judge export-passthrough "analyzer called with: $(cat analyze.log)" \
	[ "$(cat analyze.log)" = "export --format csv a.gpuprof" ]
rm -f analyze.log
gp diff --fail-above 5 a.gpuprof b.gpuprof
judge diff-passthrough "analyzer called with: $(cat analyze.log)" \
	[ "$(cat analyze.log)" = "diff --fail-above 5 a.gpuprof b.gpuprof" ]

# Secure execution: the dynamic loader ignores LD_PRELOAD for a program
# whose setuid or setgid bit changes the user or group it runs as.  The
# wrapper says so exactly when the loader does ignore it, as a library that
# announces itself shows, and runs the program either way.
cat >marker.c <<'EOF2'
#include <unistd.h>
__attribute__((constructor)) static void marker(void)
{
	if (write(2, "PRELOADED\n", 10) < 0)
		return;
}
EOF2
# secure NAME SAID(0|1) PROGRAM: runs PROGRAM with the marker preloaded.
secure() {
	GPUPROF_LIB=$tmp/lib/libmarker.so gp run "$3"
	if [ "$rc" != 0 ]; then
		fail "$1" "exit status $rc; stderr: $err"
	elif [ "$2" = 1 ] && [[ $err != *"$3 is set"*"not traced"* ]]; then
		fail "$1" "not said: $err"
	elif [ "$2" = 0 ] && [[ $err == *"not traced"* ]]; then
		fail "$1" "said of a program that is preloaded: $err"
	elif [ "$2" = 1 ] && [[ $err == *PRELOADED* ]]; then
		fail "$1" "the program was preloaded after all"
	elif [ "$2" = 0 ] && [[ $err != *PRELOADED* ]]; then
		fail "$1" "the program was not preloaded: $err"
	else
		ok "$1"
	fi
}
if ! ${CC:-cc} -shared -fPIC -o lib/libmarker.so marker.c 2>/dev/null; then
	echo "skip - wrapper setuid-said # no C compiler for a preload library"
elif [[ ,$(findmnt -no OPTIONS -T . 2>/dev/null), == *,nosuid,* ]]; then
	echo "skip - wrapper setuid-said # $tmp is on a nosuid mount"
else
	cp "$(type -P true)" own-suid && chmod u+s own-suid
	secure setuid-own-not-said 0 ./own-suid
	if [ "$(id -u)" = 0 ]; then
		cp "$(type -P true)" suid-true && chown 65534 suid-true && chmod 4755 suid-true
		secure setuid-said 1 ./suid-true
	else
		other=""
		for g in $(id -G); do
			[ "$g" = "$(id -g)" ] || other=$g
		done
		if [ -n "$other" ] && cp "$(type -P true)" sgid-true && chgrp "$other" sgid-true &&
			chmod 2755 sgid-true && [ -g sgid-true ]; then
			secure setgid-said 1 ./sgid-true
		else
			echo "skip - wrapper setuid-said # not root and no supplementary group to setgid a program to"
		fi
	fi
fi
gp run true
judge setuid-not-said-otherwise "stderr: $err" eval '! grep -q setuid err'

# With the real runner: a program that exits 130 is not reported as killed
# by SIGINT, and one that is killed by SIGINT is.
real=$build/bin/gpuprof-analyze
if [ -x "$real" ]; then
	GPUPROF_ANALYZE=$real gp run --report=none sh -c 'exit 130'
	expect exit-130-is-an-exit 130
	judge exit-130-not-a-signal "stderr: $err" eval '! grep -q "killed by signal" err'
	GPUPROF_ANALYZE=$real gp run --report=none sh -c 'kill -INT $$'
	expect killed-by-sigint 130 "killed by signal 2"
else
	echo "skip - wrapper exit-130-is-an-exit # $real not built"
fi

# A program whose processes wrote no trace (torchrun's launcher alone):
# the program's status, one line, no report.
rm -f analyze.log
gp run -o 'job-%q{RANK}' sh -c 'exit 3'
expect no-trace 3 "no trace was written"
judge no-trace-no-report "analyzer called: $(cat analyze.log 2>/dev/null)" \
	eval '[ ! -s analyze.log ] && ! grep -q "trace written" err'

# A listed trace that is gone is left out (one line), the rest reported.
cat >goneapp <<'EOF2'
#!/bin/sh
: >"$PWD/kept.gpuprof"
printf '%s\n' "$PWD/gone.gpuprof" "$PWD/kept.gpuprof" >>"$GPUPROF_SESSION_FILE"
EOF2
chmod +x goneapp
rm -f analyze.log
gp run ./goneapp
expect gone-left-out 0 "gone.gpuprof is gone; left out of the report"
judge gone-rest-reported "analyzer called: $(cat analyze.log 2>/dev/null)" \
	eval 'grep -q "kept.gpuprof" analyze.log && ! grep -q "gone.gpuprof" analyze.log &&
		[ "$(grep -c "trace written to" err)" = 1 ]'

# The session's files are in a directory of the run's own (mode 0700):
# no other user can plant a FIFO or a symlink at a name the run uses.
cat >sessapp <<'EOF2'
#!/bin/sh
d=${GPUPROF_SESSION_FILE%/*}
stat -c '%a %u' "$d" >sessdir
EOF2
chmod +x sessapp
gp run ./sessapp
judge session-private-dir "session directory: $(cat sessdir 2>/dev/null)" \
	[ "$(cat sessdir 2>/dev/null)" = "700 $(id -u)" ]

# A process that could not create its trace file (read-only directory,
# existing name, name too long): the wrapper says so, never "no process
# of the program did GPU work".
cat >failapp <<'EOF2'
#!/bin/sh
echo "!cannot create $PWD/ro/t.gpuprof: Permission denied" >>"$GPUPROF_SESSION_FILE"
EOF2
chmod +x failapp
rm -f analyze.log
gp run ./failapp
expect create-failure-told 0 "cannot create $tmp/ro/t.gpuprof: Permission denied"
judge create-failure-not-gpu-work "stderr: $err" \
	eval '[[ $err == *"could not create the file"* && $err != *"did GPU work"* ]] && [ ! -s analyze.log ]'

# A newline in -o is refused (file names are lines of the session's list).
gp run -o $'two\nlines' ./fakeapp
expect output-newline 2 "newline"

# The runner never blocks on its status file: a FIFO planted there (by
# another user, in a sticky world-writable directory) is left alone, and
# a symlink is not followed.
if [ -x "$real" ]; then
	mkdir -m 1777 sticky
	mkfifo sticky/ended
	ln -s "$tmp/victim" sticky/ended2
	echo keep >victim
	timeout -k 2 10 "$real" run-child sticky/ended "" sh -c 'exit 4'
	rc=$?
	judge runner-fifo-no-hang "exit status $rc (124 or 137: hung on the FIFO)" [ "$rc" = 4 ]
	timeout -k 2 10 "$real" run-child sticky/ended2 "" true
	judge runner-no-symlink "exit $?, victim: $(cat victim)" [ "$(cat victim)" = keep ]
	# With another user's FIFO, as root.
	if [ "$(id -u)" = 0 ] && command -v useradd >/dev/null && command -v setpriv >/dev/null; then
		u=gpft$$
		shared=$(mktemp -d /tmp/gpuprof-shared.XXXXXX) && chmod 1777 "$shared"
		if [ -n "$shared" ] && useradd -M -d /nonexistent -s /usr/sbin/nologin "$u" 2>/dev/null; then
			setpriv --reuid="$(id -u "$u")" --regid="$(id -g "$u")" --clear-groups \
				mkfifo "$shared/ended"
			timeout -k 2 10 "$real" run-child "$shared/ended" "" true
			rc=$?
			judge runner-fifo-other-user "exit status $rc; $(stat -c '%F %U' "$shared/ended")" \
				eval '[ "$rc" = 0 ] && [ -p "$shared/ended" ] && [ "$(stat -c %U "$shared/ended")" = "$u" ]'
			rm -rf "$shared"
			userdel "$u" 2>/dev/null
		else
			[ -z "$shared" ] || rm -rf "$shared"
			echo "skip - wrapper runner-fifo-other-user # useradd failed"
		fi
	else
		echo "skip - wrapper runner-fifo-other-user # needs root, useradd and setpriv"
	fi

	# SIGTERM to gpuprof run ends it: once passed on to a program that
	# ignores it, a second one ends gpuprof without waiting further.
	cat >ignapp <<'EOF2'
#!/bin/sh
trap '' TERM
echo $$ >ready
while :; do sleep 0.05; done
EOF2
	chmod +x ignapp
	rm -f ready
	GPUPROF_ANALYZE=$real "$gpuprof" run --report=none ./ignapp >out 2>err &
	wpid=$!
	for _ in $(seq 200); do
		[ -e ready ] && break
		sleep 0.05
	done
	kill -TERM "$wpid"
	sleep 0.3
	kill -0 "$wpid" 2>/dev/null
	still=$?
	kill -TERM "$wpid"
	for _ in $(seq 100); do
		kill -0 "$wpid" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$wpid" 2>/dev/null; then
		fail sigterm-twice-ends "gpuprof run still runs 5 s after a second SIGTERM"
		kill -KILL "$wpid"
	else
		wait "$wpid"
		rc=$?
		judge sigterm-twice-ends "rc $rc, waited after the first: $still; $(head -c 300 err)" \
			eval '[ "$rc" = 143 ] && [ "$still" = 0 ] && grep -q "not waiting for it" err'
	fi
	kill -KILL "$(cat ready)" 2>/dev/null
fi

# A listed trace whose name now holds another process's file (its
# identity differs from the one its recorder noted) is left out.
cat >swapapp <<'EOF2'
#!/bin/sh
: >"$PWD/mine.gpuprof"
: >"$PWD/swapped.gpuprof"
for f in mine swapped; do
	echo "@$(stat -c '%d:%i' "$PWD/$f.gpuprof") $PWD/$f.gpuprof" >>"$GPUPROF_SESSION_FILE"
	echo "$PWD/$f.gpuprof" >>"$GPUPROF_SESSION_FILE"
done
: >"$PWD/other.tmp"
mv "$PWD/other.tmp" "$PWD/swapped.gpuprof"
EOF2
chmod +x swapapp
rm -f analyze.log
gp run ./swapapp
expect swapped-left-out 0 "swapped.gpuprof is now another process's file; left out of the report"
judge swapped-rest-reported "analyzer called: $(cat analyze.log 2>/dev/null); $err" \
	eval 'grep -q "mine.gpuprof" analyze.log && ! grep -q "swapped.gpuprof" analyze.log &&
		[ "$(grep -c "trace written to" err)" = 1 ]'

exit "$failed"
