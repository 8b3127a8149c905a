#!/usr/bin/env bash
# NVTX checks of the analyzer on traces recorded on a real GPU: range
# counts and inclusive kernel counts that the recorded programs fix
# (test/apps/torch_nvtx.py, test/apps/nvtx_threads.cu, test/apps/capture
# "nvtx all"), and the --nvtx
# filter, read from "export --format json" and "--format csv".
#
# usage: test/golden/nvtx-checks.sh BUILD_DIR
# Prints "ok - nvtx NAME" or "not ok - nvtx NAME: why" per check; exits 1
# if any failed.  Without python3: one "skip" line.
set -u

build=${1:?usage: $0 BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
case $build in /*) ;; *) build=$PWD/$build ;; esac
analyze=$build/bin/gpuprof-analyze

if ! command -v python3 >/dev/null 2>&1; then
	echo "skip - nvtx checks # python3 not found"
	exit 0
fi
if [ ! -x "$analyze" ]; then
	echo "not ok - nvtx checks: $analyze is not built"
	exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-nvtx.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# check TRACE SPEC [EXPORT OPTIONS...]: SPEC is "range NAME COUNT KERNELS",
# "mark NAME COUNT", "kept KERNELS" (kernels left by the options) or
# "csv NAME ROWS" (CSV rows whose nvtx column is NAME).
check() {
	local trace=$here/$1 spec=$2 fmt=json
	shift 2
	case $spec in csv*) fmt=csv ;; esac
	if [ ! -f "$trace" ]; then
		echo "skip - nvtx $spec # $(basename "$trace") missing"
		return
	fi
	if ! "$analyze" export --format $fmt "$@" "$trace" >"$tmp/out" 2>"$tmp/err"; then
		echo "not ok - nvtx $spec: export failed: $(head -n 1 "$tmp/err")"
		failed=1
		return
	fi
	# shellcheck disable=SC2086 # spec is words on purpose
	python3 - "$tmp/out" $spec "$@" <<'PY' || failed=1
import csv, json, sys
path, what, *args = sys.argv[1:]
try:
    if what == "csv":
        name, rows = args[0], int(args[1])
        got = sum(1 for r in csv.DictReader(open(path)) if r["nvtx"] == name)
        label, ok, why = f"csv {name}", got == rows, f"{got} rows, want {rows}"
    else:
        d = json.load(open(path))
        if what == "range":
            name, count, kernels = args[0], int(args[1]), int(args[2])
            r = [x for x in d["nvtx"] if x["name"] == name]
            label = name
            if len(r) != 1:
                ok, why = False, f"{len(r)} entries named {name}"
            else:
                r = r[0]
                ok = r["count"] == count and r["kernels"] == kernels
                why = f"count {r['count']} kernels {r['kernels']}, want {count} and {kernels}"
        elif what == "mark":
            name, count = args[0], int(args[1])
            got = sum(x["count"] for x in d["marks"] if x["name"] == name)
            label, ok, why = f"mark {name}", got == count, f"count {got}, want {count}"
        else:
            kernels, opts = int(args[0]), " ".join(args[1:])
            got = d["counts"]["kernel"]
            label, ok, why = f"filter {opts}", got == kernels, f"kept {got} kernels, want {kernels}"
except Exception as e:  # a missing key, a bad document
    label, ok, why = " ".join([what] + args[:1]), False, f"{type(e).__name__}: {e}"
print(f"ok - nvtx {label}" if ok else f"not ok - nvtx {label}: {why}")
sys.exit(0 if ok else 1)
PY
}

check torch_nvtx.gpuprof "range forward 3 30"
check torch_nvtx.gpuprof "range step 3 30"
check torch_nvtx.gpuprof "range startend 1 5"
check torch_nvtx.gpuprof "mark step_done 3"
check torch_nvtx.gpuprof "csv forward 30"
check torch_nvtx.gpuprof "kept 30" --nvtx '^step$'
check torch_nvtx.gpuprof "kept 5" --nvtx startend
check torch_nvtx.gpuprof "range before_cuda 1 1"
# test/apps/nvtx_threads: a range opened before cuInit, one ended on another
# thread, a domain range, and a graph captured in one range, replayed in another.
check nvtx_threads.gpuprof "range app 1 23"
check nvtx_threads.gpuprof "range xthread 1 5"
check nvtx_threads.gpuprof "range dom_range 1 2"
check nvtx_threads.gpuprof "range graph_capture 1 6"
check nvtx_threads.gpuprof "range graph_replay 1 0"
check nvtx_threads.gpuprof "mark done 1"
check nvtx_threads.gpuprof "kept 6" --nvtx '^graph_capture$'
check capture_all.gpuprof "range capture 2 12"
check capture_all.gpuprof "range inner 1 3"
check capture_all.gpuprof "kept 3" --nvtx '^inner$'
check capture_all.gpuprof "kept 10" --kernel '^k_outside$'
exit $failed
