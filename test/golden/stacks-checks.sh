#!/usr/bin/env bash
# Launch sites of a static-cudart program, from a trace recorded on an H100
# (test/golden/callsites_static.gpuprof: gpuprof run --backtrace=kernel of
# build/test/apps/callsites_static, from the repository root).  site_a,
# site_b and site_c launch one kernel 7, 13 and 5 times through the static
# runtime and the launch stub; each must be a site of its own that starts
# at the program's function.
#
#   bash test/golden/stacks-checks.sh BUILD_DIR      (from the repository root)
#
# The trace was recorded before traces held build-ids (GP_REC_MODULE), so
# the analyzer names its frames from the files at the recorded paths
# (build/test/apps/callsites_static, relative to the repository root,
# whatever BUILD_DIR is) and says the names are unverified; the binary must
# be the one recorded: its .text is compared with the recorded hash, and the
# check is skipped (with the reason) when it differs.  libc.so.6 is used
# only where its symbols agree with what dladdr said in the recording
# process (__libc_start_main): elsewhere the caller of main stays
# libc.so.6+0x2a1ca, never another libc's function at that offset.
set -u
build=${1:?usage: stacks-checks.sh BUILD_DIR}
analyze=$build/bin/gpuprof-analyze
trace=test/golden/callsites_static.gpuprof
app=build/test/apps/callsites_static
name="golden static-cudart launch sites"

if [ ! -f "$trace" ]; then
	echo "skip - $name # $trace is missing"
	exit 0
fi
if ! command -v objcopy >/dev/null || ! command -v python3 >/dev/null; then
	echo "skip - $name # needs objcopy and python3"
	exit 0
fi
if [ ! -x "$app" ]; then
	echo "skip - $name # $app is not built (make apps)"
	exit 0
fi
tmp=$(mktemp) || exit 1
trap 'rm -f "$tmp"' EXIT
objcopy -O binary --only-section=.text "$app" "$tmp"
if [ "$(sha256sum <"$tmp" | cut -d' ' -f1)" != "$(cut -d' ' -f1 test/golden/callsites_static.text.sha256)" ]; then
	echo "skip - $name # $app differs from the recorded program (another compiler?)"
	exit 0
fi
if ! json=$("$analyze" export --format json "$trace" 2>&1); then
	echo "not ok - $name: export failed: $json"
	exit 1
fi
if ! report=$("$analyze" report --no-timeline "$trace" 2>&1); then
	echo "not ok - $name: report failed: $report"
	exit 1
fi
case $report in
*"Frame names unverified: the trace recorded no build-ids"*) ;;
*)
	echo "not ok - $name: the report does not say the names are unverified"
	exit 1
	;;
esac
libc_ok=0
case $report in
*"libc.so.6: "*" is not the file that ran"*) ;;
*) libc_ok=1 ;;
esac
if [ $libc_ok = 0 ] && printf '%s\n' "$json" | grep -q '__gconv\|skeleton\.c'; then
	echo "not ok - $name: a frame of another libc.so.6 was named"
	exit 1
fi
python3 - "$json" <<'PY' && echo "ok - $name" || exit 1
import json, sys
want = {"site_a": 7, "site_b": 13, "site_c": 5}
sites = json.loads(sys.argv[1]).get("launch_sites", [])
got = {}
for s in sites:
    first = (s.get("frames") or [""])[0]
    fn = first.split(" ")[0]
    if fn not in want:
        print("not ok - golden static-cudart launch sites: a site starts at %r" % first)
        sys.exit(1)
    bad = [f for f in s.get("frames", []) + [s.get("site", "")]
           if any(k in f for k in ("cudart", "__cuda", "cudaLaunch", "device_stub",
                                   ".stub.c", "scale<"))]
    if bad or not s.get("site", "").startswith(fn + " "):
        print("not ok - golden static-cudart launch sites: runtime or stub frames in %r"
              % s.get("site"))
        sys.exit(1)
    got[fn] = got.get(fn, 0) + s.get("launches", 0)
if got != want or len(sites) != 3:
    print("not ok - golden static-cudart launch sites: %d sites, launches %s, expected %s"
          % (len(sites), got, want))
    sys.exit(1)
PY
