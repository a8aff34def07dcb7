// Package flannel is the real Flannel as cnperf runs it: where the pinned
// flanneld build is and which version it reports, the network
// configuration Flannel reads (from etcd, or a net-conf.json), and the
// subnet.env each flanneld writes once it has leased its host's subnet.
// It starts nothing: the lab's flannel modes (internal/lab/modes/flannel)
// start flanneld and etcd with it, and so can anything else that runs
// flanneld (a cluster's CNI).
//
// The small API:
//
//	Binary()             the cached flanneld of Version, or one line naming BuildCommand
//	BinaryVersion(path)  what `flanneld --version` says
//	Config, LabConfig    the network configuration, as Flannel's JSON
//	ParseSubnetEnv       subnet.env (a foreign daemon's file: bounded, strict)
//	Etcd(), EtcdPut      an etcd to hold the configuration, written through its JSON gateway
package flannel

import (
	"context"
	"errors"
	"fmt"
	"github.com/cnperf/cnperf/internal/lab/process"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Version is the flanneld cnperf builds (scripts/flannel-build.sh) and
// runs.
const Version = "v0.28.10"

// BuildCommand builds Version into the cache.
const BuildCommand = "scripts/flannel-build.sh"

// CacheEnv overrides DefaultCache, as it does for BuildCommand.
const (
	CacheEnv     = "CNPERF_FLANNEL_CACHE"
	DefaultCache = "/var/cache/cnperf/flannel"
)

// Backends cnperf runs: what this kernel carries (no IPIP, WireGuard or
// ESP here).
const (
	VXLAN  = "vxlan"
	UDP    = "udp"
	HostGW = "host-gw"
)

// Binary returns the cached flanneld of Version: CACHE/VERSION/bin/flanneld
// with the stamp BuildCommand writes once the build says Version. A
// missing or unfinished build is one line that names the command that
// builds it.
func Binary() (string, error) {
	cache := os.Getenv(CacheEnv)
	if cache == "" {
		cache = DefaultCache
	}
	bin := filepath.Join(cache, Version, "bin", "flanneld")
	stamp, err := os.ReadFile(filepath.Join(filepath.Dir(bin), ".flanneld.stamp"))
	fi, serr := os.Stat(bin)
	if err != nil || serr != nil || strings.TrimSpace(string(stamp)) != Version || fi.Mode()&0o111 == 0 {
		return "", fmt.Errorf("flanneld %s is not built in %s (%s builds it, about 2 minutes)", Version, cache, BuildCommand)
	}
	return bin, nil
}

// BinaryVersion is what flanneld at path says its version is (`--version`,
// which it prints to stderr).
func BinaryVersion(path string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, path, "--version").CombinedOutput()
	v := strings.TrimSpace(string(out))
	if err != nil {
		return "", fmt.Errorf("%s --version: %v: %s", path, err, process.LastLine(out))
	}
	if v == "" || len(v) > 64 || strings.ContainsAny(v, " \n\t") {
		return "", fmt.Errorf("%s --version: unexpected answer %q", path, process.LastLine(out))
	}
	return v, nil
}

// EtcdVersion is the etcd build the test cluster's build caches
// (scripts/k8s-build.sh); its Kubernetes version names the cache dir.
const (
	etcdK8sVersion = "v1.34.4"
	etcdEnv        = "CNPERF_K8S_CACHE"
	etcdCache      = "/var/cache/cnperf/k8s"
)

// Etcd returns an etcd v3 server binary: the one scripts/k8s-build.sh
// caches for the test cluster, else an etcd on PATH (Debian's
// etcd-server). Missing both is one line naming what provides one.
func Etcd() (string, error) {
	cache := os.Getenv(etcdEnv)
	if cache == "" {
		cache = etcdCache
	}
	bin := filepath.Join(cache, etcdK8sVersion, "bin", "etcd")
	if fi, err := os.Stat(bin); err == nil && fi.Mode()&0o111 != 0 {
		return bin, nil
	}
	if p, err := exec.LookPath("etcd"); err == nil {
		return p, nil
	}
	return "", errors.New("etcd is missing (scripts/k8s-build.sh builds one into " + cache + "; or apt-get install etcd-server)")
}
