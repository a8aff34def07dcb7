package netns_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
)

// chainTopology is n hosts h1..hn in a line: a client on h1, server2..
// on the others.
func chainTopology(n int) lab.Topology {
	t := lab.Topology{Chain: true}
	for i := 1; i <= n; i++ {
		role := fmt.Sprintf("server%d", i)
		if i == 1 {
			role = "client"
		}
		t.Hosts = append(t.Hosts, lab.HostSpec{Name: fmt.Sprintf("h%d", i), Endpoints: []lab.EndpointSpec{{Role: role}}})
	}
	return t
}

// TestChainRefusedBeforeBuilding: a chain too short or too long, a mode
// that cannot run on one and zones are refused in one line, before
// anything is built (so no root is needed).
func TestChainRefusedBeforeBuilding(t *testing.T) {
	bare, _ := drivers.Catalog().Mode("bare")
	macvlan, _ := drivers.Catalog().Mode("macvlan")
	encrypted, _ := drivers.Catalog().Mode("overlay-encrypted")
	one := chainTopology(1)
	one.Hosts[0].Endpoints = append(one.Hosts[0].Endpoints, lab.EndpointSpec{Role: "server"})
	for _, c := range []struct {
		name string
		cfg  lab.Config
		want string
	}{
		{"one host", lab.Config{Mode: bare, Topology: one}, "a chain of 1 hosts: want 2 to 16"},
		{"17 hosts", lab.Config{Mode: bare, Topology: chainTopology(17)}, "a chain of 17 hosts: want 2 to 16"},
		{"macvlan", lab.Config{Mode: macvlan, Topology: chainTopology(3)}, "mode macvlan cannot run on a chain"},
		{"encrypted", lab.Config{Mode: encrypted, Topology: chainTopology(3)}, "mode overlay-encrypted cannot run on a chain"},
		{"zones", lab.Config{Mode: bare, Topology: chainTopology(3), Conditions: conditions.Set{ZoneDelay: time.Millisecond}}, "a chain of hosts has none"},
	} {
		c.cfg.Name, c.cfg.Port = "tchainbad", 9600
		_, err := lab.Up(netns.Driver{}, c.cfg)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: got %v, want one line with %q", c.name, err, c.want)
		}
	}
}

// TestChainReachesOnlyThroughHops: on a six-host chain the client on h1
// reaches the server on h6 in bare, overlay and overlay-userspace, and not
// directly: h1 has no route to h6's address in the relayed overlay, and in
// the kernel-routed modes the path breaks once h2..h5 stop forwarding. The
// user-space overlay keeps working without them: its routers relay.
func TestChainReachesOnlyThroughHops(t *testing.T) {
	testutil.RequireRoot(t)
	for i, mode := range []string{"bare", "overlay", "overlay-userspace"} {
		t.Run(mode, func(t *testing.T) {
			m, _ := drivers.Catalog().Mode(mode)
			name := fmt.Sprintf("tchain%d", i)
			_ = lab.Down(name, netns.Driver{}) // a crashed run's
			port := 9610 + i
			l, err := lab.Up(netns.Driver{}, lab.Config{Name: name, Mode: m, Topology: chainTopology(6), Port: port, Exe: testutil.Binary(t)})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := lab.Down(name, netns.Driver{}); err != nil {
					t.Error(err)
				}
			})
			if l.Chain == nil || len(l.Chain.Segments) != 5 || l.Chain.Segments[4].Subnet != "198.18.15.0/24" {
				t.Fatalf("chain recorded as %+v, want 5 segments up to 198.18.15.0/24", l.Chain)
			}
			client, err := l.Endpoint("client")
			if err != nil {
				t.Fatal(err)
			}
			far, err := l.Endpoint("server6")
			if err != nil {
				t.Fatal(err)
			}
			listen(t, far)
			if err := echo(client.NS, far.Internal); err != nil {
				t.Fatalf("h1 to h6 (%s): %v", far.Internal, err)
			}
			h1 := l.Hosts[0].NS
			if routed := l.Chain.Routing == netns.ChainKernel; routed != (mode != "overlay-userspace") {
				t.Fatalf("routing %s for %s", l.Chain.Routing, mode)
			}
			if mode == "overlay-userspace" {
				// Below the overlay h1 reaches its neighbour only.
				if err := echo(h1, lab.HostPort(l.Hosts[1].Addr, 22)); !refused(err) {
					t.Errorf("h1 to h2's address: %v, want refused (reached, nothing listens)", err)
				}
				for _, h := range l.Hosts[2:] {
					if err := echo(h1, lab.HostPort(h.Addr, 22)); err == nil || refused(err) {
						t.Errorf("h1 reached %s's address %s below the overlay: %v", h.Name, h.Addr, err)
					}
				}
			}
			for _, h := range l.Hosts[1:5] {
				if err := (netdev.B{Lab: name}).Sysctl(h.NS, "net.ipv4.ip_forward", "0"); err != nil {
					t.Fatal(err)
				}
			}
			err = echo(client.NS, far.Internal)
			switch {
			case mode == "overlay-userspace" && err != nil:
				t.Errorf("relayed, h1 to h6 with h2..h5 not forwarding: %v", err)
			case mode != "overlay-userspace" && err == nil:
				t.Errorf("h1 reached h6 with h2..h5 not forwarding: not through the hops")
			}
		})
	}
}

// listen echoes one line per connection at the endpoint.
func listen(t *testing.T, ep lab.Endpoint) {
	t.Helper()
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
				b := make([]byte, 64)
				n, _ := c.Read(b)
				_, _ = c.Write(b[:n])
			}()
		}
	}()
}

// echo connects from ns to addr and has a line echoed, within 2 s.
func echo(ns, addr string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	c, err := namespace.Dialer(ns)(ctx, "tcp4", addr)
	if err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(2 * time.Second))
	if _, err := c.Write([]byte("hop\n")); err != nil {
		return err
	}
	b := make([]byte, 4)
	if _, err := c.Read(b); err != nil {
		return err
	}
	if string(b) != "hop\n" {
		return fmt.Errorf("echoed %q", b)
	}
	return nil
}

func refused(err error) bool { return err != nil && errors.Is(err, syscall.ECONNREFUSED) }

// TestCheckLinksOnChain: a chain's links are its hops, named by their
// hosts; a host's name or zones is not one of them.
func TestCheckLinksOnChain(t *testing.T) {
	topo := lab.Topology{Chain: true, Hosts: []lab.HostSpec{{Name: "h1"}, {Name: "h2"}, {Name: "h3"}}}
	for _, tc := range []struct{ link, want string }{
		{"h1-h2", ""},
		{"h2-h3", ""},
		{"h1-h3", `links[0].link "h1-h3": the lab has no such link (it has h1-h2, h2-h3)`},
		{"h2", `links[0].link "h2": the lab has no such link (it has h1-h2, h2-h3)`},
		{"zones", "links[0].link zones: the lab has no zones (set zone_hosts or zone_delay)"},
	} {
		err := netns.Driver{}.CheckLinks(lab.Config{Topology: topo, Links: []conditions.Link{{Link: tc.link, Delay: time.Millisecond}}})
		if (tc.want == "" && err != nil) || (tc.want != "" && (err == nil || err.Error() != tc.want)) {
			t.Errorf("CheckLinks(%s) = %v, want %q", tc.link, err, tc.want)
		}
	}
}
