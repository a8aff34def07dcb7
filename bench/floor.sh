#!/usr/bin/env bash
# floor.sh — where a gap between cnperf rr and the C tools lies: cnperf's
# client and server each against the floor of their own protocol
# (bench/floor/rrfloor.c, a plain C client and server of cnperf rr's TCP
# protocol), in a bare lab, pinned as bench/anchors.sh pins them (servers on
# CPU 1, clients on CPU 0).
#
# Per test (busy-polled rr, blocking rr, crr), each round runs five pairs of
# client and server, the order rotating round by round:
#   C>C     rrfloor against rrfloor: the protocol's floor
#   C>cn    rrfloor's client against cnperf's server: the server's cost
#   cn>C    cnperf's client against rrfloor's server: the client's cost
#   cn>cn   cnperf against itself, as a run measures
#   ref     sockperf (rr, busy) or netperf TCP_CRR (crr), as anchors.sh runs them
# and reports each one's median and the median of its rounds' ratios to C>C,
# with the interval of bench/ratio.py.
#
# Usage: bench/floor.sh       (as root; builds ./cnperf and rrfloor if missing)
# Env:   CNPERF=./cnperf ROUNDS=8 TIME=3 TESTS="busy rr crr"
set -euo pipefail
cd "$(dirname "$0")/.."
CNPERF=${CNPERF:-./cnperf}
ROUNDS=${ROUNDS:-8}
TIME=${TIME:-3}
TESTS=${TESTS:-busy rr crr}
LAB=floor$$
SERVER=198.18.0.3

die() { echo "floor: $*" >&2; exit 2; }
[[ $ROUNDS =~ ^[0-9]+$ ]] && ((ROUNDS >= 1 && ROUNDS <= 100)) || die "ROUNDS must be 1..100"
[[ $TIME =~ ^[0-9]+$ ]] && ((TIME >= 2 && TIME <= 60)) || die "TIME must be 2..60 (seconds)"
for t in $TESTS; do [[ $t =~ ^(busy|rr|crr)$ ]] || die "TESTS: $t is not busy, rr or crr"; done
source bench/lib.sh
tools gcc sockperf
WORK=$(mktemp -d)
trap '"$CNPERF" lab down "$LAB" >/dev/null 2>&1 || true; rm -rf "$WORK"' EXIT
FLOOR=$WORK/rrfloor
gcc -O2 -Wall -o "$FLOOR" bench/floor/rrfloor.c || die "cannot build rrfloor"

"$CNPERF" lab up "$LAB" --mode bare --hosts ext,client,server >/dev/null
bg() { "$CNPERF" lab exec "$LAB" server -- taskset -c 1 "$@" >/dev/null 2>&1 & }
bg "$CNPERF" serve rr --listen :5202
bg "$FLOOR" server "$SERVER" 5203
bg "$NETPERF_DIR/netserver" -D -p 12865
echo "T:$SERVER:11112" >"$WORK/tcp"
bg sockperf sr -f "$WORK/tcp" -F r
sleep 1
client() { "$CNPERF" lab exec "$LAB" client -- taskset -c 0 "$@"; }
get() { python3 -c 'import json,sys
rows = [json.loads(l) for l in sys.stdin if l.strip().startswith("{")]
d = [r.get("data", r) for r in rows if sys.argv[1] in r.get("data", r)][-1]
if sys.argv[1] == "trans_per_s": print(d["trans_per_s"])
else: print(d["trans_per_s"], d[sys.argv[1]]["p50"], d[sys.argv[1]]["p99"])' "$1"; }

# one TEST PAIR: "TRANS_PER_S [P50 P99]"
one() {
	local cnargs=() port=5203 sargs=()
	case $1 in busy) cnargs=(--busy-poll) sargs=(--nonblocked) ;; crr) cnargs=(--mode crr) ;; esac
	[[ $2 == *'>cn' ]] && port=5202
	case $1:$2 in
	crr:C\>*) client "$FLOOR" crr "$SERVER" "$port" "$TIME" ;;
	*:C\>*) client "$FLOOR" "$1" "$SERVER" "$port" "$TIME" ;;
	crr:cn\>*) client "$CNPERF" rr --server "$SERVER:$port" -t "${TIME}s" -r 14 -R 14 "${cnargs[@]}" --json | get trans_per_s ;;
	*:cn\>*) client "$CNPERF" rr --server "$SERVER:$port" --omit 400ms -t "${TIME}s" -r 14 -R 14 "${cnargs[@]}" --json |
		get one_way_us_half_rtt ;;
	crr:ref) client "$NETPERF_DIR/netperf" -H "$SERVER" -p 12865 -t TCP_CRR -l "$TIME" -P 0 -- -r 14,14 -o THROUGHPUT | tail -1 ;;
	*:ref) client sockperf pp -f "$WORK/tcp" -F r -t "$TIME" -m 14 "${sargs[@]}" 2>&1 |
		awk '/Valid Duration/ {split($0, a, "ReceivedMessages="); split($0, b, "RunTime="); t = a[2] / b[2] + 0}
			/percentile 99.000/ {p99 = $NF} /percentile 50.000/ {p50 = $NF} END {print t, p50, p99}' ;;
	esac
}

