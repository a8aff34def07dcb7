package netns

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"time"

	"github.com/vishvananda/netlink"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/delayline"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// A lab split into zones has two switches in its switch namespace: br0
// for the first zone's hosts and br1 for the second's, joined through a
// link that delays each way. With netem the link is a veth pair, zl on br0
// and zr on br1, with a netem qdisc on each end. With the delay line, zl
// and zr each lead to an end of their own (zlx, zrx) that the line reads
// and writes: frames cross user space between the zones.
const (
	zoneBridge     = "br1"
	zoneLocal      = "zl"
	zoneRemote     = "zr"
	delaylineProc  = "delayline"
	zoneStateDir   = "zones" // under lab.StateRoot/LAB
	delaylineStats = "delayline.json"
)

// remoteHosts returns the names of the topology's hosts that the
// conditions put in the second zone (none for a lab without zones).
func remoteHosts(cfg lab.Config) (map[string]bool, error) {
	var names []string
	for _, h := range cfg.Topology.Hosts {
		names = append(names, h.Name)
	}
	remote, err := cfg.Conditions.RemoteZone(names)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, h := range remote {
		out[h] = true
	}
	return out, nil
}

// joinZones builds the link between the zones' switches and records it
// in l.Zones. The hosts are on their switches already.
func joinZones(l *lab.Lab, c conditions.Set, remote map[string]bool) error {
	z := &record.Zones{Delay: c.ZoneDelay, Jitter: c.ZoneJitter, LossPercent: c.ZoneLoss, QueueBytes: c.ZoneQueueBytes()}
	for _, h := range l.Hosts {
		if remote[h.Name] {
			z.Remote = append(z.Remote, h.Name)
		} else {
			z.Local = append(z.Local, h.Name)
		}
	}
	mtu := mtu(c.MTU)
	via := c.ZoneVia
	if via != conditions.ViaDelayline {
		err := netemLink(l, c, z, mtu)
		switch {
		case err == nil:
			via = conditions.ViaNetem
		case via == conditions.ViaNetem:
			return fmt.Errorf("zone_via netem: %w", err)
		default:
			via = conditions.ViaDelayline // this kernel has no netem
		}
	}
	if via == conditions.ViaDelayline {
		if err := delaylineLink(l, c, z, mtu); err != nil {
			return fmt.Errorf("zones: delay line: %w", err)
		}
	}
	z.DelayVia = via
	l.Zones = z
	return nil
}

// netemArgs are a netem qdisc's parameters: a queue of limit packets,
// the one-way delay with its jitter, and the loss in percent.
func netemArgs(limit int, delay, jitter time.Duration, loss float64) []string {
	args := []string{"limit", strconv.Itoa(limit), "delay", usec(delay)}
	if jitter > 0 {
		args = append(args, usec(jitter))
	}
	if loss > 0 {
		args = append(args, "loss", strconv.FormatFloat(loss, 'g', -1, 64)+"%")
	}
	return args
}

// netemLink joins the zones through a veth pair with netem on each end;
// it removes the pair and says why when netem cannot be set up, which is
// how a kernel without netem is found.
func netemLink(l *lab.Lab, c conditions.Set, z *record.Zones, mtu int) error {
	b := netdev.B{Lab: l.Name}
	if err := wire(b, l, l.Switch, zoneLocal, "", l.Switch, zoneRemote, mtu); err != nil {
		return err
	}
	z.QueuePackets = max(1000, z.QueueBytes/(mtu+14))
	args := netemArgs(z.QueuePackets, c.ZoneDelay, c.ZoneJitter, c.ZoneLoss)
	for _, dev := range []string{zoneLocal, zoneRemote} {
		if err := netdev.Run(l.Switch, "tc", append([]string{"qdisc", "add", "dev", dev, "root", "netem"}, args...)...); err != nil {
			z.QueuePackets = 0
			if derr := deleteLink(l.Switch, zoneLocal); derr != nil {
				return fmt.Errorf("%w (and removing %s: %v)", err, zoneLocal, derr)
			}
			return err
		}
	}
	if err := b.Master(l.Switch, zoneLocal, "br0"); err != nil {
		return err
	}
	return b.Master(l.Switch, zoneRemote, zoneBridge)
}

func usec(d time.Duration) string { return strconv.FormatInt(d.Microseconds(), 10) + "us" }

