package run_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/vishvananda/netlink"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestIPFamilyNATModes runs every workload through the runner on IPv6
// and dual-stack labs of the bridge and overlay modes, and judges from
// inside each lab, just before the runner takes it down, that the traffic
// was IPv6: the containers received IPv6 packets and (next to none)
// IPv4 ones; on bridge the ip6tables DNAT rules counted the connections
// (on dual, the IPv4 ones none; on ipv6 there are no IPv4 rules at all);
// on overlay the VXLAN device runs over IPv6 and carried packets.
func TestIPFamilyNATModes(t *testing.T) {
	testutil.RequireRoot(t)
	w := &watcher{Driver: netns.Driver{}, seen: map[string]*evidence{}, labs: map[string]*lab.Lab{}}
	cat := drivers.Catalog()
	for i, d := range cat.Drivers {
		if d.Name() == netns.Name {
			cat.Drivers[i] = w
		}
	}
	// lab.Down asks the drivers last first, and the docker driver's Down
	// removes the netns hosts too: the last driver judges, before any.
	last := len(cat.Drivers) - 1
	cat.Drivers[last] = judgeFirst{Driver: cat.Drivers[last], w: w}
	head := `driver: netns
modes: [bridge, overlay]
reference: bridge
variants:
  - {name: v6, ip_family: ipv6}
  - {name: dual, ip_family: dual}
`
	// Ping-pong's cells interleave with the socket tests' on the same labs.
	res, _ := runtest.Run(t, cat, "ipfamily", "name: ipfamily\n"+head+`tests:
  - {workload: stream, duration: 1s}
  - {workload: stream, protocol: udp, rate: 20M, duration: 1s}
  - {workload: rr, protocol: tcp, duration: 1s}
  - {workload: rr, protocol: crr, duration: 1s}
  - {workload: rr, protocol: udp, duration: 1s}
  - {workload: jitter, rate: 1M, duration: 1s}
  - {workload: datagram, count: 2000, rate: 20M}
  - {workload: grid, duration: 1s}
`+runtest.SmallPingPong)
	// Every workload's cells on every mode and family have samples.
	cases := map[string]bool{}
	got := map[string]map[string]int{}
	for _, c := range res.Meta.Cells {
		cases[c.Case] = true
		if got[c.Mode] == nil {
			got[c.Mode] = map[string]int{}
		}
		got[c.Mode][c.Case] += c.Samples
	}
	for _, m := range []string{"bridge/v6", "bridge/dual", "overlay/v6", "overlay/dual"} {
		for cs := range cases {
			if got[m][cs] == 0 {
				t.Errorf("%s: no samples of %q", m, cs)
			}
		}
	}
	if len(cases) < 9 {
		t.Errorf("cases %v, want the eight socket tests' and ping-pong's", cases)
	}

	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) != 4 {
		t.Errorf("judged %d labs, want 4", len(w.seen))
	}
	for name, e := range w.seen {
		t.Logf("%s (%s, %s): %+v", name, e.mode, e.family, *e)
		for _, p := range e.problems {
			t.Errorf("%s (%s, %s): %s", name, e.mode, e.family, p)
		}
		// IPv4 packets an IPv6-only container receives can only be
		// loopback's (it has no other IPv4 address): a dozen of the
		// servers' own, in every family; the workloads' are thousands.
		if e.ip6In < 100 || e.ip4In*10 > e.ip6In {
			t.Errorf("%s (%s, %s): containers received %d IPv6 and %d IPv4 packets: want IPv6's alone", name, e.mode, e.family, e.ip6In, e.ip4In)
		}
		switch e.mode {
		case "bridge":
			if e.dnat6 == 0 || e.dnat4 != 0 {
				t.Errorf("%s (%s): DNAT counted %d IPv6 and %d IPv4 packets: want IPv6's alone", name, e.family, e.dnat6, e.dnat4)
			}
			if e.family == conditions.IPv6 && e.rules4 {
				t.Errorf("%s: an IPv6-only lab has IPv4 rules", name)
			}
		case "overlay":
			if !e.vxlan6 || e.vxlanTx == 0 {
				t.Errorf("%s (%s): VXLAN over IPv6 %v with %d packets sent: want over IPv6, carrying", name, e.family, e.vxlan6, e.vxlanTx)
			}
		}
	}
	checkNoRulesLeft(t, res.Meta.ID)
}

