#!/usr/bin/env bash
# anchors.sh — cnperf's socket workloads against the tools people trust, on
# the same lab path, in one go: cnperf stream vs iperf3 (TCP 1 and 4 streams,
# UDP at a fixed rate) and cnperf rr vs sockperf ping-pong (TCP, 14 bytes).
# Rounds alternate the tools so drift hits both; medians are compared.
#
# Goals (issue 4): TCP throughput >= 0.95x iperf3's; rr p50 within 10 % of
# sockperf's (both one-way: half the round trip); UDP loss at a rate the
# path can carry below 0.1 %.
#
# Usage: bench/anchors.sh            (as root; builds ./cnperf if missing)
# Env:   CNPERF=./cnperf MODE=bare ROUNDS=3 TIME=5 UDP_RATE=1G
set -euo pipefail
cd "$(dirname "$0")/.."
CNPERF=${CNPERF:-./cnperf}
MODE=${MODE:-bare}
ROUNDS=${ROUNDS:-3}
TIME=${TIME:-5}
UDP_RATE=${UDP_RATE:-1G}
LAB=anchors

missing=()
command -v iperf3 >/dev/null || missing+=(iperf3)
command -v sockperf >/dev/null || missing+=(sockperf)
if ((${#missing[@]})); then
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
[[ -x $CNPERF ]] || CGO_ENABLED=0 go build -o "$CNPERF" ./cmd/cnperf

"$CNPERF" lab down "$LAB" >/dev/null 2>&1 || true
trap '"$CNPERF" lab down "$LAB" >/dev/null 2>&1 || true; rm -f "${FEED:-}"' EXIT
# Both ends are the mode's endpoints (hosts 2 and 3; host 1 is the lab's
# outside client, unused here). Only modes whose endpoints are reached at
# their own address work with several ports: bridge publishes just one.
case $MODE in
	bare) SERVER=198.18.0.3; in=() ;;
	macvlan) SERVER=198.18.0.103; in=(--container) ;;
	overlay) SERVER=198.19.200.3; in=(--container) ;;
	*) echo "anchors: MODE must be bare, macvlan or overlay" >&2; exit 2 ;;
esac
"$CNPERF" lab up "$LAB" --mode "$MODE" --hosts ext,client,server >/dev/null
# Servers in the server endpoint, in the background; lab down ends them.
# Every tool runs pinned the same way, servers on CPU 1 and clients on CPU 0:
# unpinned, the time to wake an idle vCPU (~25 us here) decides a ping-pong's
# latency more than the network does, and tools differ in whether they pay
# it (Go's runtime keeps a thread spinning; sockperf sleeps).
bg() { "$CNPERF" lab exec "$LAB" server "${in[@]}" -- taskset -c 1 "$@" >/dev/null 2>&1 & }
bg "$CNPERF" serve stream --listen :5201
bg "$CNPERF" serve rr --listen :5202
bg iperf3 -s -p 5301
bg sockperf sr --tcp -p 11111
# sockperf's -F r (blocking recvfrom) needs its addresses in a feed file.
FEED=$(mktemp); echo "T:$SERVER:11112" >"$FEED"
bg sockperf sr -f "$FEED" -F r
sleep 1
client() { "$CNPERF" lab exec "$LAB" client "${in[@]}" -- taskset -c 0 "$@"; }
gbit() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'; }

