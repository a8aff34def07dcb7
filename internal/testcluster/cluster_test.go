package testcluster

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	fl "github.com/cnperf/cnperf/internal/lab/flannel"
	"github.com/cnperf/cnperf/internal/lab/kube/ciliumoff"
	"github.com/cnperf/cnperf/internal/lab/sysinfo"
)

// hasAll is a kernel with every option Cilium's features want.
var hasAll = sysinfo.KernelConfig{"CONFIG_NET_SCH_FQ": "y", "CONFIG_WIREGUARD": "m", "CONFIG_INET_ESP": "y"}

// TestValidate: every bad flag is refused in one line that names the flag
// (or the name) as the user wrote it, before the machine is looked at.
func TestValidate(t *testing.T) {
	good := DefaultOptions()
	good.Name = "t1"
	cases := []struct {
		name string
		edit func(*Options)
		want string // "" : valid
	}{
		{"defaults", func(*Options) {}, ""},
		{"flannel and nftables", func(o *Options) { o.CNI, o.ProxyMode = "flannel-vxlan", "nftables" }, ""},
		{"host-gw", func(o *Options) { o.CNI = "flannel-host-gw" }, ""},
		{"udp", func(o *Options) { o.CNI = "flannel-udp" }, ""},
		{"60 nodes", func(o *Options) { o.Nodes = 60 }, ""},
		{"cilium vxlan", func(o *Options) { o.CNI = "cilium-vxlan" }, ""},
		{"cilium native without kube-proxy", func(o *Options) { o.CNI, o.ProxyMode = "cilium-native", "none" }, ""},
		{"no kube-proxy on flannel", func(o *Options) { o.CNI, o.ProxyMode = "flannel-vxlan", "none" }, "--kube-proxy none with --cni flannel-vxlan: only Cilium"},
		{"cilium alone", func(o *Options) { o.CNI = "cilium" }, `--cni "cilium"`},
		{"ipvs", func(o *Options) { o.ProxyMode = "ipvs" }, "--kube-proxy ipvs: not supported by the test cluster yet"},
		{"unknown proxy", func(o *Options) { o.ProxyMode = "userspace" }, `--kube-proxy "userspace": want iptables, nftables or none`},
		{"unknown cni", func(o *Options) { o.CNI = "calico" }, `--cni "calico": want bridge, flannel-vxlan`},
		{"flannel alone", func(o *Options) { o.CNI = "flannel" }, `--cni "flannel"`},
		{"no nodes", func(o *Options) { o.Nodes = 0 }, "--nodes 0: want 1 to 60"},
		{"too many nodes", func(o *Options) { o.Nodes = 61 }, "--nodes 61: want 1 to 60"},
		{"dash", func(o *Options) { o.Name = "a-b" }, `cluster name "a-b"`},
		{"digit first", func(o *Options) { o.Name = "1a" }, `cluster name "1a"`},
		{"long", func(o *Options) { o.Name = strings.Repeat("a", 17) }, "cluster name"},
		{"empty", func(o *Options) { o.Name = "" }, "cluster name"},
		{"dual bridge", func(o *Options) { o.IPFamily = "dual" }, ""},
		{"dual bridge nftables", func(o *Options) { o.IPFamily, o.ProxyMode = "dual", "nftables" }, ""},
		{"dual flannel", func(o *Options) { o.IPFamily, o.CNI = "dual", "flannel-vxlan" }, "--ip-family dual: --cni flannel-vxlan is IPv4 only here"},
		{"dual cilium", func(o *Options) { o.IPFamily, o.CNI = "dual", "cilium-vxlan" }, "--ip-family dual: --cni cilium-vxlan is IPv4 only here"},
		{"ipv6 only", func(o *Options) { o.IPFamily = "ipv6" }, "--ip-family ipv6: the test cluster is ipv4 or dual"},
		{"unknown family", func(o *Options) { o.IPFamily = "IPv4" }, `--ip-family "IPv4": want ipv4 or dual`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			o := good
			c.edit(&o)
			err := o.Validate()
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error with %q", err, c.want)
			case err != nil && strings.Contains(err.Error(), "\n"):
				t.Fatalf("more than one line: %q", err)
			}
		})
	}
}

