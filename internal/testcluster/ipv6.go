package testcluster

import (
	"fmt"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
)

// hostNIC is a lab host's NIC on the underlay switch.
const hostNIC = "eth0"

// hostIPv6 gives a dual cluster's host (its namespace ns) its IPv6 address
// on the underlay: IPv6 on, no router advertisements (the addresses are
// the plan's, nothing else may add any), forwarding (a node routes its
// pods), and the address without duplicate address detection, so that it
// is usable at once: the kubelet checks its --node-ip is the host's and
// the routes to other nodes' pods need it. The settings are the
// namespace's own, gone with it.
func hostIPv6(labName, ns, addr string) error {
	b := netdev.B{Lab: labName}
	for _, dev := range []string{"all", "default", hostNIC} {
		for _, kv := range [][2]string{{"disable_ipv6", "0"}, {"accept_ra", "0"}} {
			if err := b.Sysctl(ns, "net.ipv6.conf."+dev+"."+kv[0], kv[1]); err != nil {
				return err
			}
		}
	}
	if err := b.Sysctl(ns, "net.ipv6.conf.all.forwarding", "1"); err != nil {
		return err
	}
	return namespace.WithLink(ns, "", hostNIC, func(h *netlink.Handle, l netlink.Link) error {
		a, err := netlink.ParseAddr(addr + "/64")
		if err != nil {
			return fmt.Errorf("parse address %s: %w", addr, err)
		}
		a.Flags = unix.IFA_F_NODAD
		if err := h.AddrAdd(l, a); err != nil {
			return fmt.Errorf("add %s/64 to %s in %s: %w", addr, hostNIC, ns, err)
		}
		return nil
	})
}
