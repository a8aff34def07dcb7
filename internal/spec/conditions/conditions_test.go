package conditions

import (
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestValidate(t *testing.T) {
	tests := []struct {
		name string
		set  Set
		want string // "" for valid
	}{
		{"empty", Set{}, ""},
		{"one core, router apart", Set{Cores: 1, Router: "apart"}, ""},
		{"all", Set{Cores: 2, CPUStress: 0.5, Bandwidth: "100mbit", Offloads: "off", TCPRmem: "4096 87380 6291456", TCPWmem: "4096 16384 4194304"}, ""},
		{"more cores than the machine", Set{Cores: 4}, "cores 4: this machine has 2 CPUs"},
		{"negative cores", Set{Cores: -1}, "cores -1"},
		{"apart without cores", Set{Router: "apart"}, "router apart: needs cores"},
		{"apart needs twice the cores", Set{Cores: 2, Router: "apart"}, "needs 4 CPUs, this machine has 2"},
		{"router unknown", Set{Router: "near"}, `router "near"`},
		{"stress 1", Set{CPUStress: 1}, "cpu_stress 1"},
		{"bandwidth unit", Set{Bandwidth: "100mb/s"}, `bandwidth "100mb/s"`},
		{"bandwidth tiny", Set{Bandwidth: "10bit"}, "below 8 kbit/s"},
		{"offloads maybe", Set{Offloads: "maybe"}, `offloads "maybe"`},
		{"rmem two numbers", Set{TCPRmem: "4096 87380"}, `tcp_rmem "4096 87380"`},
		{"wmem out of order", Set{TCPWmem: "9 8 7"}, "min <= default <= max"},
		{"delay", Set{Delay: "50ms"}, ""},
		{"delay without unit", Set{Delay: "50"}, `delay "50": want a duration in (0s, 10s]`},
		{"delay above 10s", Set{Delay: "11s"}, `delay "11s": want a duration in (0s, 10s]`},
		{"delay negative", Set{Delay: "-1ms"}, `delay "-1ms"`},
		{"mtu below IPv4's minimum", Set{MTU: 500}, "mtu 500: outside 576..9000"},
		{"overlay mtu above jumbo", Set{OverlayMTU: 9001}, "overlay_mtu 9001"},
		{"mtus", Set{MTU: 9000, OverlayMTU: 8950}, ""},
		{"stress windows", Set{CPUStress: 0.5, CPUStressOn: 5 * time.Second, CPUStressOff: 5 * time.Second}, ""},
		{"stress on alone", Set{CPUStress: 0.5, CPUStressOn: 5 * time.Second}, "give both"},
		{"stress windows without stress", Set{CPUStressOn: time.Second, CPUStressOff: time.Second}, "needs cpu_stress"},
		{"bad name", Set{Name: "a b"}, `name "a b"`},
		{"stress NaN", Set{CPUStress: math.NaN()}, "cpu_stress NaN"},
		{"stress +Inf", Set{CPUStress: math.Inf(1)}, "cpu_stress +Inf"},
		{"stress -Inf", Set{CPUStress: math.Inf(-1)}, "cpu_stress -Inf"},
		{"stress period huge", Set{CPUStress: 0.5, CPUStressOn: 1000 * time.Hour, CPUStressOff: time.Second}, "cpu_stress_on 1000h0m0s: at most 24h0m0s"},
		{"bandwidth trailing space", Set{Bandwidth: "100mbit "}, `bandwidth "100mbit "`},
		{"bandwidth leading space", Set{Bandwidth: " 100mbit"}, `bandwidth " 100mbit"`},
		{"bandwidth garbage", Set{Bandwidth: "100mbit;x"}, `bandwidth "100mbit;x"`},
		{"bandwidth overflowing", Set{Bandwidth: "99999999999999999999gbit"}, `bandwidth "99999999999999999999gbit"`},
		{"bandwidth above 1000gbit", Set{Bandwidth: "2000gbit"}, "above 1000gbit"},
		{"bandwidth exponent", Set{Bandwidth: "1e9bit"}, `bandwidth "1e9bit"`},
		{"bandwidth NaN", Set{Bandwidth: "nanbit"}, `bandwidth "nanbit"`},
		{"rmem overflowing", Set{TCPRmem: "4096 87380 99999999999999999999"}, `tcp_rmem "4096 87380 99999999999999999999"`},
		{"rmem above int", Set{TCPRmem: "4096 87380 4294967296"}, "in 1..2147483647"},
		{"rmem signed", Set{TCPRmem: "+4096 87380 6291456"}, `"+4096"`},
		{"wmem trailing space", Set{TCPWmem: "4096 16384 4194304 "}, "spaces around it"},
		{"profile", Set{Profile: "on", ProfileHz: 999}, ""},
		{"profile maybe", Set{Profile: "yes"}, `profile "yes": use on or off`},
		{"profile_hz below", Set{Profile: "on", ProfileHz: 48}, "profile_hz 48: want 49..999"},
		{"profile_hz above", Set{ProfileHz: 1000}, "profile_hz 1000"},
		{"policy none", Set{NetworkPolicy: "none"}, ""},
		{"policy allow", Set{NetworkPolicy: "allow"}, ""},
		{"policy allow of 1000 rules", Set{NetworkPolicy: "allow", PolicyRules: 1000}, ""},
		{"policy rules alone", Set{PolicyRules: 10}, ""},
		{"policy deny", Set{NetworkPolicy: "deny"}, `network_policy "deny": use none, allow or probe`},
		{"policy probe", Set{NetworkPolicy: "probe"}, ""},
		{"policy rules with probe", Set{NetworkPolicy: "probe", PolicyRules: 3}, "policy_rules 3 with network_policy probe"},
		{"policy rules over the bound", Set{PolicyRules: 1001}, "policy_rules 1001: want 1..1000"},
		{"policy rules negative", Set{PolicyRules: -1}, "policy_rules -1: want 1..1000"},
		{"services at the bound", Set{Services: 20000}, ""},
		{"services over the bound", Set{Services: 20001}, "services 20001: want 0..20000"},
		{"services negative", Set{Services: -1}, "services -1: want 0..20000"},
		{"conntrack_max", Set{ConntrackMax: 1500}, ""},
		{"conntrack_max below", Set{ConntrackMax: 255}, "conntrack_max 255: want 256..16777216"},
		{"conntrack_max above", Set{ConntrackMax: 1<<24 + 1}, "conntrack_max 16777217: want 256..16777216"},
		{"ipv6", Set{IPFamily: "ipv6"}, ""},
		{"dual", Set{IPFamily: "dual"}, ""},
		{"ipv4", Set{IPFamily: "ipv4"}, ""},
		{"family spelled as a number", Set{IPFamily: "6"}, `ip_family "6": use ipv4, ipv6 or dual`},
		{"policy rules without a policy", Set{NetworkPolicy: "none", PolicyRules: 10}, "policy_rules 10 with network_policy none"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.set.Validate(2)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("Validate: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("Validate = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestParseRate(t *testing.T) {
	tests := []struct {
		in   string
		want uint64
	}{
		{"100mbit", 100e6}, {"1gbit", 1e9}, {"64kbit", 64e3}, {"12.5mbps", 100e6}, {"1000000", 1e6}, {"2Mbit", 2e6}, {"1000gbit", 1e12}, {"1.5GBit", 1.5e9},
	}
	for _, tc := range tests {
		if got, err := ParseRate(tc.in); err != nil || got != tc.want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"", "fast", "-1mbit", "0", "10furlongs", "100mbit ", "\t100mbit", "1e9", "inf", "0x10mbit", "1001gbit", "99999999999999999999gbit", "1..2mbit"} {
		if _, err := ParseRate(bad); err == nil {
			t.Errorf("ParseRate(%q) succeeded", bad)
		}
	}
}

func TestLabelOverAndCPUs(t *testing.T) {
	base := Set{Cores: 1, Bandwidth: "100mbit"}
	v := base.Over(Set{Router: "apart", TCPRmem: "4096 87380 174760"})
	if got := v.Label(); got != "cores=1,router=apart,bw=100mbit,rmem=4096:87380:174760" {
		t.Errorf("Label = %q", got)
	}
	if got := base.Over(Set{MTU: 1400, OverlayMTU: 1350}).Label(); got != "cores=1,bw=100mbit,mtu=1400,ovmtu=1350" {
		t.Errorf("Label with MTUs = %q", got)
	}
	if got := (Set{Cluster: "ipt", Services: 1000}).Label(); got != "ipt,svc=1000" {
		t.Errorf("services label = %q", got)
	}
	if got := base.Over(Set{Name: "slow"}).Label(); got != "slow" {
		t.Errorf("named Label = %q", got)
	}
	if !(Set{Name: "x"}).Empty() || base.Empty() {
		t.Error("Empty: a name alone changes nothing; cores do")
	}
	if h, r := v.HostCPUs(), v.RouterCPUs(); len(h) != 1 || h[0] != 0 || len(r) != 1 || r[0] != 1 {
		t.Errorf("apart: host %v, router %v", h, r)
	}
	if h, r := base.HostCPUs(), base.RouterCPUs(); len(r) != 1 || r[0] != h[0] {
		t.Errorf("same: host %v, router %v", h, r)
	}
	if (Set{}).HostCPUs() != nil {
		t.Error("no cores: no pinning")
	}
}

// TestOverTakesEveryField fills every field of a variant and checks that
// Over carries each one: a field added to Set and forgotten in Over fails.
func TestOverTakesEveryField(t *testing.T) {
	var v Set
	rv := reflect.ValueOf(&v).Elem()
	for i := range rv.NumField() {
		f := rv.Field(i)
		switch f.Kind() {
		case reflect.String:
			f.SetString("x")
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.Float64:
			f.SetFloat(0.5)
		default:
			t.Fatalf("field %s: kind %s not covered by this test", rv.Type().Field(i).Name, f.Kind())
		}
	}
	if got := (Set{}).Over(v); got != v {
		t.Errorf("Over dropped fields:\n got %+v\nwant %+v", got, v)
	}
	if got := v.Over(Set{}); got != v {
		t.Errorf("an empty variant changed the set: %+v", got)
	}
}

func TestCongestion(t *testing.T) {
	if got := (Set{}).Congestion(); got != DefaultCongestion {
		t.Errorf("default congestion control %q, want %q", got, DefaultCongestion)
	}
	if got := (Set{TCPCongestion: "bbr"}).Congestion(); got != "bbr" {
		t.Errorf("congestion control %q, want bbr", got)
	}
	avail := []string{"reno", "cubic", "bbr"}
	for _, tc := range []struct {
		cc    string
		avail []string
		ok    bool
	}{
		{"cubic", avail, true},
		{"bbr", avail, true},
		{"vegas", avail, false}, // not in this kernel
		{"vegas", nil, true},    // list unreadable: the form alone
		{"Cubic", avail, false},
		{"cubic ", avail, false},
		{"", avail, false},
		{"a-very-long-name-indeed", nil, false},
	} {
		if err := checkCongestion(tc.cc, tc.avail); (err == nil) != tc.ok {
			t.Errorf("checkCongestion(%q, %v) = %v, want ok %v", tc.cc, tc.avail, err, tc.ok)
		}
	}
	if err := (Set{TCPCongestion: "no such"}).Validate(2); err == nil || !strings.Contains(err.Error(), "tcp_congestion") {
		t.Errorf("a bad tcp_congestion: %v", err)
	}
}

func TestPolicy(t *testing.T) {
	tests := []struct {
		set    Set
		on     bool
		rules  int
		probes bool
		label  string
	}{
		{Set{}, false, 0, false, ""},
		{Set{NetworkPolicy: "none"}, false, 0, false, "policy=none"},
		{Set{NetworkPolicy: "probe"}, false, 0, true, "policy=probe"},
		{Set{NetworkPolicy: "allow"}, true, 1, true, "policy=allow"},
		{Set{PolicyRules: 100}, true, 100, true, "rules=100"},
		{Set{NetworkPolicy: "allow", PolicyRules: 10}, true, 10, true, "policy=allow,rules=10"},
	}
	for _, tc := range tests {
		on, rules := tc.set.Policy()
		if on != tc.on || rules != tc.rules || tc.set.Probes() != tc.probes || tc.set.Label() != tc.label {
			t.Errorf("%+v: Policy %v %d, Probes %v, Label %q; want %v %d %v %q", tc.set, on, rules, tc.set.Probes(), tc.set.Label(), tc.on, tc.rules, tc.probes, tc.label)
		}
	}
}

// TestSameIn: sets compare only in the conditions named, by their spec
// names, and every field of Set has one.
func TestSameIn(t *testing.T) {
	a := Set{Name: "a", NodePlacement: CrossNode, Cluster: "c1", IPFamily: IPv6}
	b := Set{Name: "b", NodePlacement: CrossNode, Cluster: "c2", IPFamily: IPv6}
	for _, c := range []struct {
		keys []string
		want bool
	}{
		{nil, true},
		{[]string{"node_placement"}, true},
		{[]string{"node_placement", "ip_family"}, true},
		{[]string{"node_placement", "cluster"}, false},
		{[]string{"cluster"}, false},
	} {
		if got := SameIn(a, b, c.keys); got != c.want {
			t.Errorf("SameIn(%v) = %v, want %v", c.keys, got, c.want)
		}
	}
	keys := Keys()
	if n := reflect.TypeFor[Set]().NumField() - 1; len(keys) != n || slices.Contains(keys, "") || slices.Contains(keys, "name") {
		t.Errorf("Keys() = %v: want the %d conditions' names", keys, n)
	}
}

// TestProfileIsTheRunners: profiling changes nothing of a lab, so a set
// of it alone is Empty (every driver takes it), and its rate defaults.
func TestProfileIsTheRunners(t *testing.T) {
	for _, tc := range []struct {
		set   Set
		on    bool
		hz    int
		empty bool
	}{
		{Set{}, false, 0, true},
		{Set{Profile: "on"}, true, DefaultProfileHz, true},
		{Set{Profile: "on", ProfileHz: 499}, true, 499, true},
		{Set{Profile: "off", ProfileHz: 499}, false, 0, true},
		{Set{Profile: "on", Cores: 1}, true, DefaultProfileHz, false},
	} {
		on, hz := tc.set.Profiles()
		if on != tc.on || hz != tc.hz || tc.set.Empty() != tc.empty {
			t.Errorf("%+v: profiles %v at %d, empty %v", tc.set, on, hz, tc.set.Empty())
		}
	}
}