// TestIPFamilyRulesCleaned: `cnperf lab down` and `cnperf clean` remove a
// dual-stack bridge lab's IPv6 rules with its namespaces (they live in its
// hosts' namespaces and nowhere else).
func TestIPFamilyRulesCleaned(t *testing.T) {
	testutil.RequireRoot(t)
	m, err := drivers.Catalog().Mode("bridge")
	if err != nil {
		t.Fatal(err)
	}
	self, err := owner.Self()
	if err != nil {
		t.Fatal(err)
	}
	gone := owner.ID{PID: self.PID, Start: self.Start + 1} // a process that has exited
	for _, c := range []struct {
		name  string
		owner owner.ID
		argv  []string
	}{
		{"tv6down", owner.None, []string{"lab", "down", "tv6down"}},
		{"tv6clean", gone, []string{"clean"}},
	} {
		cfg := lab.Config{Name: c.name, Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false), Port: 9400,
			Exe: testutil.Binary(t), Owner: c.owner, Conditions: conditions.Set{IPFamily: conditions.Dual}}
		l, err := drivers.Catalog().Up(cfg)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = drivers.Catalog().Down(c.name) })
		ep, err := l.Endpoint("s")
		if err != nil {
			t.Fatal(err)
		}
		h, err := l.Host(ep.Host)
		if err != nil {
			t.Fatal(err)
		}
		rules := saveRules(t, h.NS, "ip6tables-save")
		if n := strings.Count(rules, "cnperf:"+c.name); n < 8 || !strings.Contains(rules, "DNAT --to-destination [2001:2:0:") {
			t.Fatalf("%s: %d IPv6 rules marked cnperf:%s, want the bridge's chains and a DNAT:\n%s", c.name, n, c.name, rules)
		}
		if out, err := exec.Command(testutil.Binary(t), c.argv...).CombinedOutput(); err != nil {
			t.Fatalf("cnperf %s: %v\n%s", strings.Join(c.argv, " "), err, out)
		}
		if nss, _ := namespace.List(lab.Prefix + c.name + "-"); len(nss) > 0 {
			t.Errorf("cnperf %s left %v", strings.Join(c.argv, " "), nss)
		}
		if namespace.Exists(h.NS) {
			t.Errorf("cnperf %s left %s and its rules", strings.Join(c.argv, " "), h.NS)
		}
		checkNoRulesLeft(t, c.name)
	}
}

// checkNoRulesLeft: no rule of the lab (or run) named prefix is in the
// machine's own tables, of either family. Lab rules live in lab
// namespaces alone; this catches one built in the wrong place.
func checkNoRulesLeft(t *testing.T, prefix string) {
	t.Helper()
	for _, prog := range []string{"iptables-save", "ip6tables-save"} {
		out, err := exec.Command(prog).Output()
		if err != nil {
			t.Logf("%s: %v (not checked)", prog, err)
			continue
		}
		if strings.Contains(string(out), "cnperf:"+prefix) {
			t.Errorf("%s in the machine's namespace has rules of %s", prog, prefix)
		}
	}
}

// saveRules is a namespace's rules as prog (iptables-save or
// ip6tables-save) prints them.
func saveRules(t *testing.T, ns, prog string) string {
	t.Helper()
	var out []byte
	err := namespace.Do(ns, func() error {
		var err error
		out, err = exec.Command(prog).Output()
		return err
	})
	if err != nil {
		t.Fatalf("%s in %s: %v", prog, ns, err)
	}
	return string(out)
}

// watcher is the netns driver, judging each lab just before it goes.
type watcher struct {
	netns.Driver
	mu   sync.Mutex
	labs map[string]*lab.Lab
	seen map[string]*evidence
}

// evidence is what a lab's namespaces say of the traffic they carried.
type evidence struct {
	mode, family string
	ip6In, ip4In int64 // packets the containers received
	dnat6, dnat4 int64 // packets the DNAT rules counted
	rules4       bool  // the hosts have IPv4 CNPERF chains
	vxlan6       bool
	vxlanTx      uint64
	problems     []string
}

func (w *watcher) Up(l *lab.Lab, cfg lab.Config) error {
	if err := w.Driver.Up(l, cfg); err != nil {
		return err
	}
	w.mu.Lock()
	w.labs[l.Name] = l
	w.mu.Unlock()
	return nil
}

// judgeFirst is the driver lab.Down asks first, which has the watcher
// judge the lab while it is whole.
type judgeFirst struct {
	lab.Driver
	w *watcher
}

