package overlay_test

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
)

// TestIPFamilyDatapaths builds ipv6 and dual labs of bridge, links and
// overlay (two endpoints on one host too: on bridge they reach each other
// at the host's published ports, NAT66 hairpin) and carries a TCP exchange over each way a workload dials: the
// client host to every endpoint's External (published port), and every
// endpoint to the others' Internal, each checked to be IPv6 from the
// server's side (the peer address it accepted) and answered. It judges
// only the labs it made, and that each is gone after Down.
func TestIPFamilyDatapaths(t *testing.T) {
	testutil.RequireRoot(t)
	for _, c := range []struct {
		mode string
		topo lab.Topology
	}{
		{"bridge", lab.ClientServers([]string{"c", "s1", "s2"}, false)},
		{"overlay", lab.ClientServers([]string{"c", "s1", "s2"}, false)},
		{"bridge", lab.Topology{Hosts: []lab.HostSpec{{Name: "c"}, {Name: "s", Endpoints: []lab.EndpointSpec{{Role: "a"}, {Role: "b"}}}}}},
		{"links", lab.Topology{Hosts: []lab.HostSpec{{Name: "c"}, {Name: "s", Endpoints: []lab.EndpointSpec{{Role: "a"}, {Role: "b"}}}}}},
		{"overlay", lab.Topology{Hosts: []lab.HostSpec{{Name: "c"}, {Name: "s1", Endpoints: []lab.EndpointSpec{{Role: "a"}, {Role: "b"}}}, {Name: "s2", Endpoints: []lab.EndpointSpec{{Role: "d"}}}}}},
		// A chain: the VXLAN bound to no device, over routed IPv6 hops.
		{"overlay", lab.Topology{Chain: true, Hosts: []lab.HostSpec{{Name: "c", Endpoints: []lab.EndpointSpec{{Role: "c"}}}, {Name: "m", Endpoints: []lab.EndpointSpec{{Role: "m"}}}, {Name: "s", Endpoints: []lab.EndpointSpec{{Role: "s"}}}}}},
	} {
		for _, f := range []string{conditions.IPv6, conditions.Dual} {
			t.Run(fmt.Sprintf("%s/%s/chain=%v", c.mode, f, c.topo.Chain), func(t *testing.T) {
				m, err := drivers.Catalog().Mode(c.mode)
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("tfam_%s_%s_%d", strings.ReplaceAll(c.mode, "-", ""), f, len(c.topo.Hosts[1].Endpoints))
				if c.topo.Chain {
					name += "_chain"
				}
				l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: c.topo, Port: 9410,
					Exe: testutil.Binary(t), Conditions: conditions.Set{IPFamily: f}})
				if err != nil {
					t.Fatal(err)
				}
				defer func() {
					if err := drivers.Catalog().Down(name); err != nil {
						t.Error(err)
					}
					if nss, _ := namespace.List(lab.Prefix + name + "-"); len(nss) > 0 {
						t.Errorf("left %v", nss)
					}
				}()
				client, err := l.Host("c")
				if err != nil {
					t.Fatal(err)
				}
				for _, ep := range l.Endpoints {
					stop := echo(t, ep)
					exchange(t, client.NS, ep.External, "client to "+ep.Role+" at "+ep.External)
					for _, peer := range l.Endpoints {
						if peer.Role != ep.Role {
							exchange(t, peer.NS, ep.Internal, peer.Role+" to "+ep.Role+" at "+ep.Internal)
						}
					}
					if f == conditions.Dual && ep.External4 == "" {
						t.Errorf("%s: dual lab with no IPv4 External (%+v)", ep.Role, ep)
					}
					stop()
				}
			})
		}
	}
}

// echo listens on the endpoint's Listen address inside its namespace (a
// socket stays in the namespace it was made in) and answers each line
// with the peer's address as the server saw it.
func echo(t *testing.T, ep lab.Endpoint) (stop func()) {
	t.Helper()
	var ln net.Listener
	err := namespace.Do(ep.NS, func() error {
		var err error
		ln, err = net.Listen("tcp", ep.Listen)
		return err
	})
	if err != nil {
		t.Fatalf("listen on %s in %s: %v", ep.Listen, ep.NS, err)
	}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer conn.Close()
				if _, err := bufio.NewReader(conn).ReadString('\n'); err == nil {
					fmt.Fprintf(conn, "%s\n", conn.RemoteAddr())
				}
			}()
		}
	}()
	return func() { ln.Close() }
}

// exchange dials addr from inside ns and checks the answer: the server
// saw an IPv6 peer (a dual lab's IPv4-mapped peer would read ::ffff:).
func exchange(t *testing.T, ns, addr, what string) {
	t.Helper()
	var answer string
	err := namespace.Do(ns, func() error {
		d := net.Dialer{Timeout: 3 * time.Second}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		conn, err := d.DialContext(ctx, "tcp", addr)
		if err != nil {
			return err
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := fmt.Fprintf(conn, "hello\n"); err != nil {
			return err
		}
		answer, err = bufio.NewReader(conn).ReadString('\n')
		return err
	})
	if err != nil {
		t.Errorf("%s: %v", what, err)
		return
	}
	host, _, err := net.SplitHostPort(strings.TrimSpace(answer))
	ip := net.ParseIP(host)
	if err != nil || ip == nil || ip.To4() != nil || !strings.HasPrefix(host, "2001:2:") {
		t.Errorf("%s: the server saw peer %q, want an address of 2001:2::/48", what, strings.TrimSpace(answer))
	}
}
