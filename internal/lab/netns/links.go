package netns

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/delayline"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// An impaired host uplink that delays (delay, jitter, loss) has the host's
// switch port and its eth0 each lead to an end of their own in the switch
// namespace, ux<i> and uy<i> (i the host's index), and the delay joins the
// two ends: cnperf's delay line reads and writes them, or, where the
// kernel has netem, a bridge ub<i> joins them with netem on each (ux's
// egress goes towards the switch, uy's towards the host). A rate is a TBF
// on the host's eth0 and on its switch port, each way; a flap sets the
// switch port down and up, so the host keeps its addresses and routes and
// sees its carrier go, as when a cable is pulled.

// LinkNames are the links of cfg's lab in a spec's words: its hosts'
// uplinks, or a chain's hops, and zones when the lab is zoned
// (lab.Driver.LinkNames).
func (Driver) LinkNames(cfg lab.Config) ([]string, error) {
	names := linkNames(cfg.Topology)
	if cfg.Conditions.Zoned() && !cfg.Topology.Chain {
		names = append(names, conditions.ZonesLink)
	}
	return names, nil
}

// CheckLinks refuses a link of cfg the lab's topology lacks.
func (d Driver) CheckLinks(cfg lab.Config) error {
	names, err := d.LinkNames(cfg)
	if err != nil {
		return err
	}
	return conditions.CheckLinkNames("links", cfg.Links, names)
}

// linkNames are a topology's links but the zones': its hosts' uplinks,
// or a chain's hops, named by their hosts.
func linkNames(t lab.Topology) []string {
	var names []string
	for i, h := range t.Hosts {
		if !t.Chain {
			names = append(names, h.Name)
		} else if i > 0 {
			names = append(names, HopName(t.Hosts[i-1].Name, h.Name))
		}
	}
	return names
}

// linkOf returns the spec's link of a host's uplink (nil for none).
func linkOf(links []conditions.Link, host string) *conditions.Link {
	for i := range links {
		if links[i].Link == host {
			return &links[i]
		}
	}
	return nil
}

// uplinkEnds names a delayed uplink's devices in the switch namespace.
func uplinkEnds(index int) (sw, host, bridge string) {
	i := strconv.Itoa(index)
	return "ux" + i, "uy" + i, "ub" + i
}

// hostUplink builds host h's NIC and its switch port on bridge br: a
// plain veth pair, or, for a link that delays, the two pairs the delay
// joins (built later, by impairLinks, once every host is up).
func hostUplink(b netdev.B, l *lab.Lab, h lab.Host, br string, link *conditions.Link, mtu int) error {
	if link == nil || !link.Delays() {
		return wire(b, l, l.Switch, h.Name, br, h.NS, "eth0", mtu)
	}
	sw, host, _ := uplinkEnds(h.Index)
	if err := wire(b, l, l.Switch, h.Name, br, l.Switch, sw, mtu); err != nil {
		return err
	}
	return wire(b, l, l.Switch, host, "", h.NS, "eth0", mtu)
}

// wire is a veth pair of the underlay (a host's NIC and its switch port,
// a chain's hop, the zones' link): as a cable between two NICs with
// receive-side scaling, both ends take each flow's packets in order
// (netdev.SteerFlows), on the CPUs the lab's hosts may use.
func wire(b netdev.B, l *lab.Lab, nsA, a, master, nsZ, z string, mtu int) error {
	if err := b.Veth(nsA, a, master, nsZ, z, mtu); err != nil {
		return err
	}
	if err := netdev.SteerFlows(nsA, a, l.HostCPUs()); err != nil {
		return err
	}
	return netdev.SteerFlows(nsZ, z, l.HostCPUs())
}

// HopName names a chain's hop between hosts from and to, as a spec's
// links name it ("h1-h2").
func HopName(from, to string) string { return from + "-" + to }

// Devices of an impaired chain hop, in its own namespace (cnperf-LAB-hopI).
// a is the port a flap sets down: never a delay line's end, which would
// see its device go and stop.
const (
	hopFrom   = "a" // towards host i (its ChainNext)
	hopTo     = "z" // towards host i+1 (its ChainPrev)
	hopBridge = "br0"
	hopPort   = "p"  // a delayed hop: a's bridge's port towards the delay,
	hopEnd    = "ax" // whose peer is the delay's end
	hopDelay  = "brd"
)

