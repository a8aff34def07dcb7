package flannel

import (
	"net/netip"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSubnetEnv(t *testing.T) {
	for _, c := range []struct {
		name, in string
		want     SubnetEnv
		err      string
	}{
		{name: "as flanneld writes it", in: "FLANNEL_NETWORK=198.19.128.0/17\nFLANNEL_SUBNET=198.19.150.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n",
			want: SubnetEnv{Network: netip.MustParsePrefix("198.19.128.0/17"), Subnet: netip.MustParsePrefix("198.19.150.1/24"), MTU: 1450}},
		{name: "ipv6 keys and blanks pass", in: "# x\n\nFLANNEL_SUBNET=198.19.129.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPV6_NETWORK=2001:2::/48\nFLANNEL_IPMASQ=true",
			want: SubnetEnv{Subnet: netip.MustParsePrefix("198.19.129.1/24"), MTU: 1472, IPMasq: true}},
		{name: "no subnet", in: "FLANNEL_MTU=1450\n", err: "no FLANNEL_SUBNET"},
		{name: "no mtu", in: "FLANNEL_SUBNET=198.19.150.1/24\n", err: "no FLANNEL_MTU"},
		{name: "not key=value", in: "FLANNEL_SUBNET\n", err: "line 1"},
		{name: "twice", in: "FLANNEL_MTU=1450\nFLANNEL_MTU=1400\nFLANNEL_SUBNET=198.19.150.1/24", err: "second time"},
		{name: "mtu too small", in: "FLANNEL_SUBNET=198.19.150.1/24\nFLANNEL_MTU=10", err: "68..65535"},
		{name: "mtu not a number", in: "FLANNEL_SUBNET=198.19.150.1/24\nFLANNEL_MTU=x", err: "FLANNEL_MTU"},
		{name: "ipv6 subnet", in: "FLANNEL_SUBNET=2001:2::1/64\nFLANNEL_MTU=1450", err: "not an IPv4 subnet"},
		{name: "subnet of one address", in: "FLANNEL_SUBNET=198.19.150.1/32\nFLANNEL_MTU=1450", err: "at least 4"},
		{name: "subnet outside the network", in: "FLANNEL_NETWORK=198.19.128.0/17\nFLANNEL_SUBNET=198.19.1.1/24\nFLANNEL_MTU=1450", err: "not inside"},
		{name: "network not masked", in: "FLANNEL_NETWORK=198.19.128.1/17\nFLANNEL_SUBNET=198.19.150.1/24\nFLANNEL_MTU=1450", err: "FLANNEL_NETWORK"},
		{name: "too long", in: strings.Repeat("#", MaxSubnetEnv+1), err: "bytes"},
	} {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParseSubnetEnv([]byte(c.in))
			if c.err != "" {
				if err == nil || !strings.Contains(err.Error(), c.err) {
					t.Fatalf("error %v, want one saying %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Fatalf("got %+v, want %+v", got, c.want)
			}
		})
	}
}

func TestLease(t *testing.T) {
	e := SubnetEnv{Subnet: netip.MustParsePrefix("198.19.150.1/24")}
	if got := e.Lease().String(); got != "198.19.150.0/24" {
		t.Fatalf("lease %s", got)
	}
}

func FuzzParseSubnetEnv(f *testing.F) {
	f.Add([]byte("FLANNEL_NETWORK=198.19.128.0/17\nFLANNEL_SUBNET=198.19.150.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n"))
	f.Add([]byte("FLANNEL_SUBNET=1.2.3.4/30\nFLANNEL_MTU=68"))
	f.Add([]byte("=\n#\nFLANNEL_MTU==\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := ParseSubnetEnv(b)
		if err != nil {
			if err.Error() == "" || strings.Contains(err.Error(), "\n") {
				t.Fatalf("error %q is not one line", err)
			}
			return
		}
		// What it accepts is what the modes rely on.
		if !e.Subnet.Addr().Is4() || e.Subnet.Bits() > 30 || e.MTU < 68 || e.MTU > 65535 {
			t.Fatalf("accepted %+v", e)
		}
		if e.Network.IsValid() && !e.Network.Contains(e.Subnet.Addr()) {
			t.Fatalf("accepted a subnet outside its network: %+v", e)
		}
		if !e.Lease().Contains(e.Subnet.Addr()) {
			t.Fatalf("lease %s does not hold %s", e.Lease(), e.Subnet)
		}
	})
}

func TestReadSubnetEnv(t *testing.T) {
	p := filepath.Join(t.TempDir(), "subnet.env")
	if _, err := ReadSubnetEnv(p); !os.IsNotExist(err) {
		t.Fatalf("missing file: %v", err)
	}
	if err := os.WriteFile(p, []byte(strings.Repeat("#\n", MaxSubnetEnv)), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ReadSubnetEnv(p); err == nil {
		t.Fatal("an oversized file was read")
	}
}

func TestConfig(t *testing.T) {
	good := Config{Network: "198.19.128.0/17", SubnetLen: 24, SubnetMin: "198.19.129.0", SubnetMax: "198.19.254.0", Backend: Backend{Type: VXLAN}}
	if err := good.Check(); err != nil {
		t.Fatal(err)
	}
	if n := good.Leases(); n != 126 {
		t.Fatalf("%d leases, want 126", n)
	}
	if got, want := string(good.JSON()), `{"Network":"198.19.128.0/17","SubnetLen":24,"SubnetMin":"198.19.129.0","SubnetMax":"198.19.254.0","Backend":{"Type":"vxlan"}}`; got != want {
		t.Fatalf("JSON %s, want %s", got, want)
	}
	for _, c := range []struct {
		name string
		edit func(*Config)
		err  string
	}{
		{"ipv6 network", func(c *Config) { c.Network = "2001:2::/48" }, "not an IPv4 network"},
		{"network not masked", func(c *Config) { c.Network = "198.19.128.1/17" }, "not an IPv4 network"},
		{"subnet as large as the network", func(c *Config) { c.SubnetLen = 17 }, "longer"},
		{"min outside", func(c *Config) { c.SubnetMin = "198.19.1.0" }, "198.19.1.0"},
		{"min not a subnet", func(c *Config) { c.SubnetMin = "198.19.129.5" }, "198.19.129.5"},
		{"max below min", func(c *Config) { c.SubnetMax = "198.19.128.0" }, "below"},
		{"unknown backend", func(c *Config) { c.Backend.Type = "ipip" }, "ipip"},
		{"mtu on udp", func(c *Config) { c.Backend = Backend{Type: UDP, MTU: 1400} }, "only the vxlan"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cfg := good
			c.edit(&cfg)
			if err := cfg.Check(); err == nil || !strings.Contains(err.Error(), c.err) {
				t.Fatalf("error %v, want one saying %q", err, c.err)
			}
		})
	}
}

func TestBinaryMissingNamesTheBuild(t *testing.T) {
	t.Setenv(CacheEnv, t.TempDir())
	_, err := Binary()
	if err == nil || !strings.Contains(err.Error(), BuildCommand) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("error %v, want one line naming %s", err, BuildCommand)
	}
	// A binary without the stamp is an unfinished build.
	bin := filepath.Join(os.Getenv(CacheEnv), Version, "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "flanneld"), []byte("#!/bin/sh\necho "+Version+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := Binary(); err == nil {
		t.Fatal("a build without its stamp was taken")
	}
	if err := os.WriteFile(filepath.Join(bin, ".flanneld.stamp"), []byte(Version+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Binary()
	if err != nil {
		t.Fatal(err)
	}
	if v, err := BinaryVersion(p); err != nil || v != Version {
		t.Fatalf("version %q, %v", v, err)
	}
}
