#!/usr/bin/env bash
# Builds the test cluster's Kubernetes offline (docs/kubernetes.md): static
# kube-apiserver, kube-controller-manager, kube-scheduler, kubelet,
# kube-proxy and kubectl from the Go module proxy, etcd through etcdmain,
# a pause binary, and `ctr images import`-able tarballs of the pause image
# and of the workload image (the given cnperf binary as /cnperf).
#
#   scripts/k8s-build.sh [CNPERF_BINARY]
#
# Binaries are cached by version under $CNPERF_K8S_CACHE (default
# /var/cache/cnperf/k8s)/VERSION/bin, each with a stamp, so a second run
# only rebuilds the images. The first run takes ~15 min of 2 cores and
# ~1 GB of modules. Prints the cache dir (VERSION dir) on stdout.
set -euo pipefail

K8S_VERSION=v1.34.4
STAGING_VERSION=v0.34.4 # k8s.io/<staging> tags matching K8S_VERSION
ETCD_VERSION=v3.6.16
PAUSE_IMAGE=cnperf.local/pause:3.10
WORKLOAD_IMAGE=cnperf.local/cnperf:k8s

die() { echo "k8s-build: $*" >&2; exit 2; }
log() { echo "k8s-build: $*" >&2; }

[ $# -le 1 ] || die "usage: k8s-build.sh [CNPERF_BINARY]"
cnperf_bin=${1:-}
if [ -n "$cnperf_bin" ]; then
  [ -x "$cnperf_bin" ] || die "$cnperf_bin: not an executable file"
  file_out=$(head -c 4 "$cnperf_bin" | od -An -c | tr -d ' ')
  [ "$file_out" = '177ELF' ] || die "$cnperf_bin: not an ELF binary"
fi
command -v go >/dev/null || die "go not found (scripts/install-deps.sh installs one)"

cache=${CNPERF_K8S_CACHE:-/var/cache/cnperf/k8s}
vdir=$cache/$K8S_VERSION
bin=$vdir/bin
img=$vdir/images
src=$cache/src
mkdir -p "$bin" "$img" "$src"

export CGO_ENABLED=0 GOFLAGS="-mod=mod -trimpath" GOTOOLCHAIN=local
# The same nice/ionice for every step: the build must not starve labs that
# run next to it.
run() { nice -n 10 "$@"; }

# built NAME: true when bin/NAME exists and its stamp names this version.
built() { [ -x "$bin/$1" ] && [ "$(cat "$bin/.$1.stamp" 2>/dev/null)" = "$2" ]; }
stamp() { echo "$2" > "$bin/.$1.stamp"; }

# --- Kubernetes: a throwaway module requiring k8s.io/kubernetes, with every
# staging module (replaced by ./staging/... in its own go.mod, which Go
# ignores for dependencies) replaced by its published k8s.io/<name> tag.
kmod=$src/kubernetes-$K8S_VERSION
k8s_bins=(kube-scheduler kube-proxy kubectl kube-controller-manager kubelet kube-apiserver)
need_k8s=0
for b in "${k8s_bins[@]}"; do built "$b" "$K8S_VERSION" || need_k8s=1; done
if [ $need_k8s = 1 ]; then
  mkdir -p "$kmod"
  if [ ! -f "$kmod/go.mod.done" ]; then
    log "resolving k8s.io/kubernetes@$K8S_VERSION from the module proxy"
    gomod=$(cd "$kmod" && run env GOFLAGS= go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
      sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",$/\1/p')
    [ -f "$gomod" ] || die "k8s.io/kubernetes@$K8S_VERSION: no go.mod from the module proxy"
    staging=$(sed -n 's#^[[:space:]]*\(k8s.io/[a-z0-9-]*\) => \./staging/.*#\1#p' "$gomod")
    [ -n "$staging" ] || die "no staging modules in $gomod"
    {
      echo "module cnperf.local/k8sbuild"
      echo
      echo "go 1.24.0"
      echo
      echo "require k8s.io/kubernetes $K8S_VERSION"
      echo
      echo "replace ("
      for m in $staging; do echo "	$m => $m $STAGING_VERSION"; done
      echo ")"
    } > "$kmod/go.mod"
    # A placeholder package so the directory is a buildable module.
    printf 'package k8sbuild\n' > "$kmod/doc.go"
    (cd "$kmod" && run go mod download k8s.io/kubernetes)
    log "$(echo "$staging" | wc -l) staging modules replaced by $STAGING_VERSION"
    touch "$kmod/go.mod.done"
  fi
  ldflags="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
  ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
  ldflags+=" -X k8s.io/component-base/version.gitMinor=$(echo "$K8S_VERSION" | cut -d. -f2)"
  ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
  ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
  for b in "${k8s_bins[@]}"; do
    built "$b" "$K8S_VERSION" && { log "$b: cached"; continue; }
    log "building $b $K8S_VERSION"
    t0=$(date +%s)
    (cd "$kmod" && run go build -ldflags "$ldflags" -o "$bin/$b.tmp" "k8s.io/kubernetes/cmd/$b")
    mv "$bin/$b.tmp" "$bin/$b"
    stamp "$b" "$K8S_VERSION"
    log "$b: $(( $(date +%s) - t0 )) s"
  done
fi

# --- etcd: its own module, so its dependency versions do not meet
# Kubernetes' in one build list.
if ! built etcd "$ETCD_VERSION"; then
  emod=$src/etcd-$ETCD_VERSION
  mkdir -p "$emod"
  cat > "$emod/main.go" <<'EOF'
// etcd through etcdmain: the server binary without etcd's own build tree.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() { etcdmain.Main(os.Args) }
EOF
  if [ ! -f "$emod/go.mod" ]; then
    printf 'module cnperf.local/etcdbuild\n\ngo 1.24.0\n\nrequire go.etcd.io/etcd/server/v3 %s\n' "$ETCD_VERSION" > "$emod/go.mod"
  fi
  log "building etcd $ETCD_VERSION"
  t0=$(date +%s)
  (cd "$emod" && run go build -ldflags "-s -w" -o "$bin/etcd.tmp" .)
  mv "$bin/etcd.tmp" "$bin/etcd"
  stamp etcd "$ETCD_VERSION"
  log "etcd: $(( $(date +%s) - t0 )) s"
fi

# --- pause: the sandbox's process; sleeps until SIGTERM/SIGINT, and as
# PID 1 of the pod's PID namespace (if shared) reaps orphans.
if ! built pause 3.10-cnperf; then
  pmod=$src/pause
  mkdir -p "$pmod"
  cat > "$pmod/main.go" <<'EOF'
// pause: the pod sandbox's process, waiting for SIGTERM or SIGINT.
package main

import (
	"os"
	"os/signal"
	"syscall"
)

func main() {
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	for s := range sig {
		if s != syscall.SIGCHLD {
			return
		}
		// Reap children re-parented to us.
		for {
			pid, err := syscall.Wait4(-1, nil, syscall.WNOHANG, nil)
			if pid <= 0 || err != nil {
				break
			}
		}
	}
}
EOF
  printf 'module cnperf.local/pause\n\ngo 1.24.0\n' > "$pmod/go.mod"
  (cd "$pmod" && run go build -ldflags "-s -w" -o "$bin/pause.tmp" .)
  mv "$bin/pause.tmp" "$bin/pause"
  stamp pause 3.10-cnperf
fi

# --- k8s-relay: the API server lives in a lab namespace the root namespace
# has no route to; this forwards 127.0.0.1:PORT in the root namespace to an
# address inside that namespace (each dial made on a thread that entered
# it), so a kubeconfig works from the root namespace too.
if ! built k8s-relay 1; then
  rmod=$src/relay
  mkdir -p "$rmod"
  cat > "$rmod/main.go" <<'GO'
// k8s-relay LISTEN NETNS TARGET: accepts TCP on LISTEN in the current
// network namespace and connects each connection to TARGET from inside the
// network namespace file NETNS.
package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"syscall"
)

const sysSetns = 308 // setns(2) on amd64

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: k8s-relay LISTEN NETNS TARGET")
		os.Exit(2)
	}
	listen, nsPath, target := os.Args[1], os.Args[2], os.Args[3]
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8s-relay:", err)
		os.Exit(1)
	}
	dials := make(chan chan net.Conn)
	ready := make(chan error)
	// One goroutine stays on a thread inside the namespace and makes every
	// dial there; the thread is never unlocked, so it runs nothing else.
	go func() {
		runtime.LockOSThread()
		f, err := os.Open(nsPath)
		if err == nil {
			if _, _, e := syscall.RawSyscall(sysSetns, f.Fd(), syscall.CLONE_NEWNET, 0); e != 0 {
				err = e
			}
			f.Close()
		}
		ready <- err
		for reply := range dials {
			c, err := net.Dial("tcp", target)
			if err != nil {
				fmt.Fprintln(os.Stderr, "k8s-relay:", err)
				c = nil
			}
			reply <- c
		}
	}()
	if err := <-ready; err != nil {
		fmt.Fprintln(os.Stderr, "k8s-relay: enter", nsPath+":", err)
		os.Exit(1)
	}
	for {
		in, err := ln.Accept()
		if err != nil {
			continue
		}
		go func() {
			reply := make(chan net.Conn)
			dials <- reply
			out := <-reply
			if out == nil {
				in.Close()
				return
			}
			done := make(chan struct{}, 2)
			pipe := func(dst, src net.Conn) {
				io.Copy(dst, src)
				dst.(*net.TCPConn).CloseWrite()
				done <- struct{}{}
			}
			go pipe(out, in)
			go pipe(in, out)
			<-done
			<-done
			in.Close()
			out.Close()
		}()
	}
}
GO
  printf 'module cnperf.local/relay\n\ngo 1.24.0\n' > "$rmod/go.mod"
  (cd "$rmod" && run go build -ldflags "-s -w" -o "$bin/k8s-relay.tmp" .)
  mv "$bin/k8s-relay.tmp" "$bin/k8s-relay"
  stamp k8s-relay 1