// delaylineLink starts cnperf's delay line between a port on each zone's
// switch, in the switch namespace, and waits until it reads.
func delaylineLink(l *lab.Lab, c conditions.Set, z *record.Zones, mtu int) error {
	b := netdev.B{Lab: l.Name}
	ends := []struct{ port, end, bridge string }{{zoneLocal, zoneLocal + "x", "br0"}, {zoneRemote, zoneRemote + "x", zoneBridge}}
	for _, e := range ends {
		if err := wire(b, l, l.Switch, e.port, e.bridge, l.Switch, e.end, mtu); err != nil {
			return err
		}
		// The line's ends carry the zones' frames and nothing of their
		// own: no IPv6 router solicitations crossing between zones.
		if err := b.SysctlIfPresent(l.Switch, "net.ipv6.conf."+e.end+".disable_ipv6", "1"); err != nil {
			return err
		}
		// GRO on the line's end (a veth polls with NAPI then) joins the
		// wire-sized segments a shaper cut a TCP burst into, as a
		// receiving NIC does: the line moves 64 kB frames, not 44 times
		// as many small ones. With offloads off every frame stays a
		// packet, and loss hits packets.
		if c.Offloads != "off" {
			if err := netdev.Run(l.Switch, "ethtool", "-K", e.end, "gro", "on"); err != nil {
				return err
			}
		}
	}
	return startDelayline(l, c, l.Switch, delaylineProc, delaylineStats, delayline.Config{Local: ends[0].end, Remote: ends[1].end,
		Delay: c.ZoneDelay, Jitter: c.ZoneJitter, LossPercent: c.ZoneLoss, QueueBytes: z.QueueBytes})
}

// startDelayline starts a delay line of the lab, proc, in namespace ns
// (the switch's, or a chain hop's) between cfg's two ends, its counters
// in the lab's state file stats, and waits until it reads.
func startDelayline(l *lab.Lab, c conditions.Set, ns, proc, stats string, cfg delayline.Config) error {
	dir := filepath.Join(lab.StateRoot, l.Name, zoneStateDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	cfg.Stats = filepath.Join(dir, stats)
	if err := l.StartProcess(proc, ns, delaylineCPUs(c, runtime.NumCPU()), []string{"serve", "delayline", "--config", cfg.JSON()}); err != nil {
		return err
	}
	// The line writes its counters once its sockets are bound: until then
	// the two sides are cut off from each other.
	err := poll.Until(context.Background(), 10*time.Second, 10*time.Millisecond, func() (bool, error) {
		if err := l.Alive(); err != nil {
			return false, err
		}
		_, err := os.Stat(cfg.Stats)
		return err == nil, nil
	})
	if err != nil {
		return fmt.Errorf("%s not ready: %w", proc, err)
	}
	return nil
}

// delaylineCPUs are the CPUs the delay line runs on: those the hosts do
// not use (it is the network between them, not a host's work), or any
// when the hosts use them all.
func delaylineCPUs(c conditions.Set, cpus int) []int {
	if c.Cores == 0 || c.Cores >= cpus {
		return nil
	}
	var out []int
	for i := c.Cores; i < cpus; i++ {
		out = append(out, i)
	}
	return out
}

// readZoneCounters fills l.Zones.Directions from the delay line's last
// counters: what it moved, lost on purpose, and dropped because its queue
// was full. The runner calls it before removing the lab; a lab without a
// delay line has nothing to read.
func readZoneCounters(l *lab.Lab) error {
	if l.Zones == nil || l.Zones.DelayVia != conditions.ViaDelayline {
		return nil
	}
	dirs, err := delayline.ReadStats(filepath.Join(lab.StateRoot, l.Name, zoneStateDir, delaylineStats))
	if err != nil {
		return fmt.Errorf("lab %s: zone counters: %w", l.Name, err)
	}
	l.Zones.Directions = dirs
	return nil
}

// setLinkUp sets dev in ns up or down.
func setLinkUp(ns, dev string, up bool) error {
	return namespace.WithLink(ns, "", dev, func(h *netlink.Handle, link netlink.Link) error {
		set := h.LinkSetDown
		if up {
			set = h.LinkSetUp
		}
		if err := set(link); err != nil {
			return fmt.Errorf("set %s in %s up=%v: %w", dev, ns, up, err)
		}
		return nil
	})
}

func deleteLink(ns, dev string) error {
	return namespace.WithLink(ns, "", dev, func(h *netlink.Handle, link netlink.Link) error {
		if err := h.LinkDel(link); err != nil {
			return fmt.Errorf("delete %s in %s: %w", dev, ns, err)
		}
		return nil
	})
}

// zoneOf says which switch a host joins.
func zoneOf(remote map[string]bool, host string) string {
	if remote[host] {
		return zoneBridge
	}
	return "br0"
}
