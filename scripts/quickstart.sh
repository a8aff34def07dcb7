#!/usr/bin/env bash
# The main job on a fresh Debian machine: install what is missing, build
# cnperf, put it on the PATH (/usr/local/bin/cnperf, a link to the binary
# built here, so that the docs' `cnperf …` commands run as written), run the
# quick preset (all five modes, about a minute) and write its report (one
# offline HTML page), and print where both are. Needs root (the labs are
# network namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
go=$(scripts/install-deps.sh)
CGO_ENABLED=0 "$go" build -trimpath -o cnperf ./cmd/cnperf
echo "built ./cnperf ($(./cnperf version))"
link=/usr/local/bin/cnperf
if [[ -e $link && ! -L $link ]]; then
	echo "left $link as it is (not a link); run this build as $PWD/cnperf" >&2
else
	ln -sfn "$PWD/cnperf" "$link"
	echo "linked $link -> $PWD/cnperf"
fi
out=runs/quick-$(date +%Y%m%d-%H%M%S)
./cnperf run --preset quick -o "$out" "$@"
if [[ -f $out/run.json ]]; then # not when "$@" chose another -o
	./cnperf report "$out" >/dev/null
	echo "report: $out/report.html (open it in a browser; no network needed)"
fi
