#!/usr/bin/env bash
# threads.sh — how cnperf stream's throughput scales with threads on this
# machine, over a lab's veth: for T = 1, 2, … up to nproc (at most 8), T
# TCP streams sent with T threads (-P T --threads T, one loop per OS
# thread, each its share of the streams, the server reading with as many),
# against the same T streams from one thread (-P T --threads 1) and
# against iperf3 -P T. iperf3 gives each stream a thread from 3.16 on;
# before (Debian 12 ships 3.12) all its streams share one thread, which
# the table's header says. Nothing is pinned here (anchors.sh pins clients
# to CPU 0 and servers to CPU 1): threads need the cores, and client and
# server share the machine's, as on one node.
#
# Rows are information: they set no goal. Rounds alternate the order of
# the tools, as anchors.sh's.
#
# Usage: bench/threads.sh            (as root; builds ./cnperf if missing)
# Env:   CNPERF=./cnperf MODE=bare ROUNDS=5 TIME=3 MAX_THREADS=nproc (≤ 8)
#        TABLE=FILE  also write the result table (markdown) to FILE
# Exit:  0, or 2 on setup errors.
set -euo pipefail
cd "$(dirname "$0")/.."
CNPERF=${CNPERF:-./cnperf}
MODE=${MODE:-bare}
ROUNDS=${ROUNDS:-5}
TIME=${TIME:-3}
TABLE=${TABLE:-}
MAX_THREADS=${MAX_THREADS:-$(nproc)}
((MAX_THREADS > 8)) && MAX_THREADS=8
((MAX_THREADS >= 1)) || MAX_THREADS=1
LAB=threads$$

die() { echo "threads: $*" >&2; exit 2; }
source bench/lib.sh
need iperf3
[[ -x $CNPERF ]] || CGO_ENABLED=0 go build -o "$CNPERF" ./cmd/cnperf

trap '"$CNPERF" lab down "$LAB" >/dev/null 2>&1 || true' EXIT
case $MODE in
	bare) SERVER=198.18.0.3; in=() ;;
	macvlan) SERVER=198.18.0.103; in=(--container) ;;
	overlay) SERVER=198.19.200.3; in=(--container) ;;
	*) die "MODE must be bare, macvlan or overlay" ;;
esac
"$CNPERF" lab up "$LAB" --mode "$MODE" --hosts ext,client,server >/dev/null
bg() { "$CNPERF" lab exec "$LAB" server "${in[@]}" -- "$@" >/dev/null 2>&1 & }
bg "$CNPERF" serve stream --listen :5201
bg iperf3 -s -p 5301
sleep 1
client() { "$CNPERF" lab exec "$LAB" client "${in[@]}" -- "$@"; }
last() { # KEY: from the last JSON line with KEY, its value
	python3 -c '
import json, sys
rows = [json.loads(l) for l in sys.stdin if l.strip().startswith("{")]
rows = [r.get("data", r) for r in rows]
print([r for r in rows if sys.argv[1] in r][-1][sys.argv[1]])' "$1"
}
iperf_tcp() { client iperf3 -c "$SERVER" -p 5301 -t "$TIME" -P "$1" -Z -J |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"])'; }
cn_tcp() { client "$CNPERF" stream --server "$SERVER:5201" -t "${TIME}s" -P "$1" --threads "$2" --json |
	last receiver_bits_per_second; }
gbit() { awk -v b="$1" 'BEGIN { printf "%.2f", b / 1e9 }'; }

version=$(iperf3 --version 2>&1 | head -1 | awk '{print $2}')
declare -A R
add() { R[$1]+=" $2"; }
for ((i = 1; i <= ROUNDS; i++)); do
	for ((T = 1; T <= MAX_THREADS; T++)); do
		runs=("ref:iperf_tcp $T" "one:cn_tcp $T 1" "cn:cn_tcp $T $T")
		((i % 2)) || runs=("${runs[2]}" "${runs[1]}" "${runs[0]}")
		line="round $i, $T stream(s):"
		for r in "${runs[@]}"; do
			v=$(eval "${r#*:}")
			add "$T.${r%%:*}" "$v"
			line+=" ${r%%:*} $(gbit "$v")"
		done
		echo "$line Gbit/s" >&2
	done
done

args=()
for k in "${!R[@]}"; do args+=("$k=${R[$k]# }"); done
python3 - "$MODE" "$ROUNDS" "$TIME" "$MAX_THREADS" "$version" "$(nproc)" "$TABLE" "${args[@]}" <<'PY'
import statistics, sys
sys.path.insert(0, "bench")
from ratio import interval
mode, rounds, time_s, tmax, version, nproc, table = sys.argv[1:8]
R = {}
for a in sys.argv[8:]:
    k, v = a.split("=", 1)
    R[k] = [float(x) for x in v.split()]
med = lambda k: statistics.median(R[k]) / 1e9
def vparts(v):
    try:
        return tuple(int(x) for x in v.split(".")[:2])
    except ValueError:
        return (0, 0)
threaded = vparts(version) >= (3, 16)
ref = (f"iperf3 {version} (one thread per stream)" if threaded else
       f"iperf3 {version}: before 3.16, so all its streams share one thread; "
       "install iperf3 3.16 or later to compare threaded senders")
out = [f"mode {mode}; {nproc} CPUs, nothing pinned; {rounds} interleaved rounds of {time_s} s, TCP, "
       f"T streams each; reference: {ref}; figures: medians of the rounds (Gbit/s received); "
       "scaling: the median of the rounds' ratios of T threads to one thread on the same T streams, "
       "with its distribution-free interval (bench/ratio.py)",
       "", f"| threads = streams | iperf3 -P T -Z | cnperf -P T --threads 1 | cnperf -P T --threads T | threads T / 1 | interval | cnperf T / iperf3 |",
       "|---:|---:|---:|---:|---:|---:|---:|"]
for t in range(1, int(tmax) + 1):
    rs = [c / o for c, o in zip(R[f"{t}.cn"], R[f"{t}.one"]) if o]
    vs = [c / r for c, r in zip(R[f"{t}.cn"], R[f"{t}.ref"]) if r]
    lo, hi, _ = interval(rs)
    out.append(f"| {t} | {med(f'{t}.ref'):.2f} | {med(f'{t}.one'):.2f} | {med(f'{t}.cn'):.2f} | "
               f"{statistics.median(rs):.2f} | {lo:.2f}–{hi:.2f} | {statistics.median(vs):.2f} |")
out.append("")
out.append("Per round (iperf3 / one thread / T threads, Gbit/s): " + "; ".join(
    f"T={t}: " + " ".join(f"{a/1e9:.2f}/{b/1e9:.2f}/{c/1e9:.2f}" for a, b, c in zip(R[f'{t}.ref'], R[f'{t}.one'], R[f'{t}.cn']))
    for t in range(1, int(tmax) + 1)))
text = "\n".join(out)
print(text)
if table:
    open(table, "w").write(text + "\n")
PY
