package netns_test

import (
	"io"
	"net"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
)

// linkLab builds a bare lab of a client host c and server hosts under
// links, removed when the test ends; after removal no process of the
// lab's switch (its delay lines) is left.
func linkLab(t *testing.T, name string, port int, servers []string, links []conditions.Link) *lab.Lab {
	t.Helper()
	testutil.RequireRoot(t)
	m, _ := drivers.Catalog().Mode("bare")
	_ = lab.Down(name, netns.Driver{}) // a crashed run's
	cfg := lab.Config{Name: name, Mode: m, Topology: lab.ClientServers(append([]string{"c"}, servers...), false),
		Port: port, Exe: testutil.Binary(t), Links: links}
	if err := (netns.Driver{}).CheckLinks(cfg); err != nil {
		t.Fatal(err)
	}
	l, err := lab.Up(netns.Driver{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	pids, _ := namespace.Pids(l.Switch)
	t.Cleanup(func() {
		if err := lab.Down(name, netns.Driver{}); err != nil {
			t.Error(err)
		}
		for _, p := range pids {
			if _, err := os.Stat("/proc/" + strconv.Itoa(p)); err == nil {
				t.Errorf("lab %s: process %d of its switch is still there", name, p)
			}
		}
	})
	return l
}

// echoTo serves one-byte echoes on role's endpoint and dials it from c.
func echoTo(t *testing.T, l *lab.Lab, role string) *pinger {
	t.Helper()
	ep, err := l.Endpoint(role)
	if err != nil {
		t.Fatal(err)
	}
	var ln net.Listener
	if err := namespace.Do(ep.NS, func() error {
		var err error
		ln, err = net.Listen("tcp4", ep.Listen)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				b := make([]byte, 1)
				for {
					if _, err := io.ReadFull(c, b); err != nil {
						return
					}
					if _, err := c.Write(b); err != nil {
						return
					}
				}
			}()
		}
	}()
	c := dial(t, l, ep.External)
	_ = c.SetNoDelay(true)
	return &pinger{name: l.Name + "/" + role, c: c}
}

// TestLinkDelay: a 20 ms delay on server s's uplink adds 40 ms to the
// round trip from c to s (the link is crossed once each way, delayed
// each way: 2 × 20 ms) and nothing to the round trip from c to o, whose
// path does not cross it.
func TestLinkDelay(t *testing.T) {
	const delay = 20 * time.Millisecond
	l := linkLab(t, "tldelay", 9511, []string{"s", "o"}, []conditions.Link{{Link: "s", Delay: delay}})
	if len(l.Links) != 1 || l.Links[0].Link != "s" || l.Links[0].Delay != delay ||
		(l.Links[0].DelayVia != conditions.ViaNetem && l.Links[0].DelayVia != conditions.ViaDelayline) {
		t.Fatalf("lab records links %+v, want s delayed by netem or the delay line", l.Links)
	}
	through, apart := echoTo(t, l, "s"), echoTo(t, l, "o")
	for range 10 {
		through.ping(t, 5)
		apart.ping(t, 5)
	}
	t.Logf("via %s: c→s median %s, c→o median %s", l.Links[0].DelayVia, through.median(), apart.median())
	if m := through.median(); m < 2*delay || m > 2*delay+30*time.Millisecond {
		t.Errorf("c→s round trip %s, want 2 × %s (one delayed crossing each way) + at most 30 ms", m, delay)
	}
	if m := apart.median(); m > 10*time.Millisecond {
		t.Errorf("c→o round trip %s: the delay reached a path that does not cross s's link", m)
	}
	if err := l.Runtime.Record(l); err != nil {
		t.Fatal(err)
	}
	if l.Links[0].DelayVia == conditions.ViaDelayline {
		if d := l.Links[0].Directions; len(d) != 2 || d[0].Frames == 0 || d[1].Frames == 0 {
			t.Errorf("delay line counters %+v, want frames each way", d)
		}
	}
}

// TestLinkFlap: s's uplink down for 1 s from 1 s into a cell stalls a
// connection across it for about as long, the flap's down and up are
// recorded where they happened, and the connection carries on after it.
func TestLinkFlap(t *testing.T) {
	l := linkLab(t, "tlflap", 9512, []string{"s"}, []conditions.Link{{Link: "s", Flap: &conditions.Flap{At: []time.Duration{time.Second}, Down: time.Second}}})
	f := l.Runtime
	p := echoTo(t, l, "s")
	start := time.Now()
	stop := f.Flap(start)
	var gaps []time.Duration
	last := time.Now()
	for time.Since(start) < 3500*time.Millisecond {
		p.ping(t, 1)
		gaps = append(gaps, time.Since(last))
		last = time.Now()
		time.Sleep(5 * time.Millisecond) // paced, so that a round trip is a sample of time, not of load
	}
	flaps := stop()
	if len(flaps) != 1 || flaps[0].Error != "" || flaps[0].Link != "s" {
		t.Fatalf("flaps %+v, want one of s without error", flaps)
	}
	fl := flaps[0]
	if fl.Down < 0.99 || fl.Down > 1.2 || fl.Up-fl.Down < 0.99 || fl.Up-fl.Down > 1.2 {
		t.Errorf("flap went down at %.3fs and up at %.3fs, want 1 s and 2 s", fl.Down, fl.Up)
	}
	worst := slices.Max(gaps)
	t.Logf("flap %+v; longest wait for an echo %s", fl, worst)
	if worst < 800*time.Millisecond {
		t.Errorf("longest wait %s across a 1 s flap, want at least 0.8 s", worst)
	}
	if n := len(p.rtts); n < 100 {
		t.Errorf("%d echoes in 3.5 s, want the connection to carry on after the flap", n)
	}
}

// TestChainHopDelayAndFlap: on a chain h1–h2–h3 (bare: the hosts route),
// 10 ms on the hop h2-h3 adds 20 ms to the round trip from h1 to h3 and
// nothing to h1 to h2's, whose path does not cross it; a flap of the hop
// stalls a connection across it and leaves the hosts' routes as they
// were, so it carries on after.
func TestChainHopDelayAndFlap(t *testing.T) {
	testutil.RequireRoot(t)
	const delay = 10 * time.Millisecond
	name := "tlhop"
	m, _ := drivers.Catalog().Mode("bare")
	_ = lab.Down(name, netns.Driver{})
	topo := lab.Topology{Chain: true, Hosts: []lab.HostSpec{{Name: "h1"}, {Name: "h2", Endpoints: []lab.EndpointSpec{{Role: "s"}}}, {Name: "h3", Endpoints: []lab.EndpointSpec{{Role: "o"}}}}}
	links := []conditions.Link{{Link: "h2-h3", Delay: delay, Flap: &conditions.Flap{At: []time.Duration{500 * time.Millisecond}, Down: time.Second}}}
	cfg := lab.Config{Name: name, Mode: m, Topology: topo, Port: 9513, Exe: testutil.Binary(t), Links: links}
	if err := (netns.Driver{}).CheckLinks(cfg); err != nil {
		t.Fatal(err)
	}
	l, err := lab.Up(netns.Driver{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Down(name, netns.Driver{}); err != nil {
			t.Error(err)
		}
		if left, _ := namespace.List(lab.Prefix + name + "-"); len(left) > 0 {
			t.Errorf("namespaces left: %v", left)
		}
	})
	if len(l.Links) != 1 || l.Links[0].Link != "h2-h3" || l.Links[0].DelayVia == "" {
		t.Fatalf("lab records links %+v, want the hop h2-h3 delayed", l.Links)
	}
	near, far := echoTo(t, l, "s"), echoTo(t, l, "o")
	for range 10 {
		near.ping(t, 5)
		far.ping(t, 5)
	}
	t.Logf("via %s: h1→h2 median %s, h1→h3 median %s", l.Links[0].DelayVia, near.median(), far.median())
	if m := far.median(); m < 2*delay || m > 2*delay+30*time.Millisecond {
		t.Errorf("h1→h3 round trip %s, want 2 × %s + at most 30 ms", m, delay)
	}
	if m := near.median(); m > 10*time.Millisecond {
		t.Errorf("h1→h2 round trip %s: the hop's delay reached a path that does not cross it", m)
	}
	stop := l.Runtime.Flap(time.Now())
	far.rtts = nil
	start := time.Now()
	for time.Since(start) < 2500*time.Millisecond {
		far.ping(t, 1)
	}
	flaps := stop()
	worst := slices.Max(far.rtts)
	t.Logf("flaps %+v; longest round trip across the hop %s", flaps, worst)
	if len(flaps) != 1 || flaps[0].Error != "" || worst < 800*time.Millisecond {
		t.Errorf("flaps %+v, longest round trip %s: want one flap and a stall of at least 0.8 s", flaps, worst)
	}
}

// TestDelayCondition: the delay condition delays every host's uplink, so
// a round trip from c to s crosses two delayed links each way: 4 × 10 ms.
func TestDelayCondition(t *testing.T) {
	testutil.RequireRoot(t)
	const name = "tldcond"
	m, _ := drivers.Catalog().Mode("bare")
	_ = lab.Down(name, netns.Driver{})
	l, err := lab.Up(netns.Driver{}, lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false),
		Port: 9514, Exe: testutil.Binary(t), Conditions: conditions.Set{Delay: "10ms"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Down(name, netns.Driver{}); err != nil {
			t.Error(err)
		}
	})
	if len(l.Links) != 2 {
		t.Fatalf("lab records links %+v, want both uplinks delayed", l.Links)
	}
	p := echoTo(t, l, "s")
	p.ping(t, 30)
	t.Logf("via %s: c→s median %s", l.Links[0].DelayVia, p.median())
	if m := p.median(); m < 40*time.Millisecond || m > 70*time.Millisecond {
		t.Errorf("c→s round trip %s, want 4 × 10 ms and at most 30 ms more", m)
	}
}

