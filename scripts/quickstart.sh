#!/usr/bin/env bash
# The main job on a fresh Debian machine: install what is missing, build
# cnperf, run the quick preset (all five modes, about a minute) and print
# where the results are. Needs root (the labs are network namespaces).
set -euo pipefail
cd "$(dirname "$0")/.."
go=$(scripts/install-deps.sh)
CGO_ENABLED=0 "$go" build -trimpath -o cnperf ./cmd/cnperf
echo "built ./cnperf ($(./cnperf version))"
exec ./cnperf run --preset quick "$@"
