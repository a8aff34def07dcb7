package firewall

import "testing"

// TestForAddr: a rule builder picks the family's tables from the address
// it is given, and the family's program with it.
func TestForAddr(t *testing.T) {
	for _, c := range []struct {
		addr    string
		v6      bool
		restore string
	}{
		{"198.19.1.0/24", false, "iptables-restore"},
		{"198.19.1.2", false, "iptables-restore"},
		{"2001:2:0:1001::/64", true, "ip6tables-restore"},
		{"2001:2:0:1001::2", true, "ip6tables-restore"},
		{"::1/128", true, "ip6tables-restore"},
	} {
		f := ForAddr("ns", "cnperf:x", c.addr)
		if f.IPv6() != c.v6 || f.binary("-restore") != c.restore {
			t.Errorf("%s: IPv6 %v, program %s; want %v, %s", c.addr, f.IPv6(), f.binary("-restore"), c.v6, c.restore)
		}
	}
}

// TestRestore: a batch reads as iptables-restore input, table by table in
// first use, each rule with the owner's comment and quoted where the
// parser would split it; the IPv6 batch is the same text.
func TestRestore(t *testing.T) {
	for _, f := range []*Firewall{New("ns", "cnperf:lab one"), New6("ns", "cnperf:lab one")} {
		r := f.Rules()
		r.NewChain("nat", "CNPERF")
		r.Append("nat", "PREROUTING", "-j", "CNPERF")
		r.Append("filter", "FORWARD", "-o", "cnbr0", "-j", "ACCEPT")
		r.Append("nat", "OUTPUT", "-j", "CNPERF")
		want := `*nat
-N CNPERF
-A PREROUTING -j CNPERF -m comment --comment "cnperf:lab one"
-A OUTPUT -j CNPERF -m comment --comment "cnperf:lab one"
COMMIT
*filter
-A FORWARD -o cnbr0 -j ACCEPT -m comment --comment "cnperf:lab one"
COMMIT
`
		if got := r.Restore(); got != want {
			t.Errorf("IPv6 %v: restore\n%s\nwant\n%s", f.IPv6(), got, want)
		}
	}
}
