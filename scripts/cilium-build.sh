#!/usr/bin/env bash
# Builds Cilium offline at a pinned version, from the Go module proxy, for
# the test cluster's Cilium CNIs (`cnperf cluster up --cni cilium-vxlan`,
# docs/kubernetes.md): cilium-agent, cilium-operator-generic, cilium-cni
# and cilium-dbg, all without cgo, and the BPF sources the agent compiles
# at run time with clang/llc 19 (scripts/install-deps.sh cilium).
#
#   scripts/cilium-build.sh
#
# Cached by version under $CNPERF_CILIUM_CACHE (default
# /var/cache/cnperf/cilium)/VERSION: bin/ holds the binaries with a stamp,
# lib/bpf the BPF sources (the agent's --bpf-dir... through --lib-dir), so a
# second run builds nothing. The first run resolves Cilium's module graph
# and builds for about 10 minutes on 2 cores. Prints the VERSION dir on
# stdout.
set -euo pipefail

CILIUM_VERSION=v1.20.2
MODULE=github.com/cilium/cilium
# Cilium pins a pseudo-version of gobgp that the module proxy refuses; the
# served release it is replaced with (the agent's BGP control plane is off
# in cnperf's clusters).
GOBGP_REPLACE=github.com/osrg/gobgp/v4=github.com/osrg/gobgp/v4@v4.7.0

die() { echo "cilium-build: $*" >&2; exit 2; }
log() { echo "cilium-build: $*" >&2; }

[ $# -eq 0 ] || die "usage: cilium-build.sh (no arguments; the version is pinned: $CILIUM_VERSION)"
command -v go >/dev/null || die "go not found (scripts/install-deps.sh installs one)"

cache=${CNPERF_CILIUM_CACHE:-/var/cache/cnperf/cilium}
vdir=$cache/$CILIUM_VERSION
bin=$vdir/bin
src=$cache/src/cilium-$CILIUM_VERSION
# name:package:tags, in build order.
targets=(
  "cilium-agent:./daemon:"
  "cilium-operator-generic:./operator:ipam_provider_operator"
  "cilium-cni:./plugins/cilium-cni:"
  "cilium-dbg:./cilium-dbg:"
)

built() {
  for t in "${targets[@]}"; do
    [ -x "$bin/${t%%:*}" ] || return 1
  done
  [ "$(cat "$bin/.stamp" 2>/dev/null)" = "$CILIUM_VERSION" ] && [ -f "$vdir/lib/bpf/bpf_lxc.c" ]
}
if built; then
  echo "$vdir"
  exit 0
fi
mkdir -p "$bin" "$vdir/lib"

export GOFLAGS="-mod=mod -trimpath" GOTOOLCHAIN=local CGO_ENABLED=0
run() { nice -n 10 "$@"; }

log "fetching $MODULE@$CILIUM_VERSION from the module proxy"
dl=$(run go mod download -json "$MODULE@$CILIUM_VERSION")
moddir=$(sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p' <<<"$dl")
info=$(sed -n 's/^[[:space:]]*"Info": "\(.*\)",$/\1/p' <<<"$dl")
# The release's time as the proxy gives it: the version string the agent
# reports is "VERSION REVISION TIME"; the module has no git revision.
released=$(sed -n 's/.*"Time":"\([^"]*\)".*/\1/p' "$info")
[ -n "$moddir" ] && [ -d "$moddir/daemon" ] || die "$MODULE@$CILIUM_VERSION: the module proxy did not serve it"

# A writable copy whose go.mod replaces the refused gobgp pseudo-version.
if [ ! -f "$src/.copied" ]; then
  rm -rf "$src"
  mkdir -p "$(dirname "$src")"
  cp -r "$moddir" "$src"
  chmod -R u+w "$src"
  (cd "$src" && go mod edit -replace "$GOBGP_REPLACE")
  # The operator's clustermesh and gateway code take one constant from
  # sigs.k8s.io/mcs-api/controllers, a module the proxy refuses: a local
  # module of that path defines it with mcs-api's value (cnperf's clusters
  # run no clustermesh and no Gateway API).
  shim=$src/.cnperf-shim/mcs-api-controllers
  mkdir -p "$shim"
  printf 'module sigs.k8s.io/mcs-api/controllers\n\ngo 1.24\n' > "$shim/go.mod"
  cat > "$shim/controllers.go" <<'GO'
// Package controllers stands in for sigs.k8s.io/mcs-api/controllers, which
// the module proxy refuses: Cilium takes only this constant from it.
package controllers

// DerivedServiceAnnotation is set on a ServiceImport to name the Service
// derived from it (mcs-api's value).
const DerivedServiceAnnotation = "multicluster.kubernetes.io/derived-service"
GO
  (cd "$src" && go mod edit -replace "sigs.k8s.io/mcs-api/controllers=./.cnperf-shim/mcs-api-controllers")
  touch "$src/.copied"
fi

# The whole graph the build needs, before building: a module the proxy
# refuses is named here, not half-way through the compile.
log "resolving the module graph"
for t in "${targets[@]}"; do
  IFS=: read -r name pkg tags <<<"$t"
  if ! (cd "$src" && run go list -tags "$tags" -deps "$pkg" >/dev/null 2>"$src/.graph.err"); then
    cat "$src/.graph.err" >&2
    die "$name's module graph does not download completely (above)"
  fi
done

ver="'-X=$MODULE/pkg/version.ciliumVersion=${CILIUM_VERSION#v} module ${released:-unknown}'"
for t in "${targets[@]}"; do
  IFS=: read -r name pkg tags <<<"$t"
  log "building $name $CILIUM_VERSION"
  start=$(date +%s)
  (cd "$src" && run go build -tags "$tags" -ldflags "-s -w $ver" -o "$bin/$name.tmp" "$pkg")
  mv "$bin/$name.tmp" "$bin/$name"
  log "$name built in $(( $(date +%s) - start )) s"
done
rm -rf "$vdir/lib/bpf"
cp -r "$src/bpf" "$vdir/lib/bpf"
"$bin/cilium-agent" --version 2>&1 | grep -q "${CILIUM_VERSION#v}" || die "the built cilium-agent does not say $CILIUM_VERSION: $("$bin/cilium-agent" --version 2>&1 | head -1)"
echo "$CILIUM_VERSION" > "$bin/.stamp"
log "Cilium $CILIUM_VERSION in $vdir"
echo "$vdir"
