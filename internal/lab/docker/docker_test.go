package docker_test

import (
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/docker/engine"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/modes"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/testutil"
)

// echoIn serves, in ns, an echo of each connection's bytes and sends the
// address each connection came from on peers.
func echoIn(t *testing.T, ns, addr string, peers chan<- string) net.Listener {
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
			host, _, _ := net.SplitHostPort(c.RemoteAddr().String())
			peers <- host
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

// fanOut is a server on h1 and clients c1..cN placed by the hosts' counts.
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

// noNAT are the modes whose server sees a client container's own address.
var noNAT = map[string]bool{"links": true, "bridge-routed": true, "macvlan": true, "overlay": true, "flannel-vxlan": true}

// dockerModes are the modes the docker driver builds with an engine.
var dockerModes = map[string]bool{"host": true, "bridge": true, "macvlan": true, "overlay": true, "links": true, "bridge-routed": true, "flannel-vxlan": true}

// TestSeveralEndpointsPerHost builds Bryzgalov's (2014) fan-out on real
// engines, a server and 20 client containers on one host, in every mode the
// docker driver builds with an engine, with 3 more clients on a second host
// in the modes that cross hosts (one lab holds both shapes): each client
// has a few bytes echoed by the server at its Internal address, each
// endpoint is a sandbox of its own, modes without NAT show the server the
// client's own address, and the lab leaves no engine, container or
// namespace behind.
func TestSeveralEndpointsPerHost(t *testing.T) {
	testutil.RequireDocker(t)
	const port = 7000
	seen := 0
	for _, m := range modes.All() {
		if !dockerModes[m.Name()] {
			continue
		}
		seen++
		clients := []int{20, 3}
		if m.Name() == "links" {
			clients = clients[:1] // links do not cross hosts
		}
		t.Run(m.Name(), func(t *testing.T) {
			testutil.SkipUnlessNeeds(t, m)
			name := "tdk_" + strings.ReplaceAll(m.Name(), "-", "_")
			l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Driver: "docker", Topology: fanOut(clients...), Port: port,
				Publish: []lab.Port{{Number: port + 1, Protocol: "udp"}}, Exe: testutil.Binary(t)})
			if err != nil {
				t.Fatalf("lab up: %v", err)
			}
			t.Cleanup(func() { down(t, name) })
			checkFanOut(t, l, m.Name())
		})
	}
	if seen != len(dockerModes) {
		t.Errorf("%d labs built, want %d: a docker mode went missing from modes.All", seen, len(dockerModes))
	}
}

// checkFanOut echoes from every client to the server and checks what the
// server saw.
func checkFanOut(t *testing.T, l *lab.Lab, mode string) {
	t.Helper()
	server, err := l.Endpoint("server")
	if err != nil {
		t.Fatal(err)
	}
	clients := len(l.Endpoints) - 1
	peers := make(chan string, clients)
	ln := echoIn(t, server.NS, server.Listen, peers)
	defer ln.Close()
	sandboxes := map[string]bool{server.Docker.Sandbox: true}
	own := map[string]bool{}
	var wg sync.WaitGroup
	errs := make([]error, clients)
	for i := range clients {
		c, err := l.Endpoint(fmt.Sprintf("c%d", i+1))
		if err != nil {
			t.Fatal(err)
		}
		if c.Docker == nil {
			t.Fatalf("%s has no sandbox", c.Role)
		}
		sandboxes[c.Docker.Sandbox] = true
		ip, _, _ := net.SplitHostPort(c.Internal)
		own[ip] = true
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := echoFrom(c.NS, server.Internal, "hello from "+c.Role); err != nil {
				errs[i] = fmt.Errorf("%s on %s -> server at %s: %w", c.Role, c.Host, server.Internal, err)
			}
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if len(sandboxes) != clients+1 {
		t.Errorf("%d sandboxes for %d endpoints", len(sandboxes), clients+1)
	}
	for range clients {
		select {
		case from := <-peers:
			if noNAT[mode] && !own[from] {
				t.Errorf("server saw a connection from %s, not a client's own address", from)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("the server saw fewer connections than clients")
		}
	}
}

// down removes the lab and checks that nothing of it is left.
func down(t *testing.T, name string) {
	t.Helper()
	if err := drivers.Catalog().Down(name); err != nil {
		t.Errorf("lab down: %v", err)
	}
	if left, _ := namespace.List(lab.Prefix + name + "-"); len(left) > 0 {
		t.Errorf("namespaces left after down: %v", left)
	}
	for _, d := range []string{engine.RunDir(name), engine.DataDir(name)} {
		if _, err := os.Stat(d); err == nil {
			t.Errorf("%s left after down", d)
		}
	}
}
