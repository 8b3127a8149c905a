#!/usr/bin/env bash
# --dask of report and export on a real Dask cluster on 127.0.0.1: a
# scheduler and two workers (dask scheduler / dask worker processes, each in
# its own session so that stopping it stops its children), started and
# stopped here.  Checks, on copies of the golden traces:
#  - export -t json --dask and report --dask give the bytes that the same
#    traces' summaries merged locally give (and --dask env reads
#    DASK_SCHEDULER_ADDRESS);
#  - the same with one worker killed (SIGKILL to its whole process group)
#    while the tasks run: Dask runs its tasks again on the other;
#  - a trace that cannot be read is named, the others still report, and the
#    exit status is 1;
#  - report --dask --align nccl corrects the ranks' clocks as locally.
# Skips without Debian's python3-distributed.  Prints ok / not ok / skip lines.
set -u
build=${1:?usage: test/summary/dask-checks.sh BUILD_DIR}
A=$(cd "$build/bin" && pwd)/gpuprof-analyze
PY=/usr/bin/python3
if ! "$PY" -c 'import distributed' 2>/dev/null || ! command -v dask >/dev/null 2>&1; then
	echo "skip - dask # python3-distributed not installed (apt-get install --no-install-recommends python3-distributed)"
	exit 0
fi
T=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-dask.XXXXXX") || exit 1
PIDS=()
stop_all() {
	local p
	for p in "${PIDS[@]}"; do kill -TERM -- "-$p" 2>/dev/null; done
	for p in "${PIDS[@]}"; do
		for _ in $(seq 100); do kill -0 -- "-$p" 2>/dev/null || break; sleep 0.1; done
		kill -KILL -- "-$p" 2>/dev/null
	done
	PIDS=()
}
cleanup() {
	stop_all
	[ "${KEEP_LOGS:-0}" = 1 ] && echo "dask logs kept in $T" >&2 || rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
fail=0
ok() { echo "ok - dask $1"; }
bad() { echo "not ok - dask $1"; fail=1; }

start_cluster() { # NWORKERS
	rm -f "$T/scheduler.json"
	setsid dask scheduler --host 127.0.0.1 --port 0 --dashboard-address 127.0.0.1:0 \
		--scheduler-file "$T/scheduler.json" --idle-timeout 600 >"$T/scheduler.log" 2>&1 &
	PIDS+=($!)
	for _ in $(seq 300); do
		[ -s "$T/scheduler.json" ] && break
		kill -0 "${PIDS[0]}" 2>/dev/null || return 1
		sleep 0.1
	done
	[ -s "$T/scheduler.json" ] || return 1
	for i in $(seq "$1"); do
		setsid dask worker --scheduler-file "$T/scheduler.json" --host 127.0.0.1 \
			--nworkers 1 --nthreads 1 --no-dashboard --dashboard-address 127.0.0.1:0 \
			--death-timeout 60 --local-directory "$T/w$i" --name "w$i" >"$T/w$i.log" 2>&1 &
		PIDS+=($!)
	done
	ADDR=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["address"])' "$T/scheduler.json")
	timeout 90 "$PY" -c 'import sys; from distributed import Client
with Client(sys.argv[1], timeout="30s") as c: c.wait_for_workers(int(sys.argv[2]), timeout=60)' \
		"$ADDR" "$1"
}

