#!/usr/bin/env bash
# anchors.sh — cnperf's socket workloads against the C tools people trust, on
# the same lab path, side by side: cnperf stream vs iperf3 (TCP and UDP, 1 and
# 4 streams), cnperf rr vs sockperf ping-pong (TCP and UDP, blocking and busy
# polling) and cnperf rr --mode crr vs netperf TCP_CRR. Rounds alternate the
# tools so drift hits both; the median of the rounds' cnperf/reference
# ratios is compared, next to the host's steal (a VM's noise) per round.
#
# Each pair of runs alternates its order round by round.
#
# cnperf sends TCP with sendfile(2) unless --copy: the goal rows set its
# default against iperf3's, and information rows each way against its
# like (cnperf --copy against iperf3, cnperf against iperf3 -Z).
#
# Goals: throughput >= 1.0x the C tool's; rr p50 and p99 within
# 5 % of sockperf's (one-way: half the round trip); crr transactions/s >=
# netperf's; UDP loss at a rate the path carries below 0.1 %.
#
# Usage: bench/anchors.sh            (as root; builds ./cnperf if missing)
# Env:   CNPERF=./cnperf MODE=bare ROUNDS=10 TIME=3 UDP_RATE=1G
#        TABLE=FILE  also write the result table (markdown) to FILE
# Exit:  0 when every goal holds (every row PASS), 1 when one does not,
#        2 on setup errors. A row's result also says whether a miss is
#        beyond the rounds' noise (FAIL) or within it (MISS): bench/ratio.py.
set -euo pipefail
cd "$(dirname "$0")/.."
CNPERF=${CNPERF:-./cnperf}
MODE=${MODE:-bare}
ROUNDS=${ROUNDS:-10}
TIME=${TIME:-3}
UDP_RATE=${UDP_RATE:-1G}
TABLE=${TABLE:-}
LAB=anchors$$

die() { echo "anchors: $*" >&2; exit 2; }
source bench/lib.sh
tools iperf3 sockperf

FEED=$(mktemp -d)
trap '"$CNPERF" lab down "$LAB" >/dev/null 2>&1 || true; rm -rf "$FEED"' EXIT
# Both ends are the mode's endpoints (hosts 2 and 3; host 1 is the lab's
# outside client, unused here).
case $MODE in
	bare) SERVER=198.18.0.3; in=() ;;
	macvlan) SERVER=198.18.0.103; in=(--container) ;;
	overlay) SERVER=198.19.200.3; in=(--container) ;;
	*) die "MODE must be bare, macvlan or overlay" ;;
esac
"$CNPERF" lab up "$LAB" --mode "$MODE" --hosts ext,client,server >/dev/null
# Servers in the server endpoint, in the background; lab down ends them.
# Every tool runs pinned the same way, servers on CPU 1 and clients on CPU 0:
# unpinned, the time to wake an idle vCPU decides a ping-pong's latency more
# than the network does, and tools differ in whether they pay it.
bg() { "$CNPERF" lab exec "$LAB" server "${in[@]}" -- taskset -c 1 "$@" >/dev/null 2>&1 & }
bg "$CNPERF" serve stream --listen :5201
bg "$CNPERF" serve rr --listen :5202
bg iperf3 -s -p 5301
bg "$NETPERF_DIR/netserver" -D -p 12865
# sockperf with blocking recvfrom (-F r), the I/O model of cnperf rr and
# netperf, needs its addresses in feed files.
echo "T:$SERVER:11112" >"$FEED/tcp"
echo "U:$SERVER:11113" >"$FEED/udp"
bg sockperf sr -f "$FEED/tcp" -F r
bg sockperf sr -f "$FEED/udp" -F r
sleep 1
client() { "$CNPERF" lab exec "$LAB" client "${in[@]}" -- taskset -c 0 "$@"; }
json_last() { # KEY: the last JSON line with KEY, from stdin
	python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip().startswith("{")]
