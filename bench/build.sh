#!/usr/bin/env bash
# Builds the benchmark programs into BUILD_DIR/bench/; does nothing for
# outputs that exist and are newer than their sources.
#
#   bash bench/build.sh BUILD_DIR
#
# Environment: CUDA_HOME (/usr/local/cuda), NVCC, CC (cc), NVCC_ARCH.
# Exits 1 if anything failed to build; what did build stays usable.
set -u

here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build=${1:-build}
out=$build/bench
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
NVCC=${NVCC:-$CUDA_HOME/bin/nvcc}
CC=${CC:-cc}
# sm_90 (H100/H200) SASS plus PTX so newer GPUs JIT.
NVCC_ARCH=${NVCC_ARCH:--gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90}
CWARN="-Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes"

mkdir -p "$out" || exit 1
failed=0

# up_to_date OUTPUT SOURCE...: true when OUTPUT exists and no SOURCE is newer.
up_to_date() {
	local o=$1 s
	shift
	[ -e "$o" ] || return 1
	for s in "$@"; do
		[ "$s" -nt "$o" ] && return 1
	done
	return 0
}

# build OUTPUT TOOL "SOURCES" COMMAND...: runs COMMAND unless up to date.  A
# missing compiler keeps an existing (possibly carried, prebuilt) output.
build() {
	local o=$1 tool=$2 srcs=$3
	shift 3
	# shellcheck disable=SC2086
	up_to_date "$o" $srcs && return 0
	if ! command -v "$tool" >/dev/null 2>&1; then
		if [ -e "$o" ]; then
			echo "bench/build: $tool not found; keeping the existing $o" >&2
			return 0
		fi
		echo "bench/build: $tool not found; cannot build $o" >&2
		failed=1
		return 0
	fi
	printf '  %-6s %s\n' BUILD "$o" >&2
	if ! "$@"; then
		echo "bench/build: building $o failed" >&2
		rm -f "$o"
		failed=1
	fi
}

for prog in launch_loop graph_replay long_run nvtx_loop; do
	# shellcheck disable=SC2086
	build "$out/$prog" "$NVCC" "$here/$prog.cu $here/common.cuh" \
		"$NVCC" $NVCC_ARCH -O2 -Xcompiler -Wall,-Wextra -o "$out/$prog" "$here/$prog.cu" -lpthread
done

# shellcheck disable=SC2086
build "$out/libmincupti.so" "$CC" "$here/mincupti.c" \
	"$CC" -std=c11 $CWARN -O2 -fPIC -fvisibility=hidden -shared -pthread \
	-I"$CUDA_HOME/include" -o "$out/libmincupti.so" "$here/mincupti.c" \
	-L"$CUDA_HOME/lib64" -lcupti -Wl,-rpath,"$CUDA_HOME/lib64"

# shellcheck disable=SC2086
build "$out/probe_nvml" "$CC" "$here/probe_nvml.c" \
	"$CC" -std=c11 $CWARN -O2 -o "$out/probe_nvml" "$here/probe_nvml.c" -ldl
# shellcheck disable=SC2086
build "$out/libprobe_nvml.so" "$CC" "$here/probe_nvml.c" \
	"$CC" -std=c11 $CWARN -O2 -fPIC -shared -pthread -DPROBE_NVML_PRELOAD \
	-o "$out/libprobe_nvml.so" "$here/probe_nvml.c" -ldl

# The trace writer of the unit tests (test/unit/synth.c) does the chunking,
# compression and checksums.
# shellcheck disable=SC2086
build "$out/synth_trace" "$CC" \
	"$here/synth_trace.c $root/test/unit/synth.c $root/test/unit/synth.h $root/include/gpuprof/trace.h" \
	"$CC" -std=c11 -D_GNU_SOURCE $CWARN -O2 -I"$root/include" -I"$root/test/unit" \
	-o "$out/synth_trace" "$here/synth_trace.c" "$root/test/unit/synth.c" -lzstd

exit $failed
