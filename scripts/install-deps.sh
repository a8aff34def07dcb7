#!/usr/bin/env bash
# Installs what cnperf needs on a Debian machine, only what is missing:
# iproute2, iptables and ethtool for the labs, docker.io for the docker
# driver, openvswitch-switch for the ovs mode, and a Go toolchain >= 1.26.7
# (what go.mod and the OpenMetrics check module ask for; from the Go module
# proxy, as `GOTOOLCHAIN` would fetch it, when the machine has none or an
# older one). Arguments add extras: `bench` (wrk,
# nginx), `browser` (chromium, for the report's browser test) and `k8s`
# (containerd, the CNI plugins, conntrack, runc and nft, for the test cluster of
# `cnperf cluster`; docs/kubernetes.md), `flannel` (gcc, for the cgo
# build of flanneld by scripts/flannel-build.sh; docs/labs.md) and `cilium`
# (clang-19 and llc-19, with which the Cilium agent compiles its BPF
# programs at run time, and ipset, which it keeps node addresses in; the
# test cluster's --cni cilium-*; docs/kubernetes.md) and `profile` (linux-perf,
# for the condition profile: on; docs/results.md).
# Prints the go binary to use.
set -euo pipefail

need_pkgs=()
command -v ip >/dev/null || need_pkgs+=(iproute2)
command -v iptables >/dev/null || need_pkgs+=(iptables)
command -v ethtool >/dev/null || need_pkgs+=(ethtool)
command -v curl >/dev/null || need_pkgs+=(curl)
command -v unzip >/dev/null || need_pkgs+=(unzip)
command -v python3 >/dev/null || need_pkgs+=(python3) # the benchmarks' statistics, test servers
# The docker driver: dockerd, containerd and runc (Debian's docker.io).
command -v dockerd >/dev/null || need_pkgs+=(docker.io)
# The ovs mode: Open vSwitch's daemons, which cnperf starts per lab itself.
command -v ovs-vswitchd >/dev/null || need_pkgs+=(openvswitch-switch)
for extra in "$@"; do
  case "$extra" in
    bench) command -v wrk >/dev/null || need_pkgs+=(wrk)
           command -v nginx >/dev/null || need_pkgs+=(nginx-light) ;;
    browser) command -v chromium >/dev/null || need_pkgs+=(chromium fonts-dejavu-core) ;;
    # flanneld's UDP backend is a C proxy on TUN: its build needs cgo.
    flannel) command -v gcc >/dev/null || need_pkgs+=(gcc) ;;
    profile) command -v perf >/dev/null || need_pkgs+=(linux-perf) ;;
    # Cilium's agent wants clang and llc >= 18.1; Debian 12 has 19.
    cilium) command -v clang-19 >/dev/null || need_pkgs+=(clang-19)
            command -v llc-19 >/dev/null || need_pkgs+=(llvm-19)
            command -v ipset >/dev/null || need_pkgs+=(ipset) ;;
    # The test cluster: containerd with its CRI plugin per node, the bridge,
    # host-local, loopback and portmap CNI plugins, conntrack for
    # kube-proxy, runc as the OCI runtime, nft for kube-proxy's nftables
    # mode.
    k8s) command -v containerd >/dev/null || need_pkgs+=(containerd)
         [ -x /usr/lib/cni/bridge ] || need_pkgs+=(containernetworking-plugins)
         command -v conntrack >/dev/null || need_pkgs+=(conntrack)
         command -v runc >/dev/null || need_pkgs+=(runc)
         command -v openssl >/dev/null || need_pkgs+=(openssl)
         command -v nsenter >/dev/null || need_pkgs+=(util-linux)
         command -v nft >/dev/null || need_pkgs+=(nftables) ;;
  esac
done
if [ ${#need_pkgs[@]} -gt 0 ]; then
  echo "install-deps: apt-get install ${need_pkgs[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Packages with daemons (docker.io, openvswitch-switch) must not start
  # them: cnperf starts its own, inside its labs. Debian's policy-rc.d says
  # so to the packages' scripts; one made here is removed again.
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
    chmod 755 /usr/sbin/policy-rc.d
    trap 'rm -f /usr/sbin/policy-rc.d' EXIT
  fi
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends "${need_pkgs[@]}" >&2
fi

want=1.26.7
go_ok() {
  local v
  v=$("$1" env GOVERSION 2>/dev/null | sed 's/^go//') || return 1
  [ "$(printf '%s\n%s\n' "$want" "$v" | sort -V | head -n1)" = "$want" ]
}
for g in "$(command -v go || true)" /usr/local/go/bin/go /usr/local/cnperf-go/go/bin/go; do
  if [ -n "$g" ] && [ -x "$g" ] && go_ok "$g"; then
    echo "$g"
    exit 0
  fi
done
# No usable Go: fetch the toolchain module from the Go module proxy.
ver=1.26.8
arch=$(dpkg --print-architecture 2>/dev/null || echo amd64)
url="https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go${ver}.linux-${arch}.zip"
echo "install-deps: fetching Go ${ver} from the Go module proxy" >&2
tmp=$(mktemp -d)
curl -fsSL -o "$tmp/go.zip" "$url"
rm -rf /usr/local/cnperf-go
mkdir -p /usr/local/cnperf-go
unzip -q "$tmp/go.zip" -d "$tmp/x"
mv "$tmp/x/golang.org/toolchain@v0.0.1-go${ver}.linux-${arch}" /usr/local/cnperf-go/go
chmod +x /usr/local/cnperf-go/go/bin/* /usr/local/cnperf-go/go/pkg/tool/*/* 2>/dev/null || true
rm -rf "$tmp"
echo /usr/local/cnperf-go/go/bin/go