// TestZonesLinkFlap: a flap of the zones' link (zl set down) stalls a
// connection from the first zone to the second, and the delay line
// between them carries on after it.
func TestZonesLinkFlap(t *testing.T) {
	testutil.RequireRoot(t)
	const name = "tlzflap"
	m, _ := drivers.Catalog().Mode("bare")
	_ = lab.Down(name, netns.Driver{})
	links := []conditions.Link{{Link: conditions.ZonesLink, Flap: &conditions.Flap{At: []time.Duration{500 * time.Millisecond}, Down: time.Second}}}
	cfg := lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false),
		Port: 9515, Exe: testutil.Binary(t), Conditions: conditions.Set{ZoneHosts: "s"}, Links: links}
	if err := (netns.Driver{}).CheckLinks(cfg); err != nil {
		t.Fatal(err)
	}
	l, err := lab.Up(netns.Driver{}, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := lab.Down(name, netns.Driver{}); err != nil {
			t.Error(err)
		}
	})
	p := echoTo(t, l, "s")
	stop := l.Runtime.Flap(time.Now())
	start := time.Now()
	for time.Since(start) < 2500*time.Millisecond {
		p.ping(t, 1)
		time.Sleep(5 * time.Millisecond)
	}
	flaps := stop()
	worst := slices.Max(p.rtts)
	t.Logf("via %s: flaps %+v; longest round trip %s", l.Zones.DelayVia, flaps, worst)
	if len(flaps) != 1 || flaps[0].Error != "" || worst < 800*time.Millisecond {
		t.Errorf("flaps %+v, longest round trip %s: want one flap and a stall of at least 0.8 s", flaps, worst)
	}
	if err := l.Alive(); err != nil {
		t.Errorf("after the flap: %v", err)
	}
}
