package lab_test

import (
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/testutil"
)

// fanOutClients is Bryzgalov's (2014) largest fan-out: one server, 20 clients.
const fanOutClients = 20

// fanOut is a server and clients c1..cN placed by the hosts' counts of
// clients; the server is on the first host.
func fanOut(clients ...int) lab.Topology {
	var t lab.Topology
	n := 0
	for i, c := range clients {
		h := lab.HostSpec{Name: fmt.Sprintf("h%d", i+1)}
		if i == 0 {
			h.Endpoints = append(h.Endpoints, lab.EndpointSpec{Role: "server"})
		}
		for range c {
			n++
			h.Endpoints = append(h.Endpoints, lab.EndpointSpec{Role: fmt.Sprintf("c%d", n)})
		}
		t.Hosts = append(t.Hosts, h)
	}
	return t
}

// echoIn serves, in ns, an echo of each connection's bytes.
func echoIn(t *testing.T, ns, addr string) net.Listener {
	t.Helper()
	var ln net.Listener
	if err := namespace.Do(ns, func() error {
		var err error
		ln, err = net.Listen("tcp4", addr)
		return err
	}); err != nil {
		t.Fatalf("listen in %s on %s: %v", ns, addr, err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_ = c.SetDeadline(time.Now().Add(5 * time.Second))
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln
}

// echoFrom connects from ns to addr, sends msg and reads it back.
func echoFrom(ns, addr, msg string) error {
	var c net.Conn
	if err := namespace.Do(ns, func() error {
		var err error
		c, err = net.DialTimeout("tcp4", addr, 3*time.Second)
		return err
	}); err != nil {
		return err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.WriteString(c, msg); err != nil {
		return err
	}
	if err := c.(*net.TCPConn).CloseWrite(); err != nil {
		return err
	}
	got, err := io.ReadAll(c)
	if err != nil {
		return err
	}
	if string(got) != msg {
		return fmt.Errorf("echo %q, want %q", got, msg)
	}
	return nil
}

// TestFanOut builds Bryzgalov's (2014) fan-out, a server and 20 client containers
// on one host, in every mode, and across two hosts (10 clients beside the
// server, 10 on the other host) in every mode that crosses hosts: each
// client connects to the server's Internal address and has a few bytes
// echoed. Every endpoint has its role, and the lab leaves nothing behind.
func TestFanOut(t *testing.T) {
	testutil.RequireRoot(t)
	const port = 7000
	for _, shape := range []struct {
		name    string
		clients []int
	}{{"one_host", []int{fanOutClients}}, {"two_hosts", []int{fanOutClients / 2, fanOutClients / 2}}} {
		for _, m := range netnsModes() {
			if m.Name() == "links" && len(shape.clients) > 1 {
				continue // links do not cross hosts (TestModesReachability)
			}
			t.Run(shape.name+"/"+m.Name(), func(t *testing.T) {
				testutil.SkipUnlessNeeds(t, m)
				name := "tfan" + fmt.Sprint(len(shape.clients)) + "_" + strings.ReplaceAll(m.Name(), "-", "_")
				topo := fanOut(shape.clients...)
				l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: topo, Port: port,
					Publish: []lab.Port{{Number: port + 1, Protocol: "udp"}}, Exe: testutil.Binary(t)})
				if err != nil {
					t.Fatalf("lab up: %v", err)
				}
				t.Cleanup(func() {
					if err := drivers.Catalog().Down(name); err != nil {
						t.Errorf("lab down: %v", err)
					}
					if left, _ := namespace.List(lab.Prefix + name + "-"); len(left) > 0 {
						t.Errorf("namespaces left after down: %v", left)
					}
				})
				if len(l.Endpoints) != fanOutClients+1 {
					t.Fatalf("%d endpoints, want %d", len(l.Endpoints), fanOutClients+1)
				}
				server, err := l.Endpoint("server")
				if err != nil {
					t.Fatal(err)
				}
				ln := echoIn(t, server.NS, server.Listen)
				defer ln.Close()
				nss := map[string]bool{}
				var wg sync.WaitGroup
				errs := make([]error, fanOutClients)
				for i := range fanOutClients {
					c, err := l.Endpoint(fmt.Sprintf("c%d", i+1))
					if err != nil {
						t.Fatal(err)
					}
					nss[c.NS] = true
					wg.Add(1)
					go func() {
						defer wg.Done()
						if err := echoFrom(c.NS, server.Internal, "hello from "+c.Role); err != nil {
							errs[i] = fmt.Errorf("%s on %s (%s) -> server at %s: %w", c.Role, c.Host, c.NS, server.Internal, err)
						}
					}()
				}
				wg.Wait()
				for _, err := range errs {
					if err != nil {
						t.Error(err)
					}
				}
				// Containers are their own namespaces; bare and host share
				// their host's, told apart by their ports.
				want := fanOutClients
				if m.Name() == "bare" || m.Name() == "host" {
					want = len(shape.clients)
				}
				if len(nss) != want {
					t.Errorf("clients run in %d namespaces, want %d", len(nss), want)
				}
			})
		}
	}
}