// TestFlannelBuildMissing: a flannel CNI without flanneld's build names the
// script that builds it, before anything is made.
func TestFlannelBuildMissing(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("preflight wants root first")
	}
	o := DefaultOptions()
	o.Name, o.CNI, o.FlannelCache = "t1", "flannel-vxlan", t.TempDir()
	if _, err := os.Stat(o.KubeBin()); err != nil {
		t.Skip("no Kubernetes build here")
	}
	err := o.Preflight()
	if err == nil || !strings.Contains(err.Error(), "scripts/flannel-build.sh") || !strings.HasPrefix(err.Error(), "--cni flannel-vxlan:") {
		t.Fatalf("got %v, want --cni flannel-vxlan: ... scripts/flannel-build.sh", err)
	}
}

// TestFlannelConflist: the CNI config flannel's plugin would delegate,
// from what flanneld wrote (parsed by lab/flannel, which fuzzes it): the
// lease's subnet and MTU on bridge cni0, no NAT of its own when flanneld
// masquerades.
func TestFlannelConflist(t *testing.T) {
	e, err := fl.ParseSubnetEnv([]byte("FLANNEL_NETWORK=198.18.64.0/18\nFLANNEL_SUBNET=198.18.65.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n"))
	if err != nil {
		t.Fatal(err)
	}
	var conf struct {
		Plugins []map[string]any
	}
	if err := json.Unmarshal([]byte(flannelConflist(e, "/n")), &conf); err != nil {
		t.Fatal(err)
	}
	d := conf.Plugins[0]
	if d["type"] != "bridge" || d["mtu"] != 1450.0 || d["ipMasq"] != false || d["isDefaultGateway"] != true {
		t.Fatalf("delegate %v", d)
	}
	ipam := d["ipam"].(map[string]any)
	if r := ipam["ranges"].([]any)[0].([]any)[0].(map[string]any)["subnet"]; r != "198.18.65.0/24" {
		t.Fatalf("host-local subnet %v", r)
	}
	if r := ipam["routes"].([]any)[0].(map[string]any)["dst"]; r != "198.18.64.0/18" {
		t.Fatalf("route to the pod network %v", r)
	}
}

// TestBridgeConflistDual: on a dual cluster each node's bridge config gives
// pods an address of each family from the plan (IPv4 first) and a default
// route of each; an IPv4 cluster's has IPv4 only.
func TestBridgeConflistDual(t *testing.T) {
	for _, c := range []struct {
		dual    bool
		subnets []string
		routes  []string
	}{
		{false, []string{"198.18.66.0/24"}, []string{"0.0.0.0/0"}},
		{true, []string{"198.18.66.0/24", "2001:2:0:8102::/64"}, []string{"0.0.0.0/0", "::/0"}},
	} {
		var conf struct {
			Plugins []struct {
				IPAM struct {
					Ranges [][]struct{ Subnet, Gateway string }
					Routes []struct{ Dst string }
				}
			}
		}
		if err := json.Unmarshal([]byte(bridgeConflist("t1", 2, "/n", c.dual)), &conf); err != nil {
			t.Fatalf("dual %v: %v", c.dual, err)
		}
		ipam := conf.Plugins[0].IPAM
		var subnets, routes []string
		for _, r := range ipam.Ranges {
			subnets = append(subnets, r[0].Subnet)
		}
		for _, r := range ipam.Routes {
			routes = append(routes, r.Dst)
		}
		if strings.Join(subnets, " ") != strings.Join(c.subnets, " ") || strings.Join(routes, " ") != strings.Join(c.routes, " ") {
			t.Errorf("dual %v: ranges %v routes %v, want %v and %v", c.dual, subnets, routes, c.subnets, c.routes)
		}
	}
}

// TestDualRanges: a dual cluster's Service and pod ranges are both
// families, IPv4 first (the kubernetes Service's family stays IPv4), in
// the API server's and kube-proxy's flags alike.
func TestDualRanges(t *testing.T) {
	o := DefaultOptions()
	if o.serviceRange() != "198.18.16.0/20" || o.podRange() != "198.18.64.0/18" {
		t.Fatalf("ipv4: %s %s", o.serviceRange(), o.podRange())
	}
	o.IPFamily = "dual"
	if o.serviceRange() != "198.18.16.0/20,2001:2:0:8010::/108" || o.podRange() != "198.18.64.0/18,2001:2:0:8100::/56" {
		t.Fatalf("dual: %s %s", o.serviceRange(), o.podRange())
	}
	if s := proxyConfig(o); !strings.Contains(s, "\nclusterCIDR: 198.18.64.0/18,2001:2:0:8100::/56\n") {
		t.Fatalf("kube-proxy config:\n%s", s)
	}
}

