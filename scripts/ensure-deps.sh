#!/usr/bin/env bash
# Checks that the build and the tests have what they need, and installs
# missing Debian/Ubuntu packages when run as root.  Silent when everything is
# there; safe to run any number of times.
#
#   compiler, make            gcc, libc6-dev, make
#   zstd (static + header)    libzstd-dev     (linked into libgpuprof.so)
#   PCRE2 (static + header)   libpcre2-dev    (regular expressions: linked into
#                                              libgpuprof.so, libpcre2-8 in the analyzer)
#   libunwind headers         libunwind-dev   (call stacks)
#   SQLite library + header   libsqlite3-dev  (export --format sqlite; analyzer only)
#   elfutils headers          libdw-dev, libelf-dev (frame names; libdw is loaded
#                             at run time, libdebuginfod1 too where
#                             DEBUGINFOD_URLS is set: libdebuginfod-dev)
#   sqlite3 CLI               sqlite3         (tests of the SQLite export)
#   protoc                    protobuf-compiler (tests of the Perfetto export decode
#                                              it; they skip without it)
#   python3                   python3         (tests)
#   CUDA toolkit              ${CUDA_HOME:-/usr/local/cuda}: nvcc, cupti.h
#
#   zlib (header)             zlib1g-dev      (export --format pprof: gzip)
#
#   ensure-deps.sh test-tools optional tools some tests use, skipping
#                             without them: go tool pprof (golang-go),
#                             promtool and a Prometheus server (prometheus),
#                             Dask for --dask (python3-distributed, without
#                             its recommends: 16 MB instead of 540 MB)
#   ensure-deps.sh analyzer   only what the analyzer and the wrapper need
#                             (compiler, make, zstd, SQLite): no CUDA, no
#                             libunwind; for reading traces on any machine

set -u

cuda=${CUDA_HOME:-/usr/local/cuda}
pkgs=()
only_analyzer=0
[ "${1:-}" != analyzer ] || only_analyzer=1
if [ "${1:-}" = test-tools ]; then
	tools=()
	command -v go >/dev/null 2>&1 || tools+=(golang-go)
	command -v promtool >/dev/null 2>&1 || tools+=(prometheus)
	/usr/bin/python3 -c 'import distributed' >/dev/null 2>&1 || tools+=(python3-distributed)
	[ ${#tools[@]} -eq 0 ] && exit 0
	if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
		echo "ensure-deps: optional test tools missing: ${tools[*]} (tests skip without them)" >&2
		exit 0
	fi
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq && apt-get install -y -qq --no-install-recommends "${tools[@]}" >&2
	exit $?
fi

have_file() {
	local f
	for f in "$@"; do
		[ -e "$f" ] && return 0
	done
	return 1
}

command -v "${CC:-cc}" >/dev/null 2>&1 || pkgs+=(gcc libc6-dev)
command -v make >/dev/null 2>&1 || pkgs+=(make)
command -v python3 >/dev/null 2>&1 || pkgs+=(python3)
have_file /usr/include/zstd.h /usr/local/include/zstd.h || pkgs+=(libzstd-dev)
have_file /usr/include/pcre2.h /usr/local/include/pcre2.h || pkgs+=(libpcre2-dev)
if [ "$only_analyzer" = 0 ]; then
	have_file /usr/lib/x86_64-linux-gnu/libzstd.a /usr/lib/aarch64-linux-gnu/libzstd.a \
		/usr/lib64/libzstd.a /usr/lib/libzstd.a || pkgs+=(libzstd-dev)
	have_file /usr/lib/x86_64-linux-gnu/libpcre2-8.a /usr/lib/aarch64-linux-gnu/libpcre2-8.a \
		/usr/lib64/libpcre2-8.a /usr/lib/libpcre2-8.a || pkgs+=(libpcre2-dev)
	have_file /usr/include/libunwind.h /usr/include/x86_64-linux-gnu/libunwind.h \
		/usr/include/aarch64-linux-gnu/libunwind.h || pkgs+=(libunwind-dev)
fi
have_file /usr/include/sqlite3.h /usr/local/include/sqlite3.h || pkgs+=(libsqlite3-dev)
have_file /usr/include/zlib.h /usr/local/include/zlib.h || pkgs+=(zlib1g-dev)
have_file /usr/include/elfutils/libdwfl.h || pkgs+=(libdw-dev libelf-dev)
have_file /usr/include/elfutils/debuginfod.h || pkgs+=(libdebuginfod-dev)
command -v sqlite3 >/dev/null 2>&1 || pkgs+=(sqlite3)
[ "$only_analyzer" = 1 ] || command -v protoc >/dev/null 2>&1 || pkgs+=(protobuf-compiler)

if [ ${#pkgs[@]} -gt 0 ]; then
	mapfile -t pkgs < <(printf '%s\n' "${pkgs[@]}" | awk '!seen[$0]++')
	cmd="apt-get update && apt-get install -y --no-install-recommends ${pkgs[*]}"
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "ensure-deps: missing build dependencies; the Debian names are: ${pkgs[*]}" >&2
		echo "ensure-deps: install their equivalents with your package manager" >&2
		exit 1
	fi
	if [ "$(id -u)" != 0 ]; then
		echo "ensure-deps: missing packages: ${pkgs[*]}" >&2
		echo "ensure-deps: run as root: $cmd" >&2
		exit 1
	fi
	echo "ensure-deps: installing ${pkgs[*]}" >&2
	export DEBIAN_FRONTEND=noninteractive
	if ! { apt-get update -qq && apt-get install -y -qq --no-install-recommends "${pkgs[@]}"; } >&2; then
		echo "ensure-deps: '$cmd' failed" >&2
		exit 1
	fi
fi

[ "$only_analyzer" = 0 ] || exit 0
missing=""
[ -x "$cuda/bin/nvcc" ] || missing+=" $cuda/bin/nvcc"
[ -e "$cuda/include/cupti.h" ] || missing+=" $cuda/include/cupti.h"
if [ -n "$missing" ]; then
	echo "ensure-deps: CUDA toolkit not found (missing:$missing)." >&2
	echo "ensure-deps: install the CUDA toolkit (13.0 or newer, with CUPTI) and set CUDA_HOME to its" >&2
	echo "ensure-deps: directory if it is not /usr/local/cuda." >&2
	exit 1
fi
exit 0
