#!/usr/bin/env bash
# The fleet exports of the golden traces as the real tools read them:
# pprof profiles with `go tool pprof` (test/golden/pprof-checks.py: totals
# and every kernel's time and launches equal the report's) and the
# Prometheus exposition with `promtool check metrics`.  Each tool missing
# (Debian: golang-go, prometheus) is a skip with the reason.
#
# usage: test/golden/fleet-checks.sh BUILD
set -u
here=$(cd "$(dirname "$0")" && pwd)
analyze=${1:-build}/bin/gpuprof-analyze
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuprof-fleet.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# go keeps a cache under HOME: a private one.
export HOME="$tmp/home" GOCACHE="$tmp/gocache"
mkdir -p "$HOME"
failed=0
if ! command -v go >/dev/null 2>&1 || ! go tool pprof -h >/dev/null 2>&1; then
	echo "ok - pprof checks # SKIP go tool pprof not found (Debian: apt-get install golang-go)"
else
	for trace in "$here"/*.gpuprof; do
		name=$(basename "$trace" .gpuprof)
		if ! "$analyze" export -t pprof --no-symbolize -o "$tmp/p.pb.gz" "$trace" ||
			! "$analyze" report --no-symbolize --no-timeline "$trace" >"$tmp/r.txt" ||
			! "$analyze" export -t json --no-symbolize -o "$tmp/j.json" "$trace"; then
			echo "not ok - pprof $name: export failed"
			failed=1
			continue
		fi
		python3 "$here/pprof-checks.py" "$tmp/p.pb.gz" "$tmp/r.txt" "$tmp/j.json" "$name" ||
			failed=1
	done
fi
if ! command -v promtool >/dev/null 2>&1; then
	echo "ok - prometheus checks # SKIP promtool not found (Debian: apt-get install prometheus)"
else
	for trace in "$here"/*.gpuprof; do
		name=$(basename "$trace" .gpuprof)
		if ! "$analyze" export -t prometheus --no-symbolize -o "$tmp/m.prom" "$trace"; then
			echo "not ok - prometheus $name: export failed"
			failed=1
		elif ! out=$(promtool check metrics <"$tmp/m.prom" 2>&1); then
			echo "not ok - prometheus $name: promtool check metrics"
			printf '%s\n' "$out" | sed 's/^/# /'
			failed=1
		else
			echo "ok - prometheus $name: promtool check metrics accepts it"
		fi
	done
fi
# gpuprof serve over HTTP: curl-like clients, slow ones, a real Prometheus server.
python3 "$here/serve-checks.py" "$analyze" "$here" || failed=1
exit $failed
