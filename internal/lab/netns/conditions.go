package netns

import (
	"fmt"
	"runtime"
	"strconv"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
)

// Finish sets the lab's TCP congestion control and applies its conditions
// once the mode is built; servers are the hosts that carry endpoints, where
// the CPU stress runs. fixedOff are the devices ("ns/dev") whose offloads
// the mode needs off (nil for none).
func Finish(l *lab.Lab, servers []lab.Host, fixedOff map[string]bool) error {
	if err := setCongestion(l); err != nil {
		return fmt.Errorf("tcp_congestion %s: %w", l.Conditions.Congestion(), err)
	}
	if err := applyConditions(l, servers, fixedOff); err != nil {
		return fmt.Errorf("conditions %s: %w", l.Conditions.Label(), err)
	}
	return shapeLinks(l)
}

// labNamespaces lists the lab's namespaces and its Docker containers'.
func labNamespaces(l *lab.Lab) ([]string, error) {
	nss, err := namespaces(l.Name)
	if err != nil {
		return nil, err
	}
	return l.Namespaces(nss), nil
}

// applyConditions shapes the underlay, sets offloads and TCP buffers in
// every namespace of the lab, and starts the CPU stress on each server
// host. CPUs are pinned where processes start (HostCPUs, StartProcess).
func applyConditions(l *lab.Lab, servers []lab.Host, fixedOff map[string]bool) error {
	c := l.Conditions
	if c.Empty() {
		return nil
	}
	b := netdev.B{Lab: l.Name}
	if c.Bandwidth != "" {
		for _, h := range l.Hosts {
			for _, dev := range nics(l, h) {
				if err := b.Shape(h.NS, dev, c.Bandwidth); err != nil {
					return err
				}
			}
		}
	}
	nss, err := labNamespaces(l)
	if err != nil {
		return err
	}
	for _, ns := range nss {
		if ns == l.Switch {
			continue // the switch's ports stay as a switch's are
		}
		if c.TCPRmem != "" {
			if err := b.Sysctl(ns, "net.ipv4.tcp_rmem", c.TCPRmem); err != nil {
				return err
			}
		}
		if c.TCPWmem != "" {
			if err := b.Sysctl(ns, "net.ipv4.tcp_wmem", c.TCPWmem); err != nil {
				return err
			}
		}
		if c.Offloads != "" {
			h, err := namespace.Handle(ns)
			if err != nil {
				return err
			}
			links, err := h.LinkList()
			h.Close()
			if err != nil {
				return err
			}
			for _, link := range links {
				if link.Attrs().Name == "lo" || (c.Offloads == "on" && fixedOff[ns+"/"+link.Attrs().Name]) {
					continue
				}
				if err := b.Offloads(ns, link.Attrs().Name, c.Offloads == "on"); err != nil {
					return err
				}
			}
		}
	}
	if c.ConntrackMax > 0 {
		if err := lab.SetConntrackMax(l.Name, c.ConntrackMax); err != nil {
			return err
		}
	}
	if c.CPUStress > 0 {
		threads := max(len(c.HostCPUs()), 1)
		if c.Cores == 0 {
			threads = runtime.NumCPU()
		}
		for _, h := range servers {
			args := []string{"stress", "--share", strconv.FormatFloat(c.CPUStress, 'g', -1, 64), "--threads", strconv.Itoa(threads)}
			if c.CPUStressOn > 0 {
				args = append(args, "--on", c.CPUStressOn.String(), "--off", c.CPUStressOff.String())
			}
			if err := l.StartProcess("stress-"+h.Name, h.NS, c.HostCPUs(), args); err != nil {
				return err
			}
		}
	}
	return nil
}

// nics are a host's underlay devices: eth0 on a switch, in a chain the
// segments it is on (each shaped on its own, as a host's two NICs).
func nics(l *lab.Lab, h lab.Host) []string {
	if l.Chain == nil {
		return []string{"eth0"}
	}
	var out []string
	if h.Index > 1 {
		out = append(out, ChainPrev)
	}
	if h.Index < len(l.Hosts) {
		out = append(out, ChainNext)
	}
	return out
}