rows = [r.get("data", r) for r in rows]
print(json.dumps([r for r in rows if sys.argv[1] in r][-1]))' "$1"
}
get() { python3 -c 'import json,sys; v=json.load(sys.stdin)
for k in sys.argv[1:]: v=v[k]
print(v)' "$@"; }

gbit() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'; }
declare -A R
add() { R[$1]+=" $2"; }

iperf_tcp() { client iperf3 -c "$SERVER" -p 5301 -t "$TIME" -P "$1" "${@:2}" -J | get end sum_received bits_per_second; }
iperf_udp() { # streams: received bits/s at -b 0
	client iperf3 -c "$SERVER" -p 5301 -t "$TIME" -u -b 0 -P "$1" -J |
		python3 -c 'import json,sys; e=json.load(sys.stdin)["end"]["sum"]; print(e["bits_per_second"]*(1-e["lost_percent"]/100))'
}
cn_stream() { client "$CNPERF" stream --server "$SERVER:5201" -t "${TIME}s" "$@" --json | json_last receiver_bits_per_second; }
sock_pp() { # feed [args]: "p50 p99" one-way µs
	local f=$1; shift
	client sockperf pp -f "$FEED/$f" -F r -t "$TIME" -m 14 "$@" 2>&1 |
		awk '/percentile 99.000/{b=$NF} /percentile 50.000/{a=$NF} END{print a, b}'
}
# sockperf leaves its first 400 ms out of its figures (a warm-up, after a
# few dummy messages): cnperf rr leaves out the same with --omit. Their
# first half second is the slowest (busy-polled: p99 230-510 µs one-way,
# 50-95 after), on both tools.
cn_rr() { client "$CNPERF" rr --server "$SERVER:5202" --omit 400ms -t "${TIME}s" -r 14 -R 14 "$@" --json | json_last one_way_us_half_rtt; }

# steal: the share (%) of the CPUs' time the host took from this VM
# between two snapshots of /proc/stat's "cpu" line: a virtual machine's
# figures move with it (at 20-40 %, crr rates fell by half for both tools).
snap() { awk '/^cpu /{t=0; for (f = 2; f <= 9; f++) t += $f; print $9, t}' /proc/stat; }
steal() { # "steal total" before, after
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		d = y[2] - x[2]; printf "%.1f", (d > 0 ? 100 * (y[1] - x[1]) / d : 0) }'
}
# pair REF CN: runs two commands (reference tool, cnperf) in this round's
# order, into A and B, the host's steal over both into S, and over each
# tool's own run into SR and SC (steal comes in bursts: a round's pair can
# see one tool's run hit and not the other's). Rounds
# alternate which goes first: what ran before leaves the vCPUs warm or
# cold (here a busy-polled run made the next minute's crr rates 2-4x
# higher), and that must not always favour one.
pair() {
	local s0 s1 s2
	s0=$(snap)
	if ((i % 2)); then
		A=$(eval "$1"); s1=$(snap); B=$(eval "$2"); s2=$(snap)
		SR=$(steal "$s0" "$s1") SC=$(steal "$s1" "$s2")
	else
		B=$(eval "$2"); s1=$(snap); A=$(eval "$1"); s2=$(snap)
		SC=$(steal "$s0" "$s1") SR=$(steal "$s1" "$s2")
	fi
	S=$(steal "$s0" "$s2")
}
# stolen KEY: records the pair's steal for row KEY.
stolen() { add "$1.st" "$S"; add "$1.sr" "$SR"; add "$1.sc" "$SC"; }
p50p99() { get one_way_us_half_rtt p50 <<<"$1"; get one_way_us_half_rtt p99 <<<"$1"; }

