#!/usr/bin/env bash
# Shows gpuprof on a bundled CUDA program, or, on a machine without an NVIDIA
# GPU, the report of a trace recorded on one.
#
#   scripts/demo.sh BUILD_DIR        (make demo)

set -eu

build=${1:?usage: demo.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
gpuprof=$build/bin/gpuprof

if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	app=$build/test/apps/demo
	[ -x "$app" ] || app=$build/test/apps/basic_shared
	if [ ! -x "$app" ]; then
		echo "gpuprof demo: no demo program in $build/test/apps (run 'make apps')" >&2
		exit 1
	fi
	exec "$gpuprof" run -f -o "$build/demo" -- "$app"
fi

golden=test/golden/demo.gpuprof
echo "gpuprof demo: no NVIDIA GPU found (nvidia-smi lists none); reporting a trace recorded on a real GPU instead: $golden"
if [ ! -e "$root/$golden" ]; then
	echo "gpuprof demo: $golden is missing" >&2
	exit 1
fi
exec "$gpuprof" report --timeline "$root/$golden"
