package daemons

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab/namespace"
)

// Ready says whether role, started again at since, does its job again,
// as the daemon itself tells: the kubelet's and kube-proxy's health
// endpoints (kube-proxy's answers 200 once it has synced its rules), the
// Cilium agent's host endpoint ready (its datapath compiled and loaded,
// what up waits for), containerd's socket, flanneld's subnet file
// written anew (it has no health endpoint on the test cluster); another
// daemon is ready once it runs. An error says it exited.
func Ready(dir, role string, since time.Time) (bool, error) {
	r, err := find(dir, role)
	if err != nil {
		return false, err
	}
	if r.Gone() {
		return false, fmt.Errorf("%s exited (logs/%s.log)", role, role)
	}
	b, err := os.ReadFile(launchFile(dir, role))
	var d Daemon
	if err != nil || json.Unmarshal(b, &d) != nil {
		return false, fmt.Errorf("how %s was started: unreadable", role)
	}
	host, daemon, _ := strings.Cut(role, "-")
	switch daemon {
	case "kubelet":
		return healthz(d.NS, "127.0.0.1:10248"), nil
	case "kube-proxy":
		return healthz(d.NS, "127.0.0.1:10256"), nil
	case "containerd":
		c, err := net.DialTimeout("unix", filepath.Join(dir, host, "containerd.sock"), time.Second)
		if err == nil {
			c.Close()
		}
		return err == nil, nil
	case "cilium-agent":
		return CiliumReady(fmt.Sprintf("/proc/%d/root/run/cilium/cilium.sock", r.PID)), nil
	case "flanneld":
		fi, err := os.Stat(filepath.Join(dir, host, "subnet.env"))
		return err == nil && !fi.ModTime().Before(since), nil
	}
	return true, nil
}

// healthz asks a daemon's health endpoint on the loopback of network
// namespace ns.
func healthz(ns, addr string) bool {
	c := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, network, _ string) (conn net.Conn, err error) {
		err = namespace.Do(ns, func() error {
			var d net.Dialer
			conn, err = d.DialContext(ctx, network, addr)
			return err
		})
		return conn, err
	}}}
	return get(c, "http://"+addr+"/healthz")
}

func get(c *http.Client, url string) bool {
	resp, err := c.Get(url)
	if err != nil {
		return false
	}
	resp.Body.Close()
	c.CloseIdleConnections()
	return resp.StatusCode == http.StatusOK
}

// CiliumReady asks a Cilium agent's API (its socket sock) whether the
// host's endpoint (identity 1) is ready: the agent answers healthy and
// writes its CNI config before its datapath is compiled and loaded.
func CiliumReady(sock string) bool {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "unix", sock)
	}}}
	resp, err := c.Get("http://cilium/v1/endpoint")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	defer c.CloseIdleConnections()
	var eps []struct {
		Status struct {
			State    string
			Identity struct{ ID int }
		}
	}
	if resp.StatusCode != http.StatusOK || json.NewDecoder(io.LimitReader(resp.Body, 16<<20)).Decode(&eps) != nil {
		return false
	}
	for _, ep := range eps {
		if ep.Status.Identity.ID == 1 && ep.Status.State == "ready" {
			return true
		}
	}
	return false
}