for ((i = 1; i <= ROUNDS; i++)); do
	for P in 1 4; do
		pair "iperf_tcp $P" "cn_stream -P $P | get receiver_bits_per_second"
		add "tcp$P.ref" "$A"; add "tcp$P.cn" "$B"; stolen "tcp$P"
		t_ref=$A t_cn=$B
		# cnperf sends TCP with sendfile (iperf3 -Z's way) unless --copy
		# (iperf3's default): each way against its like, for information.
		pair "iperf_tcp $P -Z" "cn_stream -P $P --copy | get receiver_bits_per_second"
		add "tcpz$P.ref" "$A"; add "tcpz$P.cn" "$t_cn"; add "tcpcp$P.ref" "$t_ref"; add "tcpcp$P.cn" "$B"
		echo "round $i, $P stream(s): Gbit/s TCP iperf3 -Z $(gbit "$A") cnperf --copy $(gbit "$B")" >&2
		pair "iperf_udp $P" "cn_stream -P $P --udp -b 0 | get receiver_bits_per_second"
		add "udp$P.ref" "$A"; add "udp$P.cn" "$B"; stolen "udp$P"; add "udpng$P.ref" "$A"
		c=$(cn_stream -P "$P" --udp -b 0 --no-gso | get receiver_bits_per_second)
		add "udpng$P.cn" "$c"
		echo "round $i, $P stream(s): Gbit/s TCP iperf3 $(gbit "$t_ref") cnperf $(gbit "$t_cn");" \
			"UDP -b 0 iperf3 $(gbit "$A") cnperf $(gbit "$B") (no GSO $(gbit "$c"))" >&2
	done
	pair "client iperf3 -c $SERVER -p 5301 -t $TIME -u -b $UDP_RATE -J | get end sum lost_percent" \
		"cn_stream --udp -b $UDP_RATE | get loss_percent"
	add loss.ref "$A"; add loss.cn "$B"
	line="round $i: UDP $UDP_RATE loss iperf3 $A % cnperf $B %; rr one-way p50/p99 µs:"
	for k in "tcprr:tcp::" "udprr:udp:--mode udp:" "busy:tcp --nonblocked:--busy-poll:"; do
		IFS=: read -r key feed cnargs _ <<<"$k"
		pair "sock_pp $feed" "p50p99 \"\$(cn_rr $cnargs)\""
		read -r sp50 sp99 <<<"$A"
		read -r cp50 cp99 <<<"$(tr '\n' ' ' <<<"$B")"
		add "${key}50.ref" "$sp50"; add "${key}50.cn" "$cp50"; add "${key}99.ref" "$sp99"; add "${key}99.cn" "$cp99"
		stolen "${key}50"; stolen "${key}99"
		line+=" $key sockperf $sp50/$sp99 cnperf $cp50/$cp99,"
	done
	# netperf's TCP_CRR: transactions/s and the transaction's p50 (µs).
	pair "client $NETPERF_DIR/netperf -H $SERVER -p 12865 -t TCP_CRR -l $TIME -P 0 -- -r 14,14 -o THROUGHPUT,P50_LATENCY | tail -1 | tr ',' ' '" \
		"client $CNPERF rr --server $SERVER:5202 --mode crr -t ${TIME}s -r 14 -R 14 --json | json_last trans_per_s"
	read -r nt n50 <<<"$A"
	ct=$(get trans_per_s <<<"$B"); c50=$(get round_trip_us p50 <<<"$B")
	add crr.ref "$nt"; add crr.cn "$ct"; stolen crr; add crr50.ref "$n50"; add crr50.cn "$c50"
	echo "$line crr trans/s netperf $nt cnperf $ct; host steal $S %" >&2
done

args=()
for k in "${!R[@]}"; do args+=("$k=${R[$k]# }"); done
python3 - "$MODE" "$UDP_RATE" "$ROUNDS" "$TIME" "$TABLE" "${args[@]}" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
from ratio import interval, verdict
mode, rate, rounds, time_s, table = sys.argv[1:6]
R = {}
for a in sys.argv[6:]:
    k, v = a.split("=", 1)
    R[k] = [float(x) for x in v.split()]
med = lambda k: statistics.median(R[k])
G = 1e9
# name, reference tool, unit scale, direction (">=": cnperf/ref at least goal; "<=": at most), goal
rows = [
    ("TCP, 1 stream (Gbit/s)", "iperf3", "tcp1", G, ">=", 1.0),
    ("TCP, 4 streams (Gbit/s)", "iperf3", "tcp4", G, ">=", 1.0),
    ("UDP -b 0, 1 stream, received (Gbit/s)", "iperf3", "udp1", G, ">=", 1.0),
    ("UDP -b 0, 4 streams, received (Gbit/s)", "iperf3", "udp4", G, ">=", 1.0),
    ("TCP rr 14 B, p50 one-way (µs)", "sockperf -F r", "tcprr50", 1, "<=", 1.05),
    ("TCP rr 14 B, p99 one-way (µs)", "sockperf -F r", "tcprr99", 1, "<=", 1.05),
    ("UDP rr 14 B, p50 one-way (µs)", "sockperf -F r", "udprr50", 1, "<=", 1.05),
    ("UDP rr 14 B, p99 one-way (µs)", "sockperf -F r", "udprr99", 1, "<=", 1.05),
    ("TCP rr 14 B busy poll, p50 one-way (µs)", "sockperf --nonblocked", "busy50", 1, "<=", 1.05),
    ("TCP rr 14 B busy poll, p99 one-way (µs)", "sockperf --nonblocked", "busy99", 1, "<=", 1.05),
    ("TCP CRR 14 B (transactions/s)", "netperf TCP_CRR", "crr", 1, ">=", 1.0),
]
info = [
    ("TCP, 1 stream, cnperf --copy (Gbit/s)", "iperf3", "tcpcp1", G),
    ("TCP, 4 streams, cnperf --copy (Gbit/s)", "iperf3", "tcpcp4", G),
    ("TCP, 1 stream, against iperf3 -Z (Gbit/s)", "iperf3 -Z", "tcpz1", G),
    ("TCP, 4 streams, against iperf3 -Z (Gbit/s)", "iperf3 -Z", "tcpz4", G),
    ("UDP -b 0, 1 stream, cnperf --no-gso (Gbit/s)", "iperf3", "udpng1", G),
    ("UDP -b 0, 4 streams, cnperf --no-gso (Gbit/s)", "iperf3", "udpng4", G),
    ("TCP CRR 14 B, p50 transaction (µs)", "netperf TCP_CRR", "crr50", 1),
]
def ratios(k):
    return [y / x for x, y in zip(R[k + ".ref"], R[k + ".cn"]) if x]
