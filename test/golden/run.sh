#!/usr/bin/env bash
# Golden tests of the offline analyzer.  Each test/golden/NAME.gpuprof is a
# trace recorded on a real GPU; its expected outputs sit beside it:
#   NAME.report.txt   gpuprof-analyze report --timeline --no-symbolize NAME.gpuprof
#   NAME.json         gpuprof-analyze export --format json --no-symbolize NAME.gpuprof
#   NAME.tree.txt     (where present) report --no-timeline --no-symbolize --tree
# and the Chrome export of each trace, and of all merged, is checked the way
# Perfetto reads it (chrome-checks.py: exact times, no overlaps, paired flows;
# nest-checks.py: every track's slices nest), and so is the Perfetto
# protobuf export (perfetto-checks.py: decoded by protoc against the schema
# subset in perfetto/, replayed as Perfetto imports it: nesting, counts,
# exact times, flows; skipped without protoc),
# and every key of the JSON exports is documented (json-doc-checks.py).
# synth_mix.gpuprof is not recorded but written by `bench/synth_trace --mix
# 3000` (launches with API calls, copies, memsets, allocations and frees,
# hardware metrics of profiled launches).  synth_overtime.gpuprof is written by
# `bench/synth_trace --gpu-samples 2` (test/apps/overtime.cu's copy and FMA
# phases with PM samples and NVML telemetry that follow its kernels);
#   NAME.gpu_metrics.csv  (where present) export --format csv --table gpu_metrics
# and the samples of every *overtime*.gpuprof must switch at its phases'
# boundaries (test/gpu/overtime_check.py).  A trace recorded on a GPU joins
# them as overtime_gpu.gpuprof: test/gpu/run.py overtime keeps its trace there
# with GPUPROF_GOLDEN_KEEP=test/golden; then regenerate its expected files.
# So does torch-emit-nvtx, as torch_emit_nvtx.gpuprof (PyTorch's emit_nvtx():
# ranges on the main thread and on autograd's, which test_nvtx folds).
# and the roofline chart of each trace with hardware metrics as a person
# reads it (svg-checks.py: well-formed, the ceilings, one dot per kernel).
# The trace is run from this directory under its bare name and that name is
# masked, so the outputs do not depend on where the tree lives.  Each trace
# is then read from a pipe too ("-" and /dev/stdin), for the same outputs.
#
# usage: test/golden/run.sh BUILD_DIR
#   GOLDEN_REGENERATE=1 test/golden/run.sh build   rewrites the expected files
# Prints "ok - golden NAME" or "not ok - golden NAME: why" plus a unified
# diff (as "# " lines) per trace; exits 1 if any failed.  No traces: no
# output, exit 0.
set -u

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
analyze=$build/bin/gpuprof-analyze