// TestProxyConfig: kube-proxy's mode is what --kube-proxy says, in the
// ConfigMap's text the kubernetes driver reads it from.
func TestProxyConfig(t *testing.T) {
	o := DefaultOptions()
	o.ProxyMode = "nftables"
	if s := proxyConfig(o); !strings.Contains(s, "\nmode: nftables\n") {
		t.Fatalf("config:\n%s", s)
	}
}

// TestCiliumOffWhy: a feature the kernel lacks is off for that reason,
// named by its kernel option, only where the kernel says it lacks it.
func TestCiliumOffWhy(t *testing.T) {
	o := DefaultOptions()
	o.CNI, o.ProxyMode = "cilium-vxlan", "iptables"
	cfg := ciliumConfig(o)
	lacking := ciliumOffWhy(cfg, ciliumHost{kernel: sysinfo.KernelConfig{"CONFIG_HZ": "250"}})
	having := ciliumOffWhy(cfg, ciliumHost{kernel: hasAll, cgroup2: true})
	silent := ciliumOffWhy(cfg, ciliumHost{})
	for key, want := range map[string]string{
		"enable-bandwidth-manager": "the kernel has no fq qdisc (CONFIG_NET_SCH_FQ)",
		"enable-wireguard":         "the kernel has no WireGuard (CONFIG_WIREGUARD)",
		"enable-ipsec":             "the kernel has no IPsec ESP (CONFIG_INET_ESP)",
	} {
		if lacking[key] != want {
			t.Errorf("%s on a kernel without it: %q, want %q", key, lacking[key], want)
		}
		for name, why := range map[string]map[string]string{"with it": having, "that does not say": silent} {
			if strings.Contains(why[key], "the kernel has no") || why[key] == "" {
				t.Errorf("%s on a kernel %s: %q, want another reason", key, name, why[key])
			}
		}
	}
	if !strings.Contains(lacking["bpf-lb-sock"], "cgroup v1") || strings.Contains(having["bpf-lb-sock"], "cgroup v1") {
		t.Errorf("bpf-lb-sock: %q on cgroup v1, %q on v2", lacking["bpf-lb-sock"], having["bpf-lb-sock"])
	}
}

// TestCiliumConfig: cilium-config says the routing the CNI asks for, and
// kube-proxy replacement only without kube-proxy, where socket load
// balancing is on for the host namespace only (pods' Services at tc).
func TestCiliumConfig(t *testing.T) {
	for _, c := range []struct {
		cni, proxy string
		want       map[string]string
		absent     []string
	}{
		{"cilium-vxlan", "iptables", map[string]string{"routing-mode": "tunnel", "tunnel-protocol": "vxlan", "kube-proxy-replacement": "false",
			"bpf-lb-sock": "false", "enable-ipv6": "false", "enable-l7-proxy": "false", "enable-bandwidth-manager": "false", "ipam": "kubernetes"},
			[]string{"ipv4-native-routing-cidr", "k8s-service-host", "bpf-lb-sock-hostns-only"}},
		{"cilium-native", "none", map[string]string{"routing-mode": "native", "ipv4-native-routing-cidr": "198.18.64.0/18", "auto-direct-node-routes": "true",
			"kube-proxy-replacement": "true", "bpf-lb-sock": "true", "bpf-lb-sock-hostns-only": "true", "k8s-service-host": "198.18.0.1", "k8s-service-port": "6443"},
			[]string{"tunnel-protocol"}},
	} {
		o := DefaultOptions()
		o.CNI, o.ProxyMode = c.cni, c.proxy
		cfg := ciliumConfig(o)
		for k, v := range c.want {
			if cfg[k] != v {
				t.Errorf("%s %s: %s = %q, want %q", c.cni, c.proxy, k, cfg[k], v)
			}
		}
		for _, k := range c.absent {
			if _, ok := cfg[k]; ok {
				t.Errorf("%s %s: %s set, want absent", c.cni, c.proxy, k)
			}
		}
		// Every feature the driver records as off has its reason, on a
		// kernel that lacks what Cilium wants, one that has it, and one
		// that does not say; and nothing on is given one.
		for _, h := range []ciliumHost{{kernel: sysinfo.KernelConfig{}}, {kernel: hasAll, cgroup2: true}, {}} {
			why := ciliumOffWhy(cfg, h)
			off := ciliumoff.Off(cfg)
			for _, k := range off {
				if why[k] == "" {
					t.Errorf("%s %s, kernel %v: %s off without a reason", c.cni, c.proxy, h.kernel, k)
				}
			}
			if len(why) != len(off) {
				t.Errorf("%s %s: reasons %v for the features off %v", c.cni, c.proxy, why, off)
			}
		}
	}
}
