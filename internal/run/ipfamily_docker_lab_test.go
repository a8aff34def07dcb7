package run_test

import (
	"net"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/testutil"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
)

// TestIPFamilyDocker runs stream and rr through the runner on IPv6 and
// dual-stack docker labs of bare, host, bridge and macvlan, and judges from
// inside each lab, just before it goes: the endpoints are dialled at IPv6
// addresses (with the IPv4 twins recorded on dual), the server's
// namespace received IPv6 packets and next to no IPv4 ones, and on bridge
// dockerd's ip6tables DNAT counted them. runtest.Run checks that no lab,
// engine or namespace is left, and checkNoRulesLeft that no rule is.
func TestIPFamilyDocker(t *testing.T) {
	testutil.RequireRoot(t)
	testutil.RequireDocker(t)
	w := &dockerWatcher{labs: map[string]*lab.Lab{}, seen: map[string]*dockerEvidence{}}
	cat := drivers.Catalog()
	for i, d := range cat.Drivers {
		if d.Name() == docker.Name {
			cat.Drivers[i] = w
		}
	}
	res, _ := runtest.Run(t, cat, "ipfamily_docker", `name: ipfamily_docker
driver: docker
modes: [bare, host, bridge, macvlan]
reference: bare
variants:
  - {name: v6, ip_family: ipv6}
  - {name: dual, ip_family: dual}
tests:
  - {workload: stream, duration: 1s}
  - {workload: rr, protocol: tcp, duration: 1s}
`)
	got := map[string]int{}
	for _, c := range res.Meta.Cells {
		got[c.Mode+" "+c.Case] += c.Samples
	}
	for _, m := range []string{"bare/v6", "bare/dual", "host/v6", "host/dual", "bridge/v6", "bridge/dual", "macvlan/v6", "macvlan/dual"} {
		for _, cs := range []string{"stream", "rr"} {
			n := 0
			for k, v := range got {
				if strings.HasPrefix(k, m+" ") && strings.Contains(k, cs) {
					n += v
				}
			}
			if n == 0 {
				t.Errorf("%s: no samples of %s (cells %v)", m, cs, got)
			}
		}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.seen) != 8 {
		t.Errorf("judged %d labs, want 8", len(w.seen))
	}
	for name, e := range w.seen {
		t.Logf("%s: %+v", name, *e)
		for _, p := range e.problems {
			t.Errorf("%s (%s, %s): %s", name, e.mode, e.family, p)
		}
		if e.ip6In < 100 || e.ip4In*10 > e.ip6In {
			t.Errorf("%s (%s, %s): the servers received %d IPv6 and %d IPv4 packets: want IPv6's alone", name, e.mode, e.family, e.ip6In, e.ip4In)
		}
		if e.mode == "bridge" && e.dnat6 == 0 {
			t.Errorf("%s (%s): dockerd's ip6tables DNAT counted no packet", name, e.family)
		}
	}
	checkNoRulesLeft(t, res.Meta.ID)
}

// dockerWatcher is the docker driver, judging each lab before it goes.
type dockerWatcher struct {
	docker.Driver
	mu   sync.Mutex
	labs map[string]*lab.Lab
	seen map[string]*dockerEvidence
}

// dockerEvidence is what a docker lab's namespaces say of its traffic.
type dockerEvidence struct {
	mode, family string
	ip6In, ip4In int64 // packets the servers' namespaces received
	dnat6        int64 // packets dockerd's ip6tables DNAT rules counted
	problems     []string
}

func (w *dockerWatcher) Up(l *lab.Lab, cfg lab.Config) error {
	if err := w.Driver.Up(l, cfg); err != nil {
		return err
	}
	w.mu.Lock()
	w.labs[l.Name] = l
	w.mu.Unlock()
	return nil
}

// Down judges the lab while its engines and namespaces are whole, then
// removes it.
func (w *dockerWatcher) Down(name string) error {
	w.mu.Lock()
	l := w.labs[name]
	delete(w.labs, name)
	w.mu.Unlock()
	if l != nil && len(l.Endpoints) > 0 {
		e := judgeDocker(l)
		w.mu.Lock()
		w.seen[name] = e
		w.mu.Unlock()
	}
	return w.Driver.Down(name)
}

// judgeDocker reads the lab's endpoints and counters.
func judgeDocker(l *lab.Lab) *dockerEvidence {
	e := &dockerEvidence{mode: l.Mode, family: l.Conditions.Family()}
	dual := l.Conditions.HasIPv4()
	for _, ep := range l.Endpoints {
		if !isIP6(ep.External) || !isIP6(ep.Internal) || !strings.HasPrefix(ep.Listen, "[::]:") {
			e.problems = append(e.problems, "endpoint "+ep.Host+" listens at "+ep.Listen+", dialled at "+ep.External)
		}
		if dual && (isIP6(ep.External4) || ep.External4 == "") {
			e.problems = append(e.problems, "endpoint "+ep.Host+": IPv4 twin "+ep.External4)
		}
		if ep.Host != "server" {
			continue
		}
		v6, v4, err := ipIn(ep.NS)
		if err != nil {
			e.problems = append(e.problems, err.Error())
		}
		e.ip6In += v6
		e.ip4In += v4
		if l.Mode == "bridge" {
			h, err := l.Host(ep.Host)
			if err != nil {
				e.problems = append(e.problems, err.Error())
				continue
			}
			e.dnat6 += dockerDNAT(h.NS)
		}
	}
	return e
}

// isIP6 says whether hostport's host is an IPv6 address.
func isIP6(hostport string) bool {
	h, _, err := net.SplitHostPort(hostport)
	ip := net.ParseIP(h)
	return err == nil && ip != nil && ip.To4() == nil
}

// dockerDNAT sums the packet counters of the DNAT rules in dockerd's nat
// DOCKER chain of ip6tables in a host's namespace.
func dockerDNAT(ns string) int64 {
	var out []byte
	_ = namespace.Do(ns, func() error {
		var err error
		out, err = exec.Command("ip6tables", "-w", "-t", "nat", "-L", "DOCKER", "-n", "-v", "-x").Output()
		return err
	})
	var n int64
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[2] == "DNAT" {
			p, _ := strconv.ParseInt(f[0], 10, 64)
			n += p
		}
	}
	return n
}
