package netns_test

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestIPv6Modes: on every mode that carries IPv6, an ipv6 and a dual lab
// of a client host and a server host with two endpoints (slots 0 and 1)
// carry a connection from the client to each server at the address the
// lab records, which the server's own socket sees come from an IPv6
// address of the lab; an IPv6-only lab has no IPv4 address on any device
// but loopback, a dual one reaches each server at its IPv4 twin too.
// IPv6 is quiet: every address is usable at once (no duplicate address
// detection), and no device has a link-local address the lab did not
// give it. Nothing of a lab is left after it is removed.
func TestIPv6Modes(t *testing.T) {
	testutil.RequireRoot(t)
	bench := netip.MustParsePrefix("2001:2::/48")
	for i, mode := range []string{"bare", "host", "macvlan", "veth-routed", "bridge-routed"} {
		for j, family := range []string{conditions.IPv6, conditions.Dual} {
			t.Run(mode+"/"+family, func(t *testing.T) {
				m, err := drivers.Catalog().Mode(mode)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("tipsix%d%d", i, j)
				_ = lab.Down(name, netns.Driver{}) // a crashed run's
				topo := lab.Topology{Hosts: []lab.HostSpec{
					{Name: "h1", Endpoints: []lab.EndpointSpec{{Role: "client"}}},
					{Name: "h2", Endpoints: []lab.EndpointSpec{{Role: "server"}, {Role: "server2"}}},
				}}
				l, err := lab.Up(netns.Driver{}, lab.Config{Name: name, Mode: m, Topology: topo, Port: 9700 + 10*i + j,
					Conditions: conditions.Set{IPFamily: family}})
				if err != nil {
					t.Fatal(err)
				}
				removed := false
				t.Cleanup(func() {
					if !removed {
						_ = lab.Down(name, netns.Driver{})
					}
				})
				if l.IPFamily != family {
					t.Errorf("lab records ip_family %q", l.IPFamily)
				}
				for k, h := range l.Hosts {
					if h.Addr6 != lab.UnderlayIP6(k+1).String() || (h.Addr == "") != (family == conditions.IPv6) {
						t.Errorf("host %s: addr %q addr6 %q", h.Name, h.Addr, h.Addr6)
					}
				}
				client, err := l.Endpoint("client")
				if err != nil {
					t.Fatal(err)
				}
				nss := map[string]bool{}
				for _, h := range l.Hosts {
					nss[h.NS] = true
				}
				for _, role := range []string{"server", "server2"} {
					srv, err := l.Endpoint(role)
					if err != nil {
						t.Fatal(err)
					}
					nss[srv.NS] = true
					if !strings.HasPrefix(srv.Listen, "[::]:") || !strings.HasPrefix(srv.Internal, "[2001:2:") {
						t.Errorf("%s: listen %s, internal %s", role, srv.Listen, srv.Internal)
					}
					if (srv.Internal4 != "") != (family == conditions.Dual) {
						t.Errorf("%s: IPv4 twin %q on %s", role, srv.Internal4, family)
					}
					peers := acceptFrom(t, srv)
					if err := echo6(client.NS, srv.Internal); err != nil {
						t.Fatalf("client to %s at %s: %v", role, srv.Internal, err)
					}
					p := <-peers
					t.Logf("%s at %s (listening on %s) saw %s with %s", role, srv.Internal, srv.Listen, p.ip, p.cc)
					if p.ip.To4() != nil || !bench.Contains(netip.MustParseAddr(p.ip.String())) || p.cc != l.TCPCongestion {
						t.Errorf("%s saw the client come from %s with %s, want an IPv6 lab address with the lab's %s", role, p.ip, p.cc, l.TCPCongestion)
					}
					if family == conditions.Dual {
						if err := echo6(client.NS, srv.Internal4); err != nil {
							t.Fatalf("client to %s at its IPv4 twin %s: %v", role, srv.Internal4, err)
						}
						if p := <-peers; p.ip.To4() == nil || p.cc != l.TCPCongestion {
							t.Errorf("%s at %s saw the client come from %s with %s, want IPv4 with %s", role, srv.Internal4, p.ip, p.cc, l.TCPCongestion)
						}
					}
				}
				nss[client.NS] = true
				for ns := range nss {
					checkQuiet(t, ns, family)
				}
				if err := lab.Down(name, netns.Driver{}); err != nil {
					t.Fatal(err)
				}
				removed = true
				if left, err := namespace.List(lab.Prefix + name + "-"); err != nil || len(left) > 0 {
					t.Errorf("left after down: %v %v", left, err)
				}
			})
		}
	}
}

