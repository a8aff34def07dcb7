#!/usr/bin/env bash
# pong-vs-nginx.sh — side-by-side loopback throughput of cnperf's pong server
# and nginx serving a static file with the very same bytes.
#
# Goal: pong reaches nginx's requests/s (>= 1.0x) for 1 kB and
# 100 kB bodies, measured in one run. Runs are interleaved (and the
# order alternates each round) so machine drift hits both servers alike; the
# median of the ROUNDS rounds' pong/nginx ratios is compared.
#
# Usage: bench/pong-vs-nginx.sh
# Env:   CNPERF=./cnperf  binary offering `serve pong --listen ADDR`
#        PONG_PORT=18081 NGINX_PORT=18082
#        ROUNDS=6 DURATION=5s THREADS=2 CONNS=32
#        TABLE=FILE  also write the result table (markdown) to FILE
#        QUIET_WAIT=60  seconds to wait before each run for the CPUs to be
#                       >= 90 % idle (0: don't wait); other load on the box
#                       otherwise lands on whichever server runs at the time
# Exit:  0 when every goal passes, 1 when one does not (MISS or FAIL),
#        2 on setup errors.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CNPERF=${CNPERF:-./cnperf}
PONG_PORT=${PONG_PORT:-18081}
NGINX_PORT=${NGINX_PORT:-18082}
ROUNDS=${ROUNDS:-6}
DURATION=${DURATION:-5s}
THREADS=${THREADS:-2}
CONNS=${CONNS:-32}
QUIET_WAIT=${QUIET_WAIT:-60}
SIZES=(1024 102400)
declare -A GOAL=([1024]=1.0 [102400]=1.0)

die() { echo "pong-vs-nginx: $*" >&2; exit 2; }