func (j judgeFirst) Down(name string) error {
	j.w.judge(name)
	return j.Driver.Down(name)
}

// judge records the evidence of a lab the watcher saw built, once.
func (w *watcher) judge(name string) {
	w.mu.Lock()
	l := w.labs[name]
	delete(w.labs, name)
	w.mu.Unlock()
	if l == nil || len(l.Endpoints) == 0 {
		return
	}
	e := judge(l)
	w.mu.Lock()
	w.seen[name] = e
	w.mu.Unlock()
}

// judge reads the lab's counters: the containers' IP receive counters,
// the server hosts' DNAT counters and VXLAN devices.
func judge(l *lab.Lab) *evidence {
	e := &evidence{mode: l.Mode, family: l.Conditions.Family()}
	hosts := map[string]bool{}
	for _, ep := range l.Endpoints {
		hosts[ep.Host] = true
		v6, v4, err := ipIn(ep.NS)
		if err != nil {
			e.problems = append(e.problems, err.Error())
		}
		e.ip6In += v6
		e.ip4In += v4
	}
	for name := range hosts {
		h, err := l.Host(name)
		if err != nil {
			e.problems = append(e.problems, err.Error())
			continue
		}
		switch l.Mode {
		case "bridge":
			n6, ok6 := dnatPackets(h.NS, "ip6tables")
			n4, ok4 := dnatPackets(h.NS, "iptables")
			if !ok6 {
				e.problems = append(e.problems, "no IPv6 CNPERF chain in "+h.NS)
			}
			e.dnat6 += n6
			e.dnat4 += n4
			e.rules4 = e.rules4 || ok4
		case "overlay":
			hd, err := namespace.Handle(h.NS)
			if err != nil {
				e.problems = append(e.problems, err.Error())
				continue
			}
			link, err := hd.LinkByName("vxlan0")
			hd.Close()
			vx, ok := link.(*netlink.Vxlan)
			if err != nil || !ok {
				e.problems = append(e.problems, fmt.Sprintf("no vxlan0 in %s: %v", h.NS, err))
				continue
			}
			e.vxlan6 = vx.SrcAddr.To4() == nil && vx.SrcAddr.To16() != nil
			if s := vx.Attrs().Statistics; s != nil {
				e.vxlanTx += s.TxPackets
			}
		}
	}
	return e
}

// ipIn reads the IPv6 and IPv4 packets a namespace received
// (Ip6InReceives, Ip's InReceives), from a thread inside it:
// /proc/thread-self/net follows the thread's namespace.
func ipIn(ns string) (v6, v4 int64, err error) {
	err = namespace.Do(ns, func() error {
		b6, err := os.ReadFile("/proc/thread-self/net/snmp6")
		if err != nil {
			return err
		}
		b4, err := os.ReadFile("/proc/thread-self/net/snmp")
		if err != nil {
			return err
		}
		for _, f := range strings.Split(string(b6), "\n") {
			if k, v, ok := strings.Cut(strings.Join(strings.Fields(f), " "), " "); ok && k == "Ip6InReceives" {
				v6, _ = strconv.ParseInt(v, 10, 64)
			}
		}
		// Two "Ip:" lines: the names, then the values.
		var names []string
		sc := bufio.NewScanner(bytes.NewReader(b4))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) == 0 || f[0] != "Ip:" {
				continue
			}
			if names == nil {
				names = f
				continue
			}
			for i, n := range names {
				if n == "InReceives" && i < len(f) {
					v4, _ = strconv.ParseInt(f[i], 10, 64)
				}
			}
		}
		return nil
	})
	if err != nil {
		err = fmt.Errorf("IP counters of %s: %w", ns, err)
	}
	return v6, v4, err
}

// dnatPackets sums the packet counters of the DNAT rules in a host's nat
// CNPERF chain (prog: iptables or ip6tables); ok is false when the chain
// is not there.
func dnatPackets(ns, prog string) (n int64, ok bool) {
	var out []byte
	err := namespace.Do(ns, func() error {
		var err error
		out, err = exec.Command(prog, "-w", "-t", "nat", "-L", "CNPERF", "-n", "-v", "-x").Output()
		return err
	})
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[2] == "DNAT" {
			p, _ := strconv.ParseInt(f[0], 10, 64)
			n += p
		}
	}
	return n, true
}
