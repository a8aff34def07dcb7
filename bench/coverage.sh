#!/usr/bin/env bash
# coverage.sh — do `cnperf check --baseline`'s intervals keep their 95 %
# coverage on real repeated runs, and how small a change can they see?
#
# Runs the same spec RUNS times, then compares
# every pair of runs with `check B --baseline A --max-change 5`. Between
# identical runs the true change is 0, so a pair's interval should contain
# 0 in about 95 % of pairs; a limit of 5 % should hold, not be "cannot
# tell". Per metric it prints how many pairs' intervals contained 0, the
# verdicts, and the mean smallest detectable change ("could detect changes
# of X % or more"). Then, with a Go toolchain, TestRunsCoverage adds each
# run's interval against the other runs' mean ratio and the SD of each
# ratio over the runs (the spread the intervals should match).
#
# Usage: bench/coverage.sh OUT_DIR         (as root; builds ./cnperf if missing)
# Env:   CNPERF=./cnperf SPEC=presets/quick.yaml RUNS=10 MAX_CHANGE=5
#        OLD=/path/to/another/cnperf  also tally the same pairs with it
#        (an older build: it reads the lines of either wording)
#        SKIP_RUNS=1  only compare the runs already in OUT_DIR (run-*)
#        LOCK=FILE  run each under flock FILE (machines whose users share one)
# Runs already in OUT_DIR are kept: rerunning adds the missing ones.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: bench/coverage.sh OUT_DIR}
CNPERF=${CNPERF:-./cnperf}
SPEC=${SPEC:-presets/quick.yaml}
RUNS=${RUNS:-10}
MAX_CHANGE=${MAX_CHANGE:-5}
LOCK=${LOCK:-}
if [ ! -x "$CNPERF" ]; then CGO_ENABLED=0 go build -o "$CNPERF" ./cmd/cnperf; fi
mkdir -p "$OUT"

if [ -z "${SKIP_RUNS:-}" ]; then
	for i in $(seq 1 "$RUNS"); do
		d=$OUT/run-$(printf %02d "$i")
		[ -e "$d/run.json" ] && continue
		rm -rf "$d"
		echo "$(date -u +%T) run $i of $RUNS (load $(cut -d' ' -f1-3 /proc/loadavg))" >&2
		${LOCK:+flock "$LOCK"} "$CNPERF" run "$SPEC" -o "$d" >"$d.log" 2>&1 || { echo "run $i failed: $d.log" >&2; exit 1; }
	done
fi

# tally BINARY: every pair, every headline limit.
tally() {
	local bin=$1 a b
	local runs=("$OUT"/run-*/)
	for ((j = 1; j < ${#runs[@]}; j++)); do
		for ((i = 0; i < j; i++)); do
			a=${runs[i]%/} b=${runs[j]%/}
			"$bin" check "$b" --baseline "$a" --max-change "$MAX_CHANGE" 2>/dev/null || true
		done
	done | awk -v label="$bin" '
	# The metric is the part after the first colon of the name.
	{ verdict = ($1 == "cannot") ? "cannot tell" : $1
	  name = (verdict == "cannot tell") ? $3 : $2
	  sub(/:$/, "", name); split(name, p, ":"); metric = p[2]
	  if (!(metric in pairs)) order[++n] = metric
	  pairs[metric]++; v[metric, verdict]++
	  lo = ""; hi = ""
	  if (match($0, /CI \[[-+0-9.]+ %, [-+0-9.]+ %\]/)) {          # older wording: signed, worse positive
	    s = substr($0, RSTART + 4, RLENGTH - 5); gsub(/ %/, "", s); split(s, b, ", "); lo = b[1] + 0; hi = b[2] + 0
	  } else if (match($0, /CI [0-9.]+ %( (better|worse))? to [0-9.]+ %( (better|worse))?/)) {
	    s = substr($0, RSTART + 3, RLENGTH - 3); split(s, b, " to ")
	    lo = signed(b[1]); hi = signed(b[2])
	  }
	  if (lo != "") { known[metric]++; if (lo <= 0 && 0 <= hi) cov[metric]++; half[metric] += (hi - lo) / 2 }
	  if (match($0, /could detect changes of [0-9.]+ %/)) { d = substr($0, RSTART + 24, RLENGTH - 26); det[metric] += d; nd[metric]++ }
	}
	function signed(t,   x) { x = t + 0; if (t ~ /better/) x = -x; return x }
	END {
	  printf "%s\n%-10s %6s %14s %6s %7s %12s %12s %12s\n", label, "metric", "pairs", "CI contains 0", "holds", "BROKEN", "cannot tell", "half-width", "detectable"
	  for (k = 1; k <= n; k++) { m = order[k]
	    printf "%-10s %6d %8d %4.0f%% %6d %7d %12d %10.1f %% %10s\n", m, pairs[m], cov[m], 100 * cov[m] / (known[m] ? known[m] : 1),
	      v[m, "holds"], v[m, "BROKEN"], v[m, "cannot tell"], half[m] / (known[m] ? known[m] : 1), nd[m] ? sprintf("%.1f %%", det[m] / nd[m]) : "–" }
	}'
}

tally "$CNPERF"
if [ -n "${OLD:-}" ]; then echo; tally "$OLD"; fi
if command -v go >/dev/null; then
	echo
	CNPERF_COVERAGE_RUNS="$OUT/run-*" CGO_ENABLED=0 go test -count=1 -run TestRunsCoverage -v ./internal/report/gate/ |
		grep -v '^=== \|^--- \|^PASS\|^ok '
fi