// chainHop builds segment i between from and to: a veth pair, or, for an
// impaired hop, two pairs into a namespace of the hop's own, joined there
// by a bridge or the link's delay, so that a flap can set the hop's end
// down and leave both hosts' devices, addresses and routes as they are.
func chainHop(l *lab.Lab, cfg lab.Config, mark Mark, i int, from, to lab.Host, mtu int) error {
	b := netdev.B{Lab: cfg.Name}
	name := HopName(from.Name, to.Name)
	link := linkOf(cfg.Links, name)
	if link == nil {
		return wire(b, l, from.NS, ChainNext, "", to.NS, ChainPrev, mtu)
	}
	ns := lab.NS(cfg.Name, "hop"+strconv.Itoa(i))
	if err := createNS(mark, ns, false); err != nil { // a bridge or a delay line: layer 2, as the switch
		return err
	}
	if err := b.SysctlIfPresent(ns, "net.bridge.bridge-nf-call-iptables", "0"); err != nil {
		return err
	}
	if err := wire(b, l, from.NS, ChainNext, "", ns, hopFrom, mtu); err != nil {
		return err
	}
	if err := wire(b, l, ns, hopTo, "", to.NS, ChainPrev, mtu); err != nil {
		return err
	}
	rec := record.ImpairedLink{Link: name, Devices: []string{ns + "/" + hopFrom}, Delay: link.Delay, Jitter: link.Jitter, LossPercent: link.Loss, Rate: link.Rate}
	from2 := hopFrom
	if link.Delays() {
		// a on a bridge of its own, the delay between that bridge's
		// other port and z.
		if err := b.Bridge(ns, hopBridge, mtu); err != nil {
			return err
		}
		if err := b.Master(ns, hopFrom, hopBridge); err != nil {
			return err
		}
		if err := wire(b, l, ns, hopPort, hopBridge, ns, hopEnd, mtu); err != nil {
			return err
		}
		from2 = hopEnd
	}
	if err := joinEnds(l, cfg.Conditions, ns, name, from2, hopTo, hopDelay, *link, &rec); err != nil {
		return fmt.Errorf("links: %s: %w", name, err)
	}
	l.Links = append(l.Links, rec)
	return nil
}

// linkQueueBytes bounds what a link's delay holds each way: the
// bandwidth-delay product at its rate (or the lab's bandwidth) plus
// 1 MiB, as the zones' link (conditions.ZoneQueueBytes).
func linkQueueBytes(c conditions.Set, link conditions.Link) int {
	c.ZoneDelay, c.ZoneJitter = link.Delay, link.Jitter
	if link.Rate != "" {
		c.Bandwidth = link.Rate
	}
	return c.ZoneQueueBytes()
}

// impairLinks builds the delay of every impaired link and records each
// link in l.Links; rates are set by shapeLinks after the conditions.
func impairLinks(l *lab.Lab, cfg lab.Config) error {
	c := cfg.Conditions
	for _, link := range cfg.Links {
		rec := record.ImpairedLink{Link: link.Link, Delay: link.Delay, Jitter: link.Jitter, LossPercent: link.Loss, Rate: link.Rate}
		if link.Link == conditions.ZonesLink {
			rec.Devices = []string{l.Switch + "/" + zoneLocal}
			l.Links = append(l.Links, rec)
			continue
		}
		var host lab.Host
		for _, h := range l.Hosts {
			if h.Name == link.Link {
				host = h
			}
		}
		if host.Name == "" {
			return fmt.Errorf("links: the lab has no host %s", link.Link)
		}
		rec.Devices = []string{l.Switch + "/" + host.Name}
		if link.Delays() {
			sw, end, br := uplinkEnds(host.Index)
			if err := joinEnds(l, c, l.Switch, host.Name, sw, end, br, link, &rec); err != nil {
				return fmt.Errorf("links: %s: %w", link.Link, err)
			}
		}
		l.Links = append(l.Links, rec)
	}
	return nil
}