fi

# --- images: docker-archive tarballs (manifest.json + config + one
# uncompressed layer), which `ctr -n k8s.io images import` reads; written
# by hand because no daemon or registry is needed for a one-file image.
# image_tar OUT REF FILE ENTRYPOINT...
image_tar() {
  local out=$1 ref=$2 file=$3; shift 3
  local d; d=$(mktemp -d)
  mkdir -p "$d/root" "$d/out"
  cp "$file" "$d/root/$(basename "$1")"
  chmod 755 "$d/root/$(basename "$1")"
  # Entries without a leading ./ as docker save writes them.
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$d/root" -cf "$d/layer.tar" "$(basename "$1")"
  local lsum; lsum=$(sha256sum "$d/layer.tar" | cut -d' ' -f1)
  mkdir -p "$d/out/$lsum"
  mv "$d/layer.tar" "$d/out/$lsum/layer.tar"
  local ep; ep=$(printf '"%s",' "$@"); ep=${ep%,}
  printf '{"architecture":"amd64","os":"linux","config":{"Entrypoint":[%s],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:%s"]},"history":[{"created_by":"cnperf scripts/k8s-build.sh"}]}' \
    "$ep" "$lsum" > "$d/config.json"
  local csum; csum=$(sha256sum "$d/config.json" | cut -d' ' -f1)
  mv "$d/config.json" "$d/out/$csum.json"
  printf '[{"Config":"%s.json","RepoTags":["%s"],"Layers":["%s/layer.tar"]}]' "$csum" "$ref" "$lsum" > "$d/out/manifest.json"
  tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -C "$d/out" -cf "$out.tmp" manifest.json "$csum.json" "$lsum"
  mv "$out.tmp" "$out"
  rm -rf "$d"
}
image_tar "$img/pause.tar" "$PAUSE_IMAGE" "$bin/pause" /pause
echo "$PAUSE_IMAGE" > "$img/pause.ref"
if [ -n "$cnperf_bin" ]; then
  image_tar "$img/cnperf.tar" "$WORKLOAD_IMAGE" "$cnperf_bin" /cnperf
  echo "$WORKLOAD_IMAGE" > "$img/cnperf.ref"
  log "workload image $WORKLOAD_IMAGE from $cnperf_bin"
fi
echo "$vdir"