// TestIPv6Chain: on a bare chain of three hosts with IPv6 (ipv6 and
// dual) the client on h1 reaches the server on h3 at its IPv6 address
// through h2, and not once h2 stops forwarding IPv6.
func TestIPv6Chain(t *testing.T) {
	testutil.RequireRoot(t)
	m, err := drivers.Catalog().Mode("bare")
	if err != nil {
		t.Fatal(err)
	}
	for j, family := range []string{conditions.IPv6, conditions.Dual} {
		t.Run(family, func(t *testing.T) {
			name := fmt.Sprintf("tipsixchain%d", j)
			_ = lab.Down(name, netns.Driver{})
			l, err := lab.Up(netns.Driver{}, lab.Config{Name: name, Mode: m, Topology: chainTopology(3), Port: 9790 + j,
				Conditions: conditions.Set{IPFamily: family}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := lab.Down(name, netns.Driver{}); err != nil {
					t.Error(err)
				}
			})
			client, _ := l.Endpoint("client")
			far, err := l.Endpoint("server3")
			if err != nil {
				t.Fatal(err)
			}
			if !strings.HasPrefix(far.Internal, "[2001:2::3]:") {
				t.Fatalf("h3 dialled at %s", far.Internal)
			}
			peers := acceptFrom(t, far)
			if err := echo6(client.NS, far.Internal); err != nil {
				t.Fatalf("h1 to h3 at %s: %v", far.Internal, err)
			}
			if p := <-peers; p.ip.String() != "2001:2::1" {
				t.Errorf("h3 saw h1 come from %s, want its plan address 2001:2::1", p.ip)
			}
			if err := (netdev.B{Lab: name}).Sysctl(l.Hosts[1].NS, "net.ipv6.conf.all.forwarding", "0"); err != nil {
				t.Fatal(err)
			}
			if err := echo6(client.NS, far.Internal); err == nil {
				t.Errorf("h1 reached h3 with h2 not forwarding IPv6: not through the hop")
			}
		})
	}
}

// checkQuiet: in ns, no IPv4 address but loopback's on an IPv6-only lab;
// no IPv6 address waiting on duplicate address detection; link-local
// addresses only the plan's (fe80::<i>), on the devices a lab forwards
// from.
func checkQuiet(t *testing.T, ns, family string) {
	t.Helper()
	h, err := namespace.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	links, err := h.LinkList()
	if err != nil {
		t.Fatal(err)
	}
	for _, lk := range links {
		name := lk.Attrs().Name
		v4, _ := h.AddrList(lk, netlink.FAMILY_V4)
		if family == conditions.IPv6 && name != "lo" && len(v4) > 0 {
			t.Errorf("%s %s: IPv4 %v on an IPv6-only lab", ns, name, v4)
		}
		v6, _ := h.AddrList(lk, netlink.FAMILY_V6)
		for _, a := range v6 {
			if a.Flags&(unix.IFA_F_TENTATIVE|unix.IFA_F_DADFAILED) != 0 {
				t.Errorf("%s %s: %s waits on (or failed) duplicate address detection", ns, name, a.IPNet)
			}
			// The plan's are fe80::<i>; a generated one (EUI-64, stable
			// privacy) fills the interface identifier's upper bytes.
			if a.IP.IsLinkLocalUnicast() && !allZero(a.IP[8:14]) {
				t.Errorf("%s %s: generated link-local %s", ns, name, a.IPNet)
			}
		}
	}
}

// peer is a connection as the server's socket saw it: where from, and
// with which congestion control.
type peer struct {
	ip net.IP
	cc string
}

// acceptFrom serves ep as the runner's servers listen (on ep.Listen over
// "tcp"), echoing one line per connection and sending each peer.
func acceptFrom(t *testing.T, ep lab.Endpoint) <-chan peer {
	t.Helper()
	var ln net.Listener
	if err := namespace.Do(ep.NS, func() error {
		var err error
		ln, err = net.Listen("tcp", ep.Listen)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	peers := make(chan peer, 4)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			peers <- peer{c.RemoteAddr().(*net.TCPAddr).IP, ccOf(c)}
			go func() {
				defer c.Close()
				b := make([]byte, 64)
				n, _ := c.Read(b)
				_, _ = c.Write(b[:n])
			}()
		}
	}()
	return peers
}

// echo6 connects from ns to addr over "tcp" (either family) and has a
// line echoed, within 3 s.
func echo6(ns, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	c, err := namespace.Dialer(ns)(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := c.Write([]byte("six\n")); err != nil {
		return err
	}
	b := make([]byte, 4)
	if _, err := c.Read(b); err != nil {
		return err
	}
	if string(b) != "six\n" {
		return fmt.Errorf("echoed %q", b)
	}
	return nil
}

func allZero(b []byte) bool {
	for _, x := range b {
		if x != 0 {
			return false
		}
	}
	return true
}

// ccOf is congestionOf for the accepting goroutine: "" when it cannot tell.
func ccOf(c net.Conn) string {
	raw, err := c.(*net.TCPConn).SyscallConn()
	if err != nil {
		return ""
	}
	var cc string
	_ = raw.Control(func(fd uintptr) { cc, _ = unix.GetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION) })
	return strings.TrimRight(cc, "\x00")
}