# Copies of the golden traces: one job of many ranks' files.
mkdir -p "$T/jobs"
i=0
for r in 0 1 2; do
	for g in test/golden/*.gpuprof; do
		cp "$g" "$T/jobs/job-$(printf %03d $i).gpuprof"
		i=$((i + 1))
	done
done
N=$i
"$A" summarize -o "$T/local.sum" "$T"/jobs/job-*.gpuprof || bad "local summarize failed"
"$A" export -t json -o "$T/local.json" "$T/local.sum"
"$A" report --no-timeline "$T/local.sum" >"$T/local.txt" 2>"$T/local.err"
"$A" export -t json -o "$T/direct.json" "$T"/jobs/job-*.gpuprof 2>/dev/null
# Copies of one trace share its GPU: findings scanned part by part, said in a warning.
fopt=()
grep -q 'a GPU is in several parts' "$T/local.err" && fopt=(--no-findings)
python3 test/summary/compare.py "$T/direct.json" "$T/local.json" "${fopt[@]}" >"$T/cmp" &&
	ok "the local merge equals the $N traces read together where summaries hold them" ||
	bad "local merge vs traces: $(head -3 "$T/cmp")"

if ! start_cluster 2; then
	bad "the cluster did not start: $(tail -3 "$T/scheduler.log")"
	exit 1
fi
start=$(date +%s%N)
if "$A" export -t json --dask "$ADDR" -o "$T/dask.json" "$T/jobs/job-*.gpuprof" 2>"$T/err" &&
   cmp -s "$T/local.json" "$T/dask.json" && grep -q "\"parts\":$N" "$T/dask.json"; then
	ok "export -t json of $N traces on 2 workers equals the local merge ($(( ($(date +%s%N) - start) / 1000000 )) ms)"
else
	bad "export --dask: $(head -3 "$T/err")"
fi
if "$A" report --no-timeline --dask "$ADDR" "$T/jobs/job-*.gpuprof" >"$T/dask.txt" 2>"$T/err" &&
   cmp -s "$T/local.txt" "$T/dask.txt"; then
	ok "report --dask equals the local report of the summaries"
else
	bad "report --dask: $(head -3 "$T/err")"
fi
# --align nccl: the NCCL job's clocks corrected from the collectives the parts carry.
NJ=test/golden/ranks_nccl
"$A" report --no-timeline --align nccl "$NJ/job-0.gpuprof" "$NJ/job-1.gpuprof" >"$T/nccl.loc.txt" 2>/dev/null
if "$A" report --no-timeline --align nccl --dask "$ADDR" "$PWD/$NJ/job-*.gpuprof" >"$T/nccl.dask.txt" \
	2>"$T/err" && grep -q '^rank 1 | *+789 ns' "$T/nccl.dask.txt" &&
   diff <(sed -n '/^Clock alignment (/,/^$/p;/^Wall span/p' "$T/nccl.loc.txt") \
	<(sed -n '/^Clock alignment (/,/^$/p;/^Wall span/p' "$T/nccl.dask.txt") >"$T/cmp"; then
	ok "report --dask --align nccl corrects the clocks as the local report does"
else
	bad "report --dask --align nccl: $(head -3 "$T/err" "$T/cmp")"
fi
if DASK_SCHEDULER_ADDRESS=$ADDR "$A" export -t json --dask env -o "$T/env.json" "$T/jobs/job-*.gpuprof" \
	2>"$T/err" && cmp -s "$T/local.json" "$T/env.json"; then
	ok "--dask env takes DASK_SCHEDULER_ADDRESS"
else
	bad "--dask env: $(head -3 "$T/err")"
fi

# A worker killed while the tasks run.  Slower tasks: each trace's summary
# sleeps 0.2 s in a wrapper of the analyzer, so that the kill lands mid-run.
cat >"$T/slow-analyze" <<EOS
#!/bin/sh
[ "\$1" = summarize ] && sleep 0.2
exec "$A" "\$@"
EOS
chmod +x "$T/slow-analyze"
"$PY" "$build/bin/gpuprof-dask.py" --analyze "$T/slow-analyze" --scheduler "$ADDR" \
	-o "$T/killed.sum" "$T/jobs/job-*.gpuprof" 2>"$T/err" &
drv=$!
sleep 1.5
if kill -0 "$drv" 2>/dev/null; then
	kill -KILL -- "-${PIDS[1]}" 2>/dev/null
	wait "${PIDS[1]}" 2>/dev/null
	killed=1
else
	killed=0
fi
wait "$drv"
rc=$?
"$A" export -t json -o "$T/killed.json" "$T/killed.sum" 2>/dev/null
if [ $killed = 1 ] && [ $rc = 0 ] && cmp -s "$T/local.json" "$T/killed.json"; then
	ok "worker w1 killed mid-run: its tasks ran again on w2, same JSON"
elif [ $killed = 0 ]; then
	bad "worker kill: the run ended before the kill (too fast to test)"
else
	bad "worker kill: rc $rc $(head -3 "$T/err")"
fi

# A trace that cannot be read: named, the rest reported, exit status 1.
head -c 4096 /dev/urandom >"$T/jobs/job-999.gpuprof"
"$A" export -t json --dask "$ADDR" -o "$T/miss.json" "$T/jobs/job-*.gpuprof" 2>"$T/err"
rc=$?
if [ $rc = 1 ] && grep -q "job-999.gpuprof: not summarized, missing from the report" "$T/err" &&
   grep -q "1 of $((N + 1)) traces missing" "$T/err" && cmp -s "$T/local.json" "$T/miss.json"; then
	ok "a trace that is not one is named; the $N others still reported (exit 1)"
else
	bad "missing trace: rc $rc $(head -3 "$T/err")"
fi
DASK_DISTRIBUTED__COMM__TIMEOUTS__CONNECT=2s \
	"$A" report --dask "tcp://127.0.0.1:1" "$T/jobs/job-000.gpuprof" >/dev/null 2>"$T/err" &&
	bad "no scheduler: succeeded" ||
	{ grep -q "cannot connect to the scheduler" "$T/err" && ok "no scheduler at the address: said" ||
	  bad "no scheduler: $(head -2 "$T/err")"; }
stop_all
exit $fail
