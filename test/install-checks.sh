#!/usr/bin/env bash
# Checks of the build and install rules, no GPU needed:
#   - make analyzer and make with CUDA_HOME pointing nowhere plan no
#     recorder, no nvcc; make demo without a GPU plans the analyzer alone;
#   - make install PREFIX=DIR puts the recorder and every copied library in
#     DIR/lib/gpuprof/ (nothing in DIR/lib/ itself), a man page per command
#     that man -l renders, the bash completion and the documentation; the
#     installed wrapper finds the installed recorder and analyzer;
#   - make uninstall PREFIX=DIR leaves DIR empty.
#
#   test/install-checks.sh BUILD_DIR       (from test/run-tests.sh)
#
# Prints "ok - install NAME", "not ok - install NAME: WHY" or "skip - ..." per
# check; exits 1 if any failed.

set -u

build=${1:?usage: install-checks.sh BUILD_DIR}
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1
build=$(cd "$build" && pwd) || exit 1
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-install-test.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT

failed=0
ok() { echo "ok - install $1"; }
fail() {
	echo "not ok - install $1: $2"
	failed=1
}

# --- what the build rules would make (dry runs, in a build directory of their own)
plan=$(make -n BUILD="$tmp/b" CUDA_HOME=/nonexistent analyzer 2>&1)
if [[ $plan == *nvcc* || $plan == *libgpuprof.so* || $plan == *obj/cupti/* ]]; then
	fail analyzer-alone "make analyzer plans CUDA work: $(grep -m3 -E 'nvcc|libgpuprof|cupti' <<<"$plan")"
elif [[ $plan != *gpuprof-analyze* ]]; then
	fail analyzer-alone "make analyzer does not build gpuprof-analyze"
else
	ok analyzer-alone
fi
plan=$(make -n BUILD="$tmp/b" CUDA_HOME=/nonexistent 2>&1)
if [[ $plan == *nvcc* || $plan == *libgpuprof.so* || $plan != *"built the analyzer and wrapper only"* ]]; then
	fail make-without-cuda "make without a toolkit: $(tail -n 3 <<<"$plan")"
else
	ok make-without-cuda
fi
if ! nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
	plan=$(PATH=/nonexistent-dir:$PATH make -n BUILD="$tmp/b" demo 2>&1)
	if [[ $plan == *test/apps/* || $plan == *nvcc* || $plan == *libgpuprof.so* || $plan == *obj/test/* ]]; then
		fail demo-builds-what-it-runs "make demo plans more than the analyzer: $(grep -m3 -E 'apps|nvcc|libgpuprof|obj/test' <<<"$plan")"
	else
		ok demo-builds-what-it-runs
	fi
else
	echo "skip - install demo-builds-what-it-runs # a GPU is here: the demo builds its program"
fi

# --- install and uninstall
prefix=$tmp/prefix
mkdir -p "$prefix"
if ! out=$(make BUILD="$build" PREFIX="$prefix" install 2>&1); then
	fail install "make install failed: $(tail -n 5 <<<"$out")"
	exit 1
fi
ok install
if [ -e "$build/lib/libgpuprof.so" ]; then
	if [ -f "$prefix/lib/gpuprof/libgpuprof.so" ]; then
		ok recorder-in-lib-gpuprof
	else
		fail recorder-in-lib-gpuprof "no $prefix/lib/gpuprof/libgpuprof.so"
	fi
	# The recorder loads libunwind from its own directory.
	if [ -e "$build/lib/libunwind.so.8" ] && [ ! -f "$prefix/lib/gpuprof/libunwind.so.8" ]; then
		fail libunwind-beside-recorder "no libunwind.so.8 beside the installed recorder"
	else
		ok libunwind-beside-recorder
	fi
fi
stray=$(find "$prefix/lib" -maxdepth 1 -type f 2>/dev/null | tr '\n' ' ')
if [ -n "$stray" ]; then
	fail private-libraries "in $prefix/lib itself, where the loader looks: $stray"
else
	ok private-libraries
fi
for f in bin/gpuprof bin/gpuprof-analyze share/bash-completion/completions/gpuprof \
	share/doc/gpuprof/README.md share/doc/gpuprof/USAGE.md share/doc/gpuprof/FORMAT.md; do
	[ -e "$prefix/$f" ] || missing+=" $f"
done
if [ -n "${missing:-}" ]; then
	fail installed-files "missing:$missing"
else
	ok installed-files
fi

# One page per command gpuprof --help lists, each rendered by man.
cmds=$("$prefix/bin/gpuprof" --help | sed -n '/^Commands:/,/^$/p' | awk '/^  [a-z]/ { print $1 }')
pages=0
bad=""
for c in gpuprof $cmds; do
	p=$prefix/share/man/man1/gpuprof-$c.1
	[ "$c" != gpuprof ] || p=$prefix/share/man/man1/gpuprof.1
	if [ ! -f "$p" ]; then
		[ "$c" = calibrate ] && [ ! -x "$build/bin/gpuprof-calibrate" ] && continue
		bad+=" ${p##*/} missing;"
		continue
	fi
	pages=$((pages + 1))
	if ! command -v man >/dev/null 2>&1; then
		continue
	fi
	# Warnings of groff (-ww) count as failures; the page must have its sections.
	text=$(MANWIDTH=80 MAN_KEEP_FORMATTING=0 man -l "$p" 2>"$tmp/man.err" | col -b 2>/dev/null)
	if [ -s "$tmp/man.err" ] || [[ $text != *NAME* || $text != *SYNOPSIS* ]]; then
		bad+=" ${p##*/}: $(head -c 200 "$tmp/man.err") $(head -c 100 <<<"$text");"
	fi
done
if [ -n "$bad" ]; then
	fail man-pages "$bad"
elif ! command -v man >/dev/null 2>&1; then
	echo "skip - install man-pages-render # man is not installed ($pages pages written)"
else
	ok "man-pages ($pages pages, each rendered by man -l)"
fi
# The report page says what report --help says.
if command -v man >/dev/null 2>&1 &&
	! MANWIDTH=200 man -l "$prefix/share/man/man1/gpuprof-report.1" 2>/dev/null | grep -q -- '--full-names'; then
	fail man-from-help "gpuprof-report.1 lacks --full-names of report --help"
else
	ok man-from-help
fi

# The completion offers the commands and a command's options.
comp=$(bash -c '
	source "$1"
	PATH=$2:$PATH
	COMP_WORDS=(gpuprof ex); COMP_CWORD=1; _gpuprof; echo "${COMPREPLY[*]}"
	COMP_WORDS=(gpuprof diff --fu); COMP_CWORD=2; _gpuprof; echo "${COMPREPLY[*]}"
' _ "$prefix/share/bash-completion/completions/gpuprof" "$prefix/bin" 2>&1)
if [[ $comp == "export"$'\n'"--full-names" ]]; then
	ok bash-completion
else
	fail bash-completion "got '$comp'"
fi

# The installed wrapper finds the installed analyzer (and the recorder).
v=$(env -u GPUPROF_LIB -u GPUPROF_ANALYZE "$prefix/bin/gpuprof" report --version 2>&1)
if [[ $v == "gpuprof "[0-9]* ]]; then
	ok wrapper-finds-analyzer
else
	fail wrapper-finds-analyzer "gpuprof report --version: $v"
fi
if [ -f "$prefix/lib/gpuprof/libgpuprof.so" ]; then
	out=$(env -u GPUPROF_LIB "$prefix/bin/gpuprof" run -- sh -c 'exit 3' 2>&1)
	rc=$?
	if [ "$rc" = 3 ] && [[ $out == *"no trace was written"* ]]; then
		ok wrapper-finds-recorder
	else
		fail wrapper-finds-recorder "exit $rc: $out"
	fi
fi

if ! out=$(make BUILD="$build" PREFIX="$prefix" uninstall 2>&1); then
	fail uninstall "make uninstall failed: $(tail -n 5 <<<"$out")"
else
	left=$(find "$prefix" -mindepth 1 | head -n 10 | tr '\n' ' ')
	if [ -n "$left" ]; then
		fail uninstall "left behind: $left"
	else
		ok "uninstall leaves nothing"
	fi
fi
exit "$failed"