median() { python3 -c 'import sys,statistics; print(statistics.median(float(x) for x in sys.argv[1:]))' "$@"; }
declare -A R
for ((i = 1; i <= ROUNDS; i++)); do
	for P in 1 4; do
		a=$(client iperf3 -c "$SERVER" -p 5301 -t "$TIME" -P "$P" -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])')
		b=$(client "$CNPERF" stream --server "$SERVER:5201" -t "${TIME}s" -P "$P" --json | python3 -c '
import json,sys
r=[json.loads(l) for l in sys.stdin if l.strip()]
print([x for x in r if "receiver_bits_per_second" in x][-1]["receiver_bits_per_second"])')
		R[tcp$P.iperf3]+=" $a"; R[tcp$P.cnperf]+=" $b"
		echo "round $i TCP -P $P: iperf3 $(gbit "$a") Gbit/s, cnperf $(gbit "$b") Gbit/s" >&2
	done
	a=$(client iperf3 -c "$SERVER" -p 5301 -t "$TIME" -u -b "$UDP_RATE" -J | python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum"]["lost_percent"])')
	b=$(client "$CNPERF" stream --server "$SERVER:5201" -t "${TIME}s" --udp -b "$UDP_RATE" --json | python3 -c '
import json,sys
r=[json.loads(l) for l in sys.stdin if l.strip()]
print([x for x in r if "loss_percent" in x and "receiver_bits_per_second" in x][-1]["loss_percent"])')
	R[udp.iperf3]+=" $a"; R[udp.cnperf]+=" $b"
	echo "round $i UDP $UDP_RATE: loss iperf3 $a %, cnperf $b %" >&2
	# sockperf twice: with blocking recvfrom (-F r), the I/O model of cnperf
	# rr and netperf, and with its default epoll loop, which adds a system
	# call and a wake-up per message.
	a=$(client sockperf pp -f "$FEED" -F r -t "$TIME" -m 14 2>&1 | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' | tail -1)
	e=$(client sockperf pp --tcp -i "$SERVER" -p 11111 -t "$TIME" -m 14 2>&1 | sed -n 's/.*percentile 50.000 = *\([0-9.]*\).*/\1/p' | tail -1)
	R[rr.epoll]+=" $e"
	b=$(client "$CNPERF" rr --server "$SERVER:5202" -t "${TIME}s" -r 14 -R 14 --json | python3 -c '
import json,sys
r=[json.loads(l) for l in sys.stdin if l.strip()]
print([x for x in r if "one_way_us_half_rtt" in x][-1]["one_way_us_half_rtt"]["p50"])')
	R[rr.sockperf]+=" $a"; R[rr.cnperf]+=" $b"
	echo "round $i TCP rr 14 B: p50 one-way sockperf -F r $a us, sockperf epoll $e us, cnperf $b us" >&2
done

t1i=$(median ${R[tcp1.iperf3]}); t1c=$(median ${R[tcp1.cnperf]})
t4i=$(median ${R[tcp4.iperf3]}); t4c=$(median ${R[tcp4.cnperf]})
ui=$(median ${R[udp.iperf3]}); uc=$(median ${R[udp.cnperf]})
ri=$(median ${R[rr.sockperf]}); rc=$(median ${R[rr.cnperf]}); re=$(median ${R[rr.epoll]})
python3 - "$MODE" "$t1i" "$t1c" "$t4i" "$t4c" "$ui" "$uc" "$ri" "$rc" "$re" "$UDP_RATE" <<'PY'
import sys
mode, t1i, t1c, t4i, t4c, ui, uc, ri, rc, re, rate = sys.argv[1], *map(float, sys.argv[2:11]), sys.argv[11]
rows = [
    ("TCP, 1 stream (Gbit/s)", t1i / 1e9, t1c / 1e9, t1c / t1i, ">= 0.95", t1c / t1i >= 0.95),
    ("TCP, 4 streams (Gbit/s)", t4i / 1e9, t4c / 1e9, t4c / t4i, ">= 0.95", t4c / t4i >= 0.95),
    (f"UDP {rate}bit/s loss (%)", ui, uc, float("nan"), "< 0.1 %", uc < 0.1),
    ("TCP rr 14 B p50 one-way (us), sockperf -F r", ri, rc, rc / ri, "within 10 %", abs(rc / ri - 1) <= 0.10),
]
info = [("TCP rr 14 B p50 one-way (us), sockperf default (epoll)", re, rc, rc / re)]
print(f"mode {mode}; servers pinned to CPU 1, clients to CPU 0; medians of the rounds; reference tool first")
print(f"| measurement | iperf3/sockperf | cnperf | ratio | goal | result |")
print(f"|---|---:|---:|---:|---|---|")
ok = True
for name, a, b, r, goal, passed in rows:
    ok &= passed
    print(f"| {name} | {a:.3f} | {b:.3f} | {r:.3f} | {goal} | {'PASS' if passed else 'FAIL'} |")
for name, a, b, r in info:
    print(f"| {name} | {a:.3f} | {b:.3f} | {r:.3f} | (for information) | |")
sys.exit(0 if ok else 1)
PY
