package netdev

import (
	"net"
	"strings"
	"testing"
)

// TestPublishChainsRules: the chains Docker lays out, in IPv4's tables
// for an IPv4 subnet and in IPv6's (NAT66) for an IPv6 one, which differ
// only in the loopback OUTPUT leaves alone, the subnet and the sysctl that
// turns forwarding on.
func TestPublishChainsRules(t *testing.T) {
	for _, c := range []struct {
		subnet  string
		hairpin bool
		v6      bool
		sysctl  string
		want    string
	}{
		{"198.19.1.0/24", false, false, "net.ipv4.ip_forward", `*nat
-N CNPERF
-A PREROUTING -m addrtype --dst-type LOCAL -j CNPERF -m comment --comment cnperf:l
-A OUTPUT ! -d 127.0.0.0/8 -m addrtype --dst-type LOCAL -j CNPERF -m comment --comment cnperf:l
-A POSTROUTING -s 198.19.1.0/24 ! -o cnbr0 -j MASQUERADE -m comment --comment cnperf:l
COMMIT
*filter
-N CNPERF
-A FORWARD -o cnbr0 -j CNPERF -m comment --comment cnperf:l
-A FORWARD -o cnbr0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT -m comment --comment cnperf:l
-A FORWARD -i cnbr0 ! -o cnbr0 -j ACCEPT -m comment --comment cnperf:l
-A FORWARD -i cnbr0 -o cnbr0 -j ACCEPT -m comment --comment cnperf:l
COMMIT
`},
		{"2001:2:0:1001::/64", true, true, "net.ipv6.conf.all.forwarding", `*nat
-N CNPERF
-A PREROUTING -m addrtype --dst-type LOCAL -j CNPERF -m comment --comment cnperf:l
-A OUTPUT ! -d ::1/128 -m addrtype --dst-type LOCAL -j CNPERF -m comment --comment cnperf:l
-A POSTROUTING -s 2001:2:0:1001::/64 ! -o cnbr0 -j MASQUERADE -m comment --comment cnperf:l
-A POSTROUTING -s 2001:2:0:1001::/64 -o cnbr0 -m conntrack --ctstate DNAT -j MASQUERADE -m comment --comment cnperf:l
COMMIT
*filter
-N CNPERF
-A FORWARD -o cnbr0 -j CNPERF -m comment --comment cnperf:l
-A FORWARD -o cnbr0 -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT -m comment --comment cnperf:l
-A FORWARD -i cnbr0 ! -o cnbr0 -j ACCEPT -m comment --comment cnperf:l
-A FORWARD -i cnbr0 -o cnbr0 -j ACCEPT -m comment --comment cnperf:l
COMMIT
`},
	} {
		r, sysctl := PublishChainsRules("l", "ns", "cnbr0", c.subnet, c.hairpin)
		if got := r.Restore(); got != c.want {
			t.Errorf("%s: rules\n%s\nwant\n%s", c.subnet, got, c.want)
		}
		if sysctl != c.sysctl {
			t.Errorf("%s: sysctl %s, want %s", c.subnet, sysctl, c.sysctl)
		}
	}
}

// TestPublishToRules: a container's published ports, each shifted, DNAT
// to its address (bracketed for IPv6, as ip6tables' --to-destination
// reads an address with a port) and accepted for it alone (/32, /128).
func TestPublishToRules(t *testing.T) {
	ports := []Port{{Number: 5000, Protocol: "tcp"}, {Number: 5001, Protocol: "udp"}}
	for _, c := range []struct {
		ctr     string
		hairpin bool
		want    []string
	}{
		{"198.19.1.3", false, []string{
			"-A CNPERF ! -i cnbr0 -p tcp --dport 5010 -j DNAT --to-destination 198.19.1.3:5010",
			"-A CNPERF ! -i cnbr0 -p udp --dport 5011 -j DNAT --to-destination 198.19.1.3:5011",
			"-A CNPERF -d 198.19.1.3/32 ! -i cnbr0 -o cnbr0 -p tcp --dport 5010 -j ACCEPT",
			"-A CNPERF -d 198.19.1.3/32 ! -i cnbr0 -o cnbr0 -p udp --dport 5011 -j ACCEPT",
		}},
		{"2001:2:0:1001::3", true, []string{
			"-A CNPERF -p tcp --dport 5010 -j DNAT --to-destination [2001:2:0:1001::3]:5010",
			"-A CNPERF -p udp --dport 5011 -j DNAT --to-destination [2001:2:0:1001::3]:5011",
			"-A CNPERF -d 2001:2:0:1001::3/128 ! -i cnbr0 -o cnbr0 -p tcp --dport 5010 -j ACCEPT",
			"-A CNPERF -d 2001:2:0:1001::3/128 ! -i cnbr0 -o cnbr0 -p udp --dport 5011 -j ACCEPT",
		}},
	} {
		r := PublishToRules("l", "ns", "cnbr0", net.ParseIP(c.ctr), 10, c.hairpin, ports...)
		var got []string
		for _, l := range strings.Split(r.Restore(), "\n") {
			if strings.HasPrefix(l, "-A ") {
				got = append(got, strings.TrimSuffix(l, " -m comment --comment cnperf:l"))
			}
		}
		if strings.Join(got, "\n") != strings.Join(c.want, "\n") {
			t.Errorf("%s: rules\n%s\nwant\n%s", c.ctr, strings.Join(got, "\n"), strings.Join(c.want, "\n"))
		}
		if !strings.HasPrefix(r.Restore(), "*nat\n") || !strings.Contains(r.Restore(), "COMMIT\n*filter\n") {
			t.Errorf("%s: tables out of order:\n%s", c.ctr, r.Restore())
		}
	}
}