def ratio(k):
    # The median of the rounds' own ratios: a round's two runs are back to
    # back and share the host's state, which drifts between rounds.
    rs = ratios(k)
    return statistics.median(rs) if rs else float("nan")
stolen = lambda k: f"{med(k + '.st'):.0f} %" if k + ".st" in R else ""
QUIET = 3  # % steal: a run below it in both tools' runs is a quiet round
def quiet(k):
    # The ratio over the rounds where the host stole under QUIET % from
    # both tools' runs (information: the goal is judged on every round).
    rs = [y / x for x, y, a, b in zip(R[k + ".ref"], R[k + ".cn"], R[k + ".sr"], R[k + ".sc"])
          if x and a < QUIET and b < QUIET]
    return f"{statistics.median(rs):.2f} ({len(rs)})" if rs else "- (0)"
out = [f"mode {mode}; servers pinned to CPU 1, clients to CPU 0; {rounds} interleaved rounds of {time_s} s; "
       "reference and cnperf: medians of the rounds; ratio: median of the rounds' cnperf/reference ratios; "
       f"interval: the median ratio's distribution-free confidence interval ({interval(ratios('tcp1'))[2] * 100:.0f} % with {rounds} rounds); "
       "result: PASS when the median ratio meets the goal, MISS when it does not but the interval reaches it "
       "(the rounds cannot tell the miss from noise), FAIL when the whole interval lies past the goal; "
       "host steal: median share of the CPUs' time the host took during a round's pair; "
       f"quiet rounds: the ratio over the rounds (how many) where the host stole under {QUIET} % "
       "during both tools' runs, for information",
       "", "| measurement | reference tool | reference | cnperf | ratio | interval | goal | result | host steal | quiet rounds |",
       "|---|---|---:|---:|---:|---:|---|---|---:|---:|"]
ok = True
for name, tool, k, scale, op, goal in rows:
    a, b = med(k + ".ref") / scale, med(k + ".cn") / scale
    r = ratio(k)
    lo, hi, _ = interval(ratios(k))
    v = verdict(op, goal, r, lo, hi)
    ok &= v == "PASS"
    out.append(f"| {name} | {tool} | {a:.2f} | {b:.2f} | {r:.2f} | {lo:.2f}–{hi:.2f} | {op} {goal} | {v} | {stolen(k)} | {quiet(k)} |")
for name, tool, k, scale in info:
    a, b = med(k + ".ref") / scale, med(k + ".cn") / scale
    lo, hi, _ = interval(ratios(k))
    out.append(f"| {name} | {tool} | {a:.2f} | {b:.2f} | {ratio(k):.2f} | {lo:.2f}–{hi:.2f} | (information) | | | |")
a, b = med("loss.ref"), med("loss.cn")
passed = b < 0.1
ok &= passed
out.append(f"| UDP {rate}bit/s, loss (%) | iperf3 | {a:.3f} | {b:.3f} | | | < 0.1 % | {'PASS' if passed else 'FAIL'} | | |")
out.append("")
out.append("Per round (reference / cnperf): " + "; ".join(
    f"{k}: " + " ".join(f"{x:.3g}/{y:.3g}" for x, y in zip(R[k + '.ref'], R[k + '.cn']))
    for k in ["tcp1", "tcp4", "udp1", "udp4", "tcprr50", "tcprr99", "udprr50", "udprr99", "busy50", "busy99", "crr"]))
out.append("")
out.append("Host steal per round, % (during the reference's run / cnperf's): " + "; ".join(
    f"{k}: " + " ".join(f"{x:.0f}/{y:.0f}" for x, y in zip(R[k + '.sr'], R[k + '.sc']))
    for k in ["tcp1", "tcp4", "udp1", "udp4", "tcprr50", "udprr50", "busy50", "crr"]))
text = "\n".join(out)
print(text)
if table:
    open(table, "w").write(text + "\n")
sys.exit(0 if ok else 1)
PY
