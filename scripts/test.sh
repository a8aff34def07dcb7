#!/usr/bin/env bash
# The whole test suite: formatting, vet, unit tests, and as root the
# integration tests (labs in throwaway namespaces) and the end-to-end test
# (runs a preset, checks results, asserts nothing of cnperf is left), and the
# report of a real quick run opened in headless Chromium.
# Packages run one at a time (-p 1): the lab tests and the end-to-end test's
# `cnperf clean` share the machine's namespaces.
set -euo pipefail
cd "$(dirname "$0")/.."
go=$(scripts/install-deps.sh browser k8s flannel cilium)
unformatted=$("$(dirname "$go")/gofmt" -l .)
if [ -n "$unformatted" ]; then
  echo "gofmt would change: $unformatted" >&2
  exit 1
fi
"$go" vet ./...
# The benchmarks' statistics (bench/ratio.py: intervals and verdicts).
python3 -m doctest bench/ratio.py
if [ "$(id -u)" != 0 ]; then
  echo "test.sh: not root, so the lab integration and end-to-end tests will be skipped (run with sudo)" >&2
else
  # The kubernetes driver's end-to-end test runs on a real Kubernetes built
  # offline (docs/kubernetes.md): about 15 minutes of 2 cores the first
  # time, then cached by version outside the repository.
  PATH=$(dirname "$go"):$PATH scripts/k8s-build.sh > /dev/null
  # The flannel modes and the test cluster's flannel CNIs run the real
  # flanneld (docs/labs.md), its etcd the one built above: about 2 minutes
  # the first time, then cached too.
  PATH=$(dirname "$go"):$PATH scripts/flannel-build.sh > /dev/null
  # The test cluster's Cilium CNIs run the real Cilium agent and operator
  # (docs/kubernetes.md): about 5 minutes the first time, then cached.
  PATH=$(dirname "$go"):$PATH scripts/cilium-build.sh > /dev/null
fi
CGO_ENABLED=0 "$go" test -count=1 -p 1 -timeout 30m ./...
# The OpenMetrics export goldens read by Prometheus' own parser: a module of
# its own (internal/report/export/omparse), so that Prometheus stays out of
# cnperf's go.mod.
(cd internal/report/export/omparse && CGO_ENABLED=0 "$go" test -count=1 ./...)