# --- tools -----------------------------------------------------------------
missing=()
command -v wrk >/dev/null || missing+=(wrk)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx-light)
if ((${#missing[@]})); then
	echo "installing ${missing[*]}" >&2
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null ||
		die "cannot install ${missing[*]}"
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

if [[ ! -x $CNPERF ]]; then
	[[ $CNPERF == ./cnperf ]] || die "CNPERF=$CNPERF is not an executable"
	echo "building ./cnperf" >&2
	(cd "$ROOT" && CGO_ENABLED=0 go build -o "$OLDPWD/cnperf" ./cmd/cnperf) || die "go build failed"
fi

# --- servers ---------------------------------------------------------------
TMP=$(mktemp -d -t pong-vs-nginx.XXXXXX)
chmod 755 "$TMP" # nginx workers may run as an unprivileged user
PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# Static files byte-identical to pong's bodies ("p", "o"x(n-3), "ng"), at the
# same path, so both servers answer GET /pong/N.
mkdir -p "$TMP/www/pong" "$TMP/temp"
for n in "${SIZES[@]}"; do
	{ printf p; head -c $((n - 3)) /dev/zero | tr '\0' o; printf ng; } >"$TMP/www/pong/$n"
done
chmod -R a+rX "$TMP/www"

temp_paths="client_body_temp_path $TMP/temp/body;"
for m in proxy fastcgi uwsgi scgi; do # only modules this nginx was built with
	"$NGINX" -V 2>&1 | grep -q -- "--without-http_${m}_module" ||
		temp_paths+=" ${m}_temp_path $TMP/temp/$m;"
done
cat >"$TMP/nginx.conf" <<EOF
worker_processes auto;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/error.log warn;
events { worker_connections 4096; }
http {
	access_log off;
	sendfile on;
	tcp_nopush on;
	keepalive_requests 100000;
	keepalive_timeout 65;
	default_type text/plain;
	$temp_paths
	server {
		listen 127.0.0.1:$NGINX_PORT;
		root $TMP/www;
	}
}
EOF
"$NGINX" -e "$TMP/error.log" -c "$TMP/nginx.conf" &
PIDS+=($!)
"$CNPERF" serve pong --listen "127.0.0.1:$PONG_PORT" >"$TMP/pong.log" 2>&1 &
PIDS+=($!)

wait_port() { # port name
	local i
	for ((i = 0; i < 100; i++)); do
		(exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && return 0
		sleep 0.1
	done
	cat "$TMP/error.log" "$TMP/pong.log" >&2 2>/dev/null || true
	die "$2 is not listening on 127.0.0.1:$1"
}
wait_port "$NGINX_PORT" nginx
wait_port "$PONG_PORT" pong

# Both must serve the same bytes, or the comparison is meaningless.
if command -v cmp >/dev/null && command -v curl >/dev/null; then
	for n in "${SIZES[@]}"; do
		for port in "$NGINX_PORT" "$PONG_PORT"; do
			curl -fsS --noproxy '*' "http://127.0.0.1:$port/pong/$n" | cmp -s - "$TMP/www/pong/$n" ||
				die "127.0.0.1:$port/pong/$n does not serve the expected $n bytes"
		done
	done
fi

# --- measurement -----------------------------------------------------------
# wait_quiet: up to QUIET_WAIT s until the CPUs were >= 90 % idle for 1 s.
wait_quiet() {
	local i k tot idle a b
	for ((i = 0; i < QUIET_WAIT; i++)); do
		read -ra a </proc/stat
		sleep 1
		read -ra b </proc/stat
		tot=0
		for k in 1 2 3 4 5 6 7 8; do tot=$((tot + b[k] - a[k])); done
		idle=$((b[4] - a[4]))
		((tot > 0 && idle * 100 / tot >= 90)) && return 0
	done
	((QUIET_WAIT == 0)) || echo "warning: CPUs busy with other work; measuring anyway" >&2
}

# run_wrk URL -> prints requests/s; fails on non-2xx answers or socket errors.
run_wrk() {
	local out rps
	wait_quiet
	out=$(wrk -t"$THREADS" -c"$CONNS" -d"$DURATION" "$1")
	if grep -qE 'Non-2xx|Socket errors' <<<"$out"; then
		echo "$out" >&2
		die "errors while loading $1"
	fi
	rps=$(awk '/^Requests\/sec:/ {print $2}' <<<"$out")
	[[ -n $rps ]] || die "no Requests/sec in wrk output for $1"
	echo "$rps"
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
# snap and steal: the share (%) of the CPUs' time the host took from this
# VM between two snapshots of /proc/stat (as in anchors.sh).
snap() { awk '/^cpu /{t=0; for (f = 2; f <= 9; f++) t += $f; print $9, t}' /proc/stat; }
steal() {
	awk -v a="$1" -v b="$2" 'BEGIN { split(a, x, " "); split(b, y, " ")
		d = y[2] - x[2]; printf "%.1f", (d > 0 ? 100 * (y[1] - x[1]) / d : 0) }'
}

printf 'machine: %s cores, %s, kernel %s\n' "$(nproc)" \
	"$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo)" "$(uname -r)"
printf 'wrk -t%s -c%s -d%s, %s interleaved rounds per size\n\n' \
	"$THREADS" "$CONNS" "$DURATION" "$ROUNDS"

fail=0
rows=()
for n in "${SIZES[@]}"; do
	ng_url="http://127.0.0.1:$NGINX_PORT/pong/$n"
	pp_url="http://127.0.0.1:$PONG_PORT/pong/$n"
	# Warm-up: page cache, Go heap, TCP connections; not counted.
	wrk -t1 -c"$CONNS" -d1s "$ng_url" >/dev/null
	wrk -t1 -c"$CONNS" -d1s "$pp_url" >/dev/null
	ng=() pp=() rs=() st=()
	for ((r = 1; r <= ROUNDS; r++)); do
		s0=$(snap)
		if ((r % 2)); then
			ng+=("$(run_wrk "$ng_url")") pp+=("$(run_wrk "$pp_url")")
		else
			pp+=("$(run_wrk "$pp_url")") ng+=("$(run_wrk "$ng_url")")
		fi
		st+=("$(steal "$s0" "$(snap)")")
		rs+=("$(awk -v a="${pp[-1]}" -v b="${ng[-1]}" 'BEGIN {printf "%.4f", a / b}')")
		echo "size $n round $r: nginx ${ng[-1]} pong ${pp[-1]}; host steal ${st[-1]} %" >&2
	done
	ng_med=$(median "${ng[@]}")
	pp_med=$(median "${pp[@]}")
	# The median of the rounds' own ratios: a round's two runs are back to
	# back and share the host's state, which drifts between rounds.
	# With its interval and a verdict that says whether a miss is beyond
	# the rounds' noise (bench/ratio.py).
	read -r ratio lo hi cover verdict < <(python3 "$ROOT/bench/ratio.py" '>=' "${GOAL[$n]}" "${rs[@]}")
	[[ $verdict == PASS ]] || fail=1
	rows+=("$(printf '| %7s | %12.0f | %12.0f | %5.2f | %.2f–%.2f | >= %-4s | %-6s | %5.0f %% |' \
		"$n" "$ng_med" "$pp_med" "$ratio" "$lo" "$hi" "${GOAL[$n]}" "$verdict" "$(median "${st[@]}")")")
done

table=$(
	echo "wrk -t$THREADS -c$CONNS -d$DURATION on 127.0.0.1, $ROUNDS interleaved rounds per size;" \
		"req/s: medians of the rounds; ratio: median of the rounds' pong/nginx ratios;" \
		"interval: its distribution-free confidence interval (${cover} % with $ROUNDS rounds);" \
		"result: PASS when the ratio meets the goal, MISS when it does not but the interval reaches it," \
		"FAIL when the whole interval lies below the goal;" \
		"host steal: median share of the CPUs' time the host took during a round"
	echo
	echo "|    size |  nginx req/s |   pong req/s | ratio |  interval | goal    | result | host steal |"
	echo "|--------:|-------------:|-------------:|------:|----------:|---------|--------|-----------:|"
	printf '%s\n' "${rows[@]}"
)
echo
echo "$table"
[[ -z ${TABLE:-} ]] || echo "$table" >"$TABLE"
exit "$fail"