pairs=("C>C" "C>cn" "cn>C" "cn>cn" "ref")
declare -A V
for t in $TESTS; do
	for ((i = 0; i < ROUNDS; i++)); do
		line="$t round $((i + 1)):"
		for ((j = 0; j < ${#pairs[@]}; j++)); do
			p=${pairs[$(((i + j) % ${#pairs[@]}))]}
			v=$(one "$t" "$p")
			[[ -n $v ]] || die "$t $p gave nothing"
			V[$t/$p]+="${V[$t/$p]:+;}$v"
			line+=" $p $v;"
		done
		echo "$line" >&2
	done
done

args=()
for k in "${!V[@]}"; do args+=("$k=${V[$k]}"); done
python3 - "$ROUNDS" "$TIME" "$TESTS" "${args[@]}" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
from ratio import interval
rounds, time_s, tests = sys.argv[1], sys.argv[2], sys.argv[3].split()
V = {}
for a in sys.argv[4:]:
    k, v = a.split("=", 1)
    V[k] = [[float(x) for x in r.split()] for r in v.split(";")]
pairs = ["C>C", "C>cn", "cn>C", "cn>cn", "ref"]
what = {"busy": "TCP rr 14 B, busy polling (ref: sockperf --nonblocked -F r)",
        "rr": "TCP rr 14 B, blocking (ref: sockperf -F r)",
        "crr": "TCP CRR 14 B (ref: netperf TCP_CRR)"}
print(f"{rounds} rounds of {time_s} s per pair, the order rotating; medians of the rounds; "
      "x C>C: the median of the rounds' ratios to C>C (rrfloor against itself) and its interval "
      f"({interval([0.0] * int(rounds))[2] * 100:.0f} %); one-way µs: half the round trip")
for t in tests:
    cols = ["trans/s"] + ([] if t == "crr" else ["p50 µs", "p99 µs"])
    print(f"\n{what[t]}\n")
    print("| pair | " + " | ".join(f"{c} | x C>C" for c in cols) + " |")
    print("|---|" + "---:|---:|" * len(cols))
    base = V[t + "/C>C"]
    for p in pairs:
        rows = V[t + "/" + p]
        cells = []
        for c in range(len(cols)):
            m = statistics.median(r[c] for r in rows)
            rs = [r[c] / b[c] for r, b in zip(rows, base) if b[c]]
            lo, hi, _ = interval(rs)
            cells.append(f"{m:.3g} | {statistics.median(rs):.2f} ({lo:.2f}–{hi:.2f})")
        print(f"| {p} | " + " | ".join(cells) + " |")
PY