// joinEnds joins two ends in namespace ns through netem where the kernel
// has it (a bridge br between them, netem on each), else through a delay
// line named for the link; a link that does not delay gets the bridge
// alone.
func joinEnds(l *lab.Lab, c conditions.Set, ns, name, a, z, br string, link conditions.Link, rec *record.ImpairedLink) error {
	b := netdev.B{Lab: l.Name}
	m := mtu(c.MTU)
	for _, end := range []string{a, z} {
		if err := b.SysctlIfPresent(ns, "net.ipv6.conf."+end+".disable_ipv6", "1"); err != nil {
			return err
		}
	}
	if !link.Delays() {
		return bridgeEnds(l, ns, a, z, br, m)
	}
	rec.QueueBytes = linkQueueBytes(c, link)
	if c.ZoneVia != conditions.ViaDelayline {
		err := netemEnds(l, ns, link, rec, a, z, br, m)
		switch {
		case err == nil:
			rec.DelayVia = conditions.ViaNetem
			return nil
		case c.ZoneVia == conditions.ViaNetem:
			return fmt.Errorf("netem: %w", err)
		}
	}
	rec.DelayVia = conditions.ViaDelayline
	if c.Offloads != "off" {
		for _, end := range []string{a, z} {
			if err := netdev.Run(ns, "ethtool", "-K", end, "gro", "on"); err != nil {
				return err
			}
		}
	}
	return startDelayline(l, c, ns, linkProc(name), linkStats(name), delayline.Config{Local: a, Remote: z,
		Delay: link.Delay, Jitter: link.Jitter, LossPercent: link.Loss, QueueBytes: rec.QueueBytes})
}

func linkProc(link string) string  { return "delayline-" + link }
func linkStats(link string) string { return "link-" + link + ".json" }

// netemEnds joins the ends with a bridge and netem on each; a kernel
// without netem fails at the first qdisc, and nothing is left of it.
func netemEnds(l *lab.Lab, ns string, link conditions.Link, rec *record.ImpairedLink, a, z, br string, m int) error {
	rec.QueuePackets = max(1000, rec.QueueBytes/(m+14))
	args := netemArgs(rec.QueuePackets, link.Delay, link.Jitter, link.Loss)
	for _, dev := range []string{a, z} {
		if err := netdev.Run(ns, "tc", append([]string{"qdisc", "add", "dev", dev, "root", "netem"}, args...)...); err != nil {
			rec.QueuePackets = 0
			_ = netdev.Run(ns, "tc", "qdisc", "del", "dev", a, "root")
			return err
		}
	}
	return bridgeEnds(l, ns, a, z, br, m)
}

// bridgeEnds joins two ends with a bridge of their own.
func bridgeEnds(l *lab.Lab, ns, a, z, br string, m int) error {
	b := netdev.B{Lab: l.Name}
	if err := b.Bridge(ns, br, m); err != nil {
		return err
	}
	if err := b.Master(ns, a, br); err != nil {
		return err
	}
	return b.Master(ns, z, br)
}

// shapeLinks sets each link's rate, each way: TBF on the host's eth0 and
// its switch port (over the lab's bandwidth there), or on both ends of
// the zones' link.
func shapeLinks(l *lab.Lab) error {
	b := netdev.B{Lab: l.Name}
	for _, link := range l.Links {
		if link.Rate == "" {
			continue
		}
		var devs [][2]string
		if link.Link == conditions.ZonesLink {
			if l.Zones != nil && l.Zones.DelayVia == conditions.ViaNetem {
				return errors.New("links: zones: a rate on the zones' netem link is not built; use the bandwidth condition")
			}
			devs = [][2]string{{l.Switch, zoneLocal}, {l.Switch, zoneRemote}}
		} else {
			for _, h := range l.Hosts {
				if h.Name == link.Link {
					devs = [][2]string{{h.NS, "eth0"}, {l.Switch, h.Name}}
				}
			}
			for i := 1; i < len(l.Hosts) && l.Chain != nil; i++ {
				if from, to := l.Hosts[i-1], l.Hosts[i]; HopName(from.Name, to.Name) == link.Link {
					devs = [][2]string{{from.NS, ChainNext}, {to.NS, ChainPrev}}
				}
			}
		}
		for _, d := range devs {
			if err := b.Shape(d[0], d[1], link.Rate); err != nil {
				return fmt.Errorf("links: %s: rate %s: %w", link.Link, link.Rate, err)
			}
		}
	}
	return nil
}

