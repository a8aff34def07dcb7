#!/usr/bin/env bash
# run.sh — cnperf's measuring side against the C tools, side by side, on
# this machine: bench/anchors.sh (stream vs iperf3, rr vs sockperf, crr vs
# netperf, in a bare lab), bench/threads.sh (stream's throughput against
# its threads, 1 up to nproc, for information) and bench/pong-vs-nginx.sh
# (pong vs nginx on loopback). Writes one markdown report with the machine's CPU model, the
# tools' versions and both tables, so a user can check cnperf against the
# tools they trust before they trust its figures.
#
# Usage: bench/run.sh                 (as root; apt-installs the C tools)
# Env:   OUT=bench/out  where the report goes
#        ROUNDS=10 TIME=3 anchors' rounds and seconds per run
#        PONG_ROUNDS=6    pong-vs-nginx's rounds
#        THREADS_ROUNDS=5 threads.sh's rounds (0: leave it out)
#        FLOOR=1          also bench/floor.sh (FLOOR_ROUNDS=8), for information
#        CNPERF=./cnperf  (built with CGO_ENABLED=0 if missing)
# Exit:  0 when every goal holds, 1 when one does not, 2 on setup errors.
# Run it on a quiet machine: anything else running lands on one tool's
# rounds and not the other's.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench/out}
export CNPERF=${CNPERF:-./cnperf}
[[ -x $CNPERF ]] || CGO_ENABLED=0 go build -o "$CNPERF" ./cmd/cnperf
mkdir -p "$OUT"
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)
slug=$(tr -cs 'A-Za-z0-9' '-' <<<"$cpu" | sed 's/^-//; s/-$//' | tr 'A-Z' 'a-z')
report="$OUT/benchmarks-$slug-$(date -u +%Y%m%dT%H%M%SZ).md"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

status=0
ROUNDS=${ROUNDS:-10} TIME=${TIME:-3} TABLE=$tmp/anchors.md bench/anchors.sh >&2 || status=$?
((status < 2)) || exit "$status"
THREADS_ROUNDS=${THREADS_ROUNDS:-5}
if ((THREADS_ROUNDS > 0)); then
	ROUNDS=$THREADS_ROUNDS TIME=${TIME:-3} TABLE=$tmp/threads.md bench/threads.sh >&2 || exit 2
fi
s=0
ROUNDS=${PONG_ROUNDS:-6} TABLE=$tmp/pong.md bench/pong-vs-nginx.sh >&2 || s=$?
((s < 2)) || exit "$s"
((status)) || status=$s
# FLOOR=1: cnperf rr's client and server against the C floor of their
# protocol too (bench/floor.sh, about 10 more minutes), to tell whose part
# a miss in rr or crr is. Information: it sets no goal.
if [[ ${FLOOR:-0} == 1 ]]; then
	ROUNDS=${FLOOR_ROUNDS:-8} TIME=${TIME:-3} bench/floor.sh >"$tmp/floor.md" || exit 2
fi

version() { "$@" 2>&1 | head -1 | tr -d '\r' || true; }
{
	echo "# cnperf against the C tools: $cpu"
	echo
	echo "- machine: $cpu, $(nproc) CPUs online ($(cat /sys/devices/system/cpu/online)), $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo), kernel $(uname -r)"
	echo "- date: $(date -u +%Y-%m-%dT%H:%MZ); cnperf $(git rev-parse --short HEAD 2>/dev/null || echo '?'), $(go version 2>/dev/null | awk '{print $3}')"
	echo "- tools: $(version iperf3 --version), $(version sockperf --version | sed 's/^sockperf: //'), netperf $("$(bench/netperf.sh)/netperf" -V | awk '{print $3}'), $(version nginx -v), $(version wrk -v | awk '{print $1, $2}')"
	echo
	echo "## Sockets (bench/anchors.sh)"
	echo
	cat "$tmp/anchors.md"
	echo
	if [[ -s $tmp/threads.md ]]; then
		echo "## Stream's throughput against its threads (bench/threads.sh)"
		echo
		cat "$tmp/threads.md"
		echo
	fi
	echo "## Pong against nginx (bench/pong-vs-nginx.sh)"
	echo
	cat "$tmp/pong.md"
	echo
	if [[ -s $tmp/floor.md ]]; then
		echo "## cnperf rr against the floor of its protocol (bench/floor.sh)"
		echo
		cat "$tmp/floor.md"
		echo
	fi
	echo "Result: $([[ $status == 0 ]] && echo 'every goal met' || echo 'a goal missed (MISS: within the noise of the rounds; FAIL: beyond it)')."
} >"$report"
cat "$report"
echo "report: $report" >&2
exit "$status"
