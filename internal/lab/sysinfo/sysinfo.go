// Package sysinfo describes the system a run measured: the machine (kernel,
// CPU, memory) and, per namespace, every link with its type, MTU, driver,
// addresses and offloads, the TCP buffer sysctls and the firewall. Stored
// with every run, it lets a result be re-analysed years later.
package sysinfo

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"

	"github.com/safchain/ethtool"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/cost"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/record"
)

// Machine is record.Machine: stored with the run.
type Machine = record.Machine

// DescribeMachine reads the machine's description; missing pieces stay empty.
func DescribeMachine() Machine {
	m := Machine{Arch: runtime.GOARCH, CPUs: runtime.NumCPU(), GoVersion: runtime.Version()}
	m.Hostname, _ = os.Hostname()
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		m.Kernel = unix.ByteSliceToString(u.Release[:])
		m.KernelBuild = unix.ByteSliceToString(u.Version[:])
	}
	m.OS = osRelease()
	m.CPUModel = cpuModel()
	m.MemTotal, _ = cost.MemInfo("MemTotal:")
	if out, err := exec.Command("iptables", "--version").Output(); err == nil {
		m.Iptables = strings.TrimSpace(string(out))
	}
	return m
}

func osRelease() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "PRETTY_NAME="); ok {
			return strings.Trim(v, `"`)
		}
	}
	return ""
}

func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if k, v, ok := strings.Cut(s.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// Sysctls are the per-namespace settings that shape TCP and forwarding.
var Sysctls = []string{
	"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.core.rmem_default", "net.core.rmem_max",
	"net.core.wmem_default", "net.core.wmem_max", "net.ipv4.tcp_congestion_control",
	"net.ipv4.tcp_window_scaling", "net.ipv4.tcp_timestamps", "net.ipv4.tcp_sack",
	"net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_mtu_probing", "net.core.somaxconn",
	"net.ipv4.ip_forward", "net.core.default_qdisc", "net.ipv6.conf.all.disable_ipv6",
	"net.bridge.bridge-nf-call-iptables", "net.bridge.bridge-nf-call-arptables", "net.netfilter.nf_conntrack_max",
}

// offloadFeatures are the ethtool features that change a datapath's cost,
// under the kernel's names, with ethtool -k's short names.
var offloadFeatures = map[string]string{
	"tx-tcp-segmentation":     "tso",
	"tx-generic-segmentation": "gso",
	"rx-gro":                  "gro",
	"rx-lro":                  "lro",
	"tx-checksum-ip-generic":  "tx-checksum",
	"rx-checksum":             "rx-checksum",
	"tx-scatter-gather":       "sg",
	"tx-udp-segmentation":     "tx-udp-segmentation",
	"rx-udp-gro-forwarding":   "rx-udp-gro-forwarding",
	"rx-gro-list":             "rx-gro-list",
}

// Link is record.Link: stored with the run.
type Link = record.Link

// Netns is record.Netns: stored with the run.
type Netns = record.Netns

// DescribeNetns describes a named namespace; withSysctls adds the sysctls.
func DescribeNetns(name string, withSysctls bool) (Netns, error) {
	out := Netns{Name: name}
	h, err := namespace.Handle(name)
	if err != nil {
		return out, err
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		return out, fmt.Errorf("list links in %s: %w", name, err)
	}
	byIndex := map[int]string{}
	for _, l := range links {
		byIndex[l.Attrs().Index] = l.Attrs().Name
	}
	for _, l := range links {
		a := l.Attrs()
		if a.Name == "lo" {
			continue
		}
		li := Link{Name: a.Name, Type: l.Type(), MTU: a.MTU, State: a.OperState.String(), Alias: a.Alias, Master: byIndex[a.MasterIndex]}
		if len(a.HardwareAddr) > 0 {
			li.MAC = a.HardwareAddr.String()
		}
		if addrs, err := h.AddrList(l, unix.AF_INET); err == nil {
			for _, ad := range addrs {
				li.Addrs = append(li.Addrs, ad.IPNet.String())
			}
		}
		switch v := l.(type) {
		case *netlink.Vxlan:
			li.Details = fmt.Sprintf("vni=%d port=%d local=%s learning=%v", v.VxlanId, v.Port, v.SrcAddr, v.Learning)
		case *netlink.Macvlan:
			li.Details = fmt.Sprintf("mode=%d", v.Mode)
		}
		out.Links = append(out.Links, li)
	}
	sort.Slice(out.Links, func(i, j int) bool { return out.Links[i].Name < out.Links[j].Name })
	// ethtool's ioctls and /proc/sys/net answer for the calling thread's namespace.
	err = namespace.Do(name, func() error {
		et, err := ethtool.NewEthtool()
		if err == nil {
			defer et.Close()
			for i := range out.Links {
				l := &out.Links[i]
				if d, err := et.DriverName(l.Name); err == nil {
					l.Driver = d
				}
				if feats, err := et.Features(l.Name); err == nil {
					l.Offloads = map[string]bool{}
					for k, short := range offloadFeatures {
						if v, ok := feats[k]; ok {
							l.Offloads[short] = v
						}
					}
				}
			}
		}
		if withSysctls {
			out.Sysctls = map[string]string{}
			for _, k := range Sysctls {
				b, err := os.ReadFile(filepath.Join("/proc/sys", strings.ReplaceAll(k, ".", "/")))
				if err == nil {
					out.Sysctls[k] = strings.Join(strings.Fields(string(b)), " ")
				}
			}
		}
		if b, err := exec.Command("iptables-save").Output(); err == nil && strings.Contains(string(b), "-A ") {
			out.Firewall = string(b)
		}
		return nil
	})
	return out, err
}

// ReceiveWindow returns the default TCP receive buffer (the middle value of
// tcp_rmem), the "standard receive window" whose multiples ppbench plots.
func ReceiveWindow(sysctls map[string]string) int {
	f := strings.Fields(sysctls["net.ipv4.tcp_rmem"])
	if len(f) != 3 {
		return 0
	}
	v, _ := strconv.Atoi(f[1])
	return v
}