shopt -s nullglob
traces=("$here"/*.gpuprof)
[ ${#traces[@]} -gt 0 ] || exit 0
if [ ! -x "$analyze" ]; then
	echo "not ok - golden: $analyze is not built"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-golden.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# Replace every occurrence of the literal string $1 by $2 (no regex).
mask() {
	awk -v from="$1" -v to="$2" '{
		out = ""
		while ((i = index($0, from)) > 0) {
			out = out substr($0, 1, i - 1) to
			$0 = substr($0, i + length(from))
		}
		print out $0
	}'
}

failed=0
for trace in "${traces[@]}"; do
	file=$(basename "$trace")
	name=${file%.gpuprof}
	why=""
	diffs=""
	kinds="report json"
	[ ! -f "$here/$name.tree.txt" ] || kinds+=" tree"
	[ ! -f "$here/$name.gpu_metrics.csv" ] || kinds+=" gpu_metrics"
	for kind in $kinds; do
		if [ $kind = report ]; then
			expected=$here/$name.report.txt
			args=(report --timeline --no-symbolize)
		elif [ $kind = tree ]; then
			expected=$here/$name.tree.txt
			args=(report --no-timeline --no-symbolize --tree)
		elif [ $kind = gpu_metrics ]; then
			expected=$here/$name.gpu_metrics.csv
			args=(export --format csv --table gpu_metrics --no-symbolize)
		else
			expected=$here/$name.json
			args=(export --format json --no-symbolize)
		fi
		actual=$tmp/$name.$kind
		(cd "$here" && "$analyze" "${args[@]}" "$file") 2>"$tmp/stderr" |
			mask "$file" "TRACE.gpuprof" >"$actual"
		rc=${PIPESTATUS[0]}
		if [ "$rc" -ne 0 ]; then
			why="${why:+$why; }$kind exited $rc: $(head -c 300 "$tmp/stderr")"
			continue
		fi
		if [ "${GOLDEN_REGENERATE:-0}" = 1 ]; then
			cp "$actual" "$expected"
			continue
		fi
		if [ ! -f "$expected" ]; then
			why="${why:+$why; }no ${expected#$here/} (run with GOLDEN_REGENERATE=1)"
			continue
		fi
		if ! d=$(diff -u --label "expected/${expected#$here/}" --label "actual" \
			"$expected" "$actual"); then
			why="${why:+$why; }$kind differs"
			diffs+=$d$'\n'
		fi
	done
	if [ -n "$why" ]; then
		echo "not ok - golden $name: $why"
		[ -z "$diffs" ] || printf '%s' "$diffs" | sed 's/^/# /'
		failed=1
	elif [ "${GOLDEN_REGENERATE:-0}" = 1 ]; then
		echo "ok - golden $name (expected files regenerated)"
	else
		echo "ok - golden $name"
	fi
done

# The same outputs with the trace on standard input ("-") and through a
# pipe named like a file (/dev/stdin): a pipe can be read only once, while
# a trace with NVTX ranges is read twice.
if [ "${GOLDEN_REGENERATE:-0}" != 1 ]; then
	for trace in "${traces[@]}"; do
		file=$(basename "$trace")
		name=${file%.gpuprof}
		why=""
		diffs=""
		for how in - /dev/stdin; do
			shown=$how
			[ "$how" = - ] && shown="(stdin)"
			for kind in report json; do
				if [ $kind = report ]; then
					expected=$here/$name.report.txt
					args=(report --timeline --no-symbolize)
				else
					expected=$here/$name.json
					args=(export --format json --no-symbolize)
				fi
				[ -f "$expected" ] || continue
				actual=$tmp/$name.pipe.$kind
				cat "$trace" | "$analyze" "${args[@]}" "$how" 2>"$tmp/stderr" |
					mask "$shown" "TRACE.gpuprof" >"$actual"
				rc=${PIPESTATUS[1]}
				if [ "$rc" -ne 0 ]; then
					why="${why:+$why; }$kind $how exited $rc: $(head -c 300 "$tmp/stderr")"
					continue
				fi
				if ! d=$(diff -u --label "expected/${expected#$here/}" \
					--label "actual ($how)" "$expected" "$actual"); then
					why="${why:+$why; }$kind $how differs"
					diffs+=$d$'\n'
				fi
			done
		done
		if [ -n "$why" ]; then
			echo "not ok - golden $name from a pipe: $why"
			[ -z "$diffs" ] || printf '%s' "$diffs" | sed 's/^/# /'
			failed=1
		else
			echo "ok - golden $name from a pipe"
		fi
	done
fi

# Chrome exports as Perfetto reads them (test/golden/chrome-checks.py): of
# each trace, and of all of them merged.
if [ "${GOLDEN_REGENERATE:-0}" != 1 ]; then
	for set in "${traces[@]}" all; do
		if [ "$set" = all ]; then
			inputs=("${traces[@]}")
			name=merged
		else
			inputs=("$set")
			name=$(basename "$set" .gpuprof)
		fi
		if ! "$analyze" export --format chrome --no-symbolize -o "$tmp/c.json" "${inputs[@]}" ||
			! "$analyze" export --format csv --no-symbolize -o "$tmp/c.csv" "${inputs[@]}" ||
			! "$analyze" export --format json --no-symbolize -o "$tmp/c.report.json" "${inputs[@]}"; then
			echo "not ok - golden $name chrome: export failed"
			failed=1
			continue
		fi
		out=$(python3 "$here/chrome-checks.py" "$tmp/c.json" "$tmp/c.csv" "$tmp/c.report.json")
		rc=$?
		printf '%s\n' "$out" | sed "s|$tmp/c.json|$name|"
		[ "$rc" = 0 ] || failed=1
		python3 "$here/nest-checks.py" "$tmp/c.json" "$name" || failed=1
		# The Perfetto protobuf export, decoded by protoc (skip without it).
		if ! "$analyze" export --format perfetto --no-symbolize -o "$tmp/c.pftrace" \
			"${inputs[@]}"; then
			echo "not ok - perfetto $name: export failed"
			failed=1
			continue
		fi
		python3 "$here/perfetto-checks.py" "$tmp/c.pftrace" "$tmp/c.csv" "$tmp/c.report.json" \
			"$name" || failed=1
	done
	# Every key of the expected JSON exports is documented in docs/JSON.md.
	python3 "$here/json-doc-checks.py" || failed=1
fi
# Roofline charts (report --roofline-svg) of the traces recorded with
# --metrics, against their JSON export (test/golden/svg-checks.py).
if [ "${GOLDEN_REGENERATE:-0}" != 1 ]; then
	for trace in "${traces[@]}"; do
		name=$(basename "$trace" .gpuprof)
		"$analyze" export --format json --no-symbolize "$trace" >"$tmp/s.json" 2>/dev/null || continue
		grep -q '"metrics":' "$tmp/s.json" || continue
		if ! "$analyze" report --no-timeline --spec-peaks --roofline-svg "$tmp/s.svg" "$trace" \
			>/dev/null 2>"$tmp/stderr"; then
			echo "not ok - svg $name: report --roofline-svg failed: $(head -c 300 "$tmp/stderr")"
			failed=1
			continue
		fi
		python3 "$here/svg-checks.py" "$tmp/s.svg" "$tmp/s.json" "$name" || failed=1
	done
fi
# The GPU over time of the overtime program's traces against their kernels.
if [ "${GOLDEN_REGENERATE:-0}" != 1 ]; then
	for trace in "$here"/*overtime*.gpuprof; do
		python3 "$here/../gpu/overtime_check.py" "$analyze" "$trace" || failed=1
	done
fi
# pprof and Prometheus exports as go tool pprof and promtool read them.
if [ "${GOLDEN_REGENERATE:-0}" != 1 ]; then
	bash "$here/fleet-checks.sh" "$build" || failed=1
fi
# The sample outputs of README.md and docs/ against the expected reports
# (after a regeneration too: a changed report shows where the docs drifted).
python3 "$here/doc-samples-check.py" || failed=1
exit $failed
