#!/usr/bin/env bash
# Builds flanneld offline at a pinned version, from the Go module proxy, for
# the real Flannel beside cnperf's own overlays (docs/labs.md): its VXLAN,
# host-gw and UDP backends need only what the kernel here has; the UDP
# backend is a small C proxy on TUN, so the build needs cgo (gcc).
#
#   scripts/flannel-build.sh
#
# The binary is cached by version under $CNPERF_FLANNEL_CACHE (default
# /var/cache/cnperf/flannel)/VERSION/bin/flanneld with a stamp, so a second
# run builds nothing. The first run resolves flannel's module graph (about
# a minute when Kubernetes' modules are cached already) and builds for about
# a minute on 2 cores. Prints the cache dir (VERSION dir) on stdout.
set -euo pipefail

FLANNEL_VERSION=v0.28.10
MODULE=github.com/flannel-io/flannel

die() { echo "flannel-build: $*" >&2; exit 2; }
log() { echo "flannel-build: $*" >&2; }

[ $# -eq 0 ] || die "usage: flannel-build.sh (no arguments; the version is pinned: $FLANNEL_VERSION)"
command -v go >/dev/null || die "go not found (scripts/install-deps.sh installs one)"
command -v gcc >/dev/null || die "gcc not found: flanneld's UDP backend needs cgo (scripts/install-deps.sh flannel installs it)"

cache=${CNPERF_FLANNEL_CACHE:-/var/cache/cnperf/flannel}
vdir=$cache/$FLANNEL_VERSION
bin=$vdir/bin
src=$cache/src/flannel-$FLANNEL_VERSION
mkdir -p "$bin"

if [ -x "$bin/flanneld" ] && [ "$(cat "$bin/.flanneld.stamp" 2>/dev/null)" = "$FLANNEL_VERSION" ]; then
  echo "$vdir"
  exit 0
fi

export GOFLAGS="-mod=mod -trimpath" GOTOOLCHAIN=local
run() { nice -n 10 "$@"; }

log "fetching $MODULE@$FLANNEL_VERSION from the module proxy"
moddir=$(run go mod download -json "$MODULE@$FLANNEL_VERSION" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')
[ -n "$moddir" ] && [ -f "$moddir/main.go" ] || die "$MODULE@$FLANNEL_VERSION: the module proxy did not serve it"

# A writable copy: flanneld's main.go imports every cloud backend, and one
# of them (tencentvpc) needs a cloud SDK module the proxy refuses. No build
# tag leaves it out, so its blank import is dropped; cnperf uses vxlan,
# host-gw and udp only.
rm -rf "$src"
mkdir -p "$(dirname "$src")"
cp -r "$moddir" "$src"
chmod -R u+w "$src"
grep -q 'pkg/backend/tencentvpc"' "$src/main.go" || die "$FLANNEL_VERSION's main.go no longer imports tencentvpc: check the edit"
sed -i '\#pkg/backend/tencentvpc"#d' "$src/main.go"

# The whole graph the build needs, before building: a module the proxy
# refuses is named here, not half-way through the compile.
log "resolving the module graph of flanneld"
if ! (cd "$src" && run go list -deps . >/dev/null 2>"$src/.graph.err"); then
  cat "$src/.graph.err" >&2
  die "flanneld's module graph does not download completely (above)"
fi

log "building flanneld $FLANNEL_VERSION (cgo, for the UDP backend)"
(cd "$src" && CGO_ENABLED=1 run go build -o "$bin/flanneld.tmp" \
  -ldflags "-X $MODULE/pkg/version.Version=$FLANNEL_VERSION" .)
mv "$bin/flanneld.tmp" "$bin/flanneld"
"$bin/flanneld" --version 2>&1 | grep -q "$FLANNEL_VERSION" || die "the built flanneld does not say $FLANNEL_VERSION"
echo "$FLANNEL_VERSION" > "$bin/.flanneld.stamp"
log "flanneld $FLANNEL_VERSION in $bin"
echo "$vdir"