// readLinkCounters fills each delay line's counters into l.Links.
func readLinkCounters(l *lab.Lab) error {
	var errs []error
	for i, link := range l.Links {
		if link.DelayVia != conditions.ViaDelayline {
			continue
		}
		dirs, err := delayline.ReadStats(filepath.Join(lab.StateRoot, l.Name, zoneStateDir, linkStats(link.Link)))
		if err != nil {
			errs = append(errs, fmt.Errorf("lab %s: link %s counters: %w", l.Name, link.Link, err))
			continue
		}
		l.Links[i].Directions = dirs
	}
	return errors.Join(errs...)
}

// flapPlan is one link's flap schedule and the device a flap sets down.
type flapPlan struct {
	link     string
	ns, dev  string
	at       []time.Duration
	downTime time.Duration
}

// PlanFlaps has the runtime carry out the flaps of links (a spec's
// links[].flap) in each cell; the docker driver's emulated hosts share it.
func (r *Runtime) PlanFlaps(l *lab.Lab, links []conditions.Link) { r.flaps = flapPlans(l, links) }

// flapPlans lists the flaps of a lab's links.
func flapPlans(l *lab.Lab, links []conditions.Link) []flapPlan {
	var out []flapPlan
	for _, link := range links {
		if link.Flap == nil {
			continue
		}
		for _, rec := range l.Links {
			if rec.Link != link.Link || len(rec.Devices) == 0 {
				continue
			}
			ns, dev, _ := strings.Cut(rec.Devices[0], "/")
			out = append(out, flapPlan{link: link.Link, ns: ns, dev: dev, at: link.Flap.At, downTime: link.Flap.Down})
		}
	}
	return out
}

// Flap runs the lab's flap schedules from start, each link on its own
// goroutine (lab.Runtime.Flap); stop ends them, brings every link up again and
// returns what happened.
func (r *Runtime) Flap(start time.Time) func() []record.Flap {
	if len(r.flaps) == 0 {
		return func() []record.Flap { return nil }
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	results := make([][]record.Flap, len(r.flaps))
	for i, p := range r.flaps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runFlaps(p, start, done)
		}()
	}
	var once sync.Once
	var out []record.Flap
	return func() []record.Flap {
		once.Do(func() {
			close(done)
			wg.Wait()
			for _, rs := range results {
				out = append(out, rs...)
			}
		})
		return out
	}
}

// runFlaps carries out one link's schedule until done: down at each
// offset, up after the flap's length. A link that is down when done comes
// is set up at once, and that flap's up time is then; flaps still due
// then are recorded as not done.
func runFlaps(p flapPlan, start time.Time, done <-chan struct{}) []record.Flap {
	var out []record.Flap
	since := func() float64 { return time.Since(start).Seconds() }
	for i, at := range p.at {
		f := record.Flap{Link: p.link, At: at.Seconds()}
		select {
		case <-done:
			// The clients ended first: say so rather than leave the
			// flaps out, so that the analysis can tell "ended before the
			// flap" from "never scheduled".
			for _, rest := range p.at[i:] {
				out = append(out, record.Flap{Link: p.link, At: rest.Seconds(), NotDone: true})
			}
			return out
		case <-time.After(time.Until(start.Add(at))):
		}
		if err := setLinkUp(p.ns, p.dev, false); err != nil {
			f.Error = err.Error()
			out = append(out, f)
			continue
		}
		f.Down = since()
		select {
		case <-done:
		case <-time.After(time.Until(start.Add(at + p.downTime))):
		}
		if err := setLinkUp(p.ns, p.dev, true); err != nil {
			f.Error = err.Error()
		}
		f.Up = since()
		out = append(out, f)
	}
	return out
}
