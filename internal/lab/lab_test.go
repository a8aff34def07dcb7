package lab_test

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/modes"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/testutil"
)

// listenIn opens a TCP echo-of-greeting listener inside a namespace.
func listenIn(t *testing.T, ns, addr, greeting string) net.Listener {
	t.Helper()
	var ln net.Listener
	err := namespace.Do(ns, func() error {
		var err error
		ln, err = net.Listen("tcp4", addr)
		return err
	})
	if err != nil {
		t.Fatalf("listen in %s on %s: %v", ns, addr, err)
	}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = io.WriteString(c, greeting)
			c.Close()
		}
	}()
	return ln
}

// dialFrom connects from inside a namespace and returns what the peer says.
func dialFrom(ns, addr string) (string, error) {
	var conn net.Conn
	err := namespace.Do(ns, func() error {
		var err error
		conn, err = net.DialTimeout("tcp4", addr, 3*time.Second)
		return err
	})
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(3 * time.Second))
	b, err := io.ReadAll(conn)
	return string(b), err
}

func linkMTU(t *testing.T, ns, link string) int {
	t.Helper()
	h, err := namespace.Handle(ns)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	l, err := h.LinkByName(link)
	if err != nil {
		t.Fatalf("%s in %s: %v", link, ns, err)
	}
	return l.Attrs().MTU
}

func TestModesReachability(t *testing.T) {
	testutil.RequireRoot(t)
	const port = 8080
	for _, m := range netnsModes() {
		t.Run(m.Name(), func(t *testing.T) {
			testutil.SkipUnlessNeeds(t, m)
			name := "t" + fmt.Sprint(time.Now().UnixNano()%100000) + "_" + strings.ReplaceAll(m.Name(), "-", "_")
			topo := lab.ClientServers([]string{"siege", "ping", "pong"}, false)
			if m.Name() == "links" {
				// Links do not cross hosts: refused across two, built
				// with ping and pong on one.
				_, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: topo, Port: port})
				if err == nil || !strings.Contains(err.Error(), "containers on one host") {
					t.Errorf("links across hosts: err = %v, want a refusal", err)
				}
				topo = lab.Topology{Hosts: []lab.HostSpec{{Name: "siege"}, {Name: "ping", Endpoints: []lab.EndpointSpec{{Role: "ping"}, {Role: "pong"}}}}}
			}
			l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: topo, Port: port, Exe: testutil.Binary(t)})
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
				if _, err := os.Stat(filepath.Join(lab.StateRoot, name)); !errors.Is(err, os.ErrNotExist) {
					t.Errorf("state directory left after down: %v", err)
				}
			})
			if m.Name() == "ovs" {
				// The mode's databases and sockets are in its state directory.
				if _, err := os.Stat(filepath.Join(lab.StateRoot, name, "ovs", "pong", "db.sock")); err != nil {
					t.Errorf("ovs state: %v", err)
				}
			}
			if l.Topology == nil || len(l.Topology.Hosts) != len(topo.Hosts) || l.Endpoints[0].Role != "ping" || l.Endpoints[1].Role != "pong" {
				t.Errorf("topology %+v, endpoints %+v: want roles ping and pong recorded", l.Topology, l.Endpoints)
			}
			ping, err := l.Endpoint("ping")
			if err != nil {
				t.Fatal(err)
			}
			pong, err := l.Endpoint("pong")
			if err != nil {
				t.Fatal(err)
			}
			ln1 := listenIn(t, ping.NS, ping.Listen, "ping")
			defer ln1.Close()
			ln2 := listenIn(t, pong.NS, pong.Listen, "pong")
			defer ln2.Close()
			siege, _ := l.Host("siege")
			if got, err := dialFrom(siege.NS, ping.External); err != nil || got != "ping" {
				t.Errorf("siege -> ping at %s: got %q, %v", ping.External, got, err)
			}
			before := routerPackets(t, l)
			ovsBefore := ovsPackets(t, l, "pong")
			if got, err := dialFrom(ping.NS, pong.Internal); err != nil || got != "pong" {
				t.Errorf("ping -> pong at %s: got %q, %v", pong.Internal, got, err)
			}
			if m.Name() == "ovs" {
				// pong's container port on the OVS bridge carried the
				// connection: the packets crossed ovs-vswitchd.
				if n := ovsPackets(t, l, "pong") - ovsBefore; n < 4 {
					t.Errorf("pong's OVS port carried %d packets for the connection, want >= 4", n)
				}
			}
			if pong.Router != nil {
				checkRouter(t, l, ping, pong, before)
			}
			if m.Name() == "overlay" {
				if mtu := linkMTU(t, pong.NS, "eth0"); mtu != 1450 {
					t.Errorf("overlay container eth0 MTU = %d, want 1450", mtu)
				}
				if mtu := linkMTU(t, ping.NS, "eth0"); mtu != 1450 {
					t.Errorf("overlay container eth0 MTU = %d, want 1450", mtu)
				}
				if !strings.HasPrefix(pong.Internal, "198.19.200.") {
					t.Errorf("overlay internal address %s is not on the overlay subnet", pong.Internal)
				}
			}
			infos, err := drivers.Catalog().List()
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, in := range infos {
				if in.Name == name {
					found = true
					if in.Mode != m.Name() {
						t.Errorf("lab ls mode = %q, want %q", in.Mode, m.Name())
					}
				}
			}
			if !found {
				t.Errorf("lab ls does not list %s", name)
			}
		})
	}
}

func TestUpRejectsBadInputAndLeavesNothing(t *testing.T) {
	testutil.RequireRoot(t)
	m, _ := drivers.Catalog().Mode("bare")
	crowded := lab.OneHost("s")
	for i := range lab.MaxPerHost + 1 {
		crowded.Hosts[0].Endpoints = append(crowded.Hosts[0].Endpoints, lab.EndpointSpec{Role: fmt.Sprintf("c%d", i)})
	}
	cases := []struct {
		name string
		cfg  lab.Config
		want string
	}{
		{"dash in name", lab.Config{Name: "a-b", Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false)}, "lab name"},
		{"no mode", lab.Config{Name: "x1", Topology: lab.ClientServers([]string{"c", "s"}, false)}, "no mode"},
		{"one host", lab.Config{Name: "x2", Mode: m, Topology: lab.ClientServers([]string{"c"}, false)}, "client host"},
		{"repeated host", lab.Config{Name: "x3", Mode: m, Topology: lab.ClientServers([]string{"c", "c"}, false)}, "repeated"},
		{"more endpoints on a host than the bound", lab.Config{Name: "x4", Mode: m, Topology: crowded, Port: 8080},
			"lab: host s has 251 endpoints; at most 250 per host"},
		{"unknown driver", lab.Config{Name: "x5", Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false), Driver: "k8s"},
			`unknown driver "k8s" (known: netns, docker, kubernetes)`},
		{"network policy off a cluster", lab.Config{Name: "x6", Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false), Port: 8080,
			Conditions: conditions.Set{PolicyRules: 10}}, "lab: network_policy applies NetworkPolicies on Kubernetes; the netns driver has none"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := drivers.Catalog().Up(c.cfg)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want it to mention %q", err, c.want)
			}
			if left, _ := namespace.List(lab.Prefix + c.cfg.Name + "-"); len(left) > 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestDownIsIdempotent(t *testing.T) {
	testutil.RequireRoot(t)
	m, _ := drivers.Catalog().Mode("bridge")
	name := "tidem"
	cfg := lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s"}, false), Port: 9000}
	if _, err := drivers.Catalog().Up(cfg); err != nil {
		t.Fatal(err)
	}
	if _, err := drivers.Catalog().Up(cfg); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second up: err = %v, want 'already exists'", err)
	}
	for i := 0; i < 2; i++ {
		if err := drivers.Catalog().Down(name); err != nil {
			t.Fatalf("down #%d: %v", i+1, err)
		}
	}
	if left, _ := namespace.List(lab.Prefix + name + "-"); len(left) > 0 {
		t.Errorf("left behind: %v", left)
	}
}

// TestPeersWithPublishedUDP builds a peer lab (a container on the client
// host too) in every mode and checks that a UDP datagram from the client's
// container reaches a server in the server's container on a published UDP
// port: through DNAT and masquerade in bridge mode, across VXLAN in overlay.
func TestPeersWithPublishedUDP(t *testing.T) {
	testutil.RequireRoot(t)
	for _, m := range netnsModes() {
		name := m.Name()
		t.Run(name, func(t *testing.T) {
			testutil.SkipUnlessNeeds(t, m)
			labName := "tpeer_" + strings.ReplaceAll(name, "-", "_")
			topo := lab.ClientServers([]string{"c", "s"}, true)
			if name == "links" {
				topo = lab.OneHost("s", "c", "s") // links do not cross hosts
			}
			l, err := drivers.Catalog().Up(lab.Config{Name: labName, Mode: m, Topology: topo, Port: 9100,
				Publish: []lab.Port{{Number: 9101, Protocol: "udp"}}, Exe: testutil.Binary(t)})
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				if err := drivers.Catalog().Down(labName); err != nil {
					t.Error(err)
				}
			}()
			if len(l.Endpoints) != 2 || len(l.Publish) != 2 || l.Publish[1] != (lab.Port{Number: 9101, Protocol: "udp"}) {
				t.Fatalf("endpoints %+v, publish %+v", l.Endpoints, l.Publish)
			}
			client, _ := l.Endpoint("c")
			server, _ := l.Endpoint("s")
			if (name != "bare") != client.Container {
				t.Errorf("client endpoint %+v: container should be %v", client, name != "bare")
			}
			host, _, _ := net.SplitHostPort(server.Internal)
			udp := fmt.Sprint(9101 + server.PortShift) // a second slot's ports are shifted
			var pc net.PacketConn
			if err := namespace.Do(server.NS, func() error {
				var err error
				pc, err = net.ListenPacket("udp4", ":"+udp)
				return err
			}); err != nil {
				t.Fatal(err)
			}
			defer pc.Close()
			got := make(chan string, 1)
			go func() {
				buf := make([]byte, 64)
				_ = pc.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _, err := pc.ReadFrom(buf)
				if err != nil {
					got <- err.Error()
					return
				}
				got <- string(buf[:n])
			}()
			if err := namespace.Do(client.NS, func() error {
				c, err := net.Dial("udp4", net.JoinHostPort(host, udp))
				if err != nil {
					return err
				}
				defer c.Close()
				_, err = c.Write([]byte("hello"))
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if g := <-got; g != "hello" {
				t.Errorf("server got %q, want hello", g)
			}
		})
	}
}

// routerPackets sums the packets each host's overlay TUN has carried both
// ways: the kernel counts what the router read and wrote.
func routerPackets(t *testing.T, l *lab.Lab) map[string]uint64 {
	t.Helper()
	out := map[string]uint64{}
	for _, ep := range l.Endpoints {
		if ep.Router == nil {
			continue
		}
		h, _ := l.Host(ep.Host)
		nh, err := namespace.Handle(h.NS)
		if err != nil {
			t.Fatal(err)
		}
		link, err := nh.LinkByName(ep.Router.TUN)
		nh.Close()
		if err != nil {
			t.Fatalf("%s on %s: %v", ep.Router.TUN, ep.Host, err)
		}
		st := link.Attrs().Statistics
		out[ep.Host] = st.RxPackets + st.TxPackets
	}
	return out
}

// checkRouter checks a user-space overlay: the containers' MTU is the
// router's, pong is reached on the overlay's subnet, and ping's connection
// really crossed both hosts' routers.
func checkRouter(t *testing.T, l *lab.Lab, ping, pong lab.Endpoint, before map[string]uint64) {
	t.Helper()
	want := map[string]int{"udp": 1472, "wireguard": 1420}[pong.Router.Kind]
	if want == 0 || pong.Router.MTU != want {
		t.Errorf("router %+v, want MTU %d", pong.Router, want)
	}
	for _, ep := range []lab.Endpoint{ping, pong} {
		if mtu := linkMTU(t, ep.NS, "eth0"); mtu != want {
			t.Errorf("%s container eth0 MTU = %d, want %d", ep.Host, mtu, want)
		}
		h, _ := l.Host(ep.Host)
		if mtu := linkMTU(t, h.NS, ep.Router.TUN); mtu != want {
			t.Errorf("%s %s MTU = %d, want %d", ep.Host, ep.Router.TUN, mtu, want)
		}
	}
	if !strings.HasPrefix(pong.Internal, "198.19.16") {
		t.Errorf("internal address %s is not on the user-space overlay", pong.Internal)
	}
	if pong.Router.Kind == "wireguard" && !strings.Contains(pong.Router.Cipher, "ChaCha20-Poly1305") {
		t.Errorf("cipher %q", pong.Router.Cipher)
	}
	after := routerPackets(t, l)
	for _, host := range []string{"ping", "pong"} {
		// The handshake and the greeting cross each host's TUN: SYN,
		// SYN-ACK, ACK and data, at least (the close may still be on its way).
		if after[host]-before[host] < 4 {
			t.Errorf("%s's router carried %d packets for the connection, want >= 4", host, after[host]-before[host])
		}
	}
	for name, p := range l.Processes() {
		if done, err := p.Exited(); done {
			t.Errorf("%s exited: %v", name, err)
		}
	}
}

// cpusAllowed reads a process's Cpus_allowed_list.
func cpusAllowed(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list for %d", pid)
	return ""
}

// TestCoresCondition checks that the cores condition is enforced: the
// application's processes, the CPU stress and the overlay routers are
// pinned where the condition says, the router apart from the application.
func TestCoresCondition(t *testing.T) {
	testutil.RequireRoot(t)
	if runtime.NumCPU() < 2 {
		t.Skip("needs 2 CPUs")
	}
	m, _ := drivers.Catalog().Mode("overlay-userspace")
	name := "tcores"
	cond := conditions.Set{Cores: 1, Router: "apart", CPUStress: 0.2}
	l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s1", "s2"}, false), Port: 9300, Exe: testutil.Binary(t), Conditions: cond})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := drivers.Catalog().Down(name); err != nil {
			t.Error(err)
		}
	})
	want := map[string]string{"router-s1": "1", "router-s2": "1", "stress-s1": "0", "stress-s2": "0"}
	for n, w := range want {
		p := l.Processes()[n]
		if p == nil {
			t.Errorf("no process %s (have %v)", n, l.Processes())
			continue
		}
		if got := cpusAllowed(t, p.PID()); got != w {
			t.Errorf("%s runs on CPUs %s, want %s", n, got, w)
		}
	}
	ep, _ := l.Endpoint("s2")
	srv, err := process.Start(process.Spec{Lab: name, Name: "srv", NetNS: ep.NS, Container: true, CPUs: l.HostCPUs(),
		Args: []string{testutil.Binary(t), "pause"}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop(time.Second)
	if got := cpusAllowed(t, srv.PID()); got != "0" {
		t.Errorf("a server of the lab runs on CPUs %s, want 0", got)
	}
	// The pinning holds for every thread a Go program starts later, as the
	// kernel's affinity is inherited: one thread of the router, sampled.
	tasks, _ := os.ReadDir(fmt.Sprintf("/proc/%d/task", l.Processes()["router-s1"].PID()))
	for _, task := range tasks {
		b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%s/status", l.Processes()["router-s1"].PID(), task.Name()))
		if !strings.Contains(string(b), "Cpus_allowed_list:\t1\n") {
			t.Errorf("router thread %s is not pinned to CPU 1", task.Name())
		}
	}
}

// ovsPackets reads the packets pong's container port on its OVS bridge has
// carried both ways (0 for other modes). The veth's only attachment is
// ovs-vswitchd's netdev datapath (AF_PACKET), so what it carried crossed it.
func ovsPackets(t *testing.T, l *lab.Lab, host string) uint64 {
	t.Helper()
	if l.Mode != "ovs" {
		return 0
	}
	h, _ := l.Host(host)
	nh, err := namespace.Handle(h.NS)
	if err != nil {
		t.Fatal(err)
	}
	defer nh.Close()
	link, err := nh.LinkByName("vethovs")
	if err != nil {
		t.Fatal(err)
	}
	if link.Attrs().MasterIndex != 0 {
		t.Errorf("vethovs has a kernel master (index %d): OVS's netdev datapath should own it", link.Attrs().MasterIndex)
	}
	st := link.Attrs().Statistics
	return st.RxPackets + st.TxPackets
}

// TestMTUCondition builds overlays on a 1400-byte underlay: the NICs take
// the condition's MTU and each overlay its header less, unless overlay_mtu
// says otherwise.
func TestMTUCondition(t *testing.T) {
	testutil.RequireRoot(t)
	tests := []struct {
		mode             string
		cond             conditions.Set
		dev              string // the overlay device in the host
		wantDev, wantCtr int
	}{
		{"overlay", conditions.Set{MTU: 1400}, "vxlan0", 1350, 1350},
		{"overlay", conditions.Set{MTU: 1400, OverlayMTU: 1300}, "vxlan0", 1300, 1300},
		{"overlay-userspace", conditions.Set{MTU: 1400}, "cnov0", 1372, 1372},
	}
	for i, tc := range tests {
		t.Run(tc.mode+"/"+tc.cond.Label(), func(t *testing.T) {
			m, _ := drivers.Catalog().Mode(tc.mode)
			name := fmt.Sprintf("tmtu%d", i)
			l, err := drivers.Catalog().Up(lab.Config{Name: name, Mode: m, Topology: lab.ClientServers([]string{"c", "s1", "s2"}, false), Port: 9400, Exe: testutil.Binary(t), Conditions: tc.cond})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() {
				if err := drivers.Catalog().Down(name); err != nil {
					t.Error(err)
				}
			})
			h, _ := l.Host("s1")
			ep, _ := l.Endpoint("s1")
			if got := linkMTU(t, h.NS, "eth0"); got != tc.cond.MTU {
				t.Errorf("host eth0 MTU %d, want %d", got, tc.cond.MTU)
			}
			if got := linkMTU(t, h.NS, tc.dev); got != tc.wantDev {
				t.Errorf("%s MTU %d, want %d", tc.dev, got, tc.wantDev)
			}
			if got := linkMTU(t, ep.NS, "eth0"); got != tc.wantCtr {
				t.Errorf("container eth0 MTU %d, want %d", got, tc.wantCtr)
			}
			peer, _ := l.Endpoint("s2")
			ln := listenIn(t, peer.NS, peer.Listen, "hi")
			defer ln.Close()
			if got, err := dialFrom(ep.NS, peer.Internal); err != nil || got != "hi" {
				t.Errorf("s1 -> s2 over the overlay at %s: %q, %v", peer.Internal, got, err)
			}
		})
	}
}

// farRuntime is a runtime of hosts out of this machine's sight.
type farRuntime struct {
	lab.Runtime
}

func (farRuntime) Sight() lab.Sight { return lab.Sight{} }

// TestNamespaces: a lab's namespaces on this machine are those named for
// it and those its hosts and endpoints run in outside them, once each; a
// lab out of sight adds none.
func TestNamespaces(t *testing.T) {
	l := &lab.Lab{}
	l.Hosts = []lab.Host{{Name: "h1", NS: "cnperf-a-h1"}, {Name: "h2", NS: "/proc/1/ns/net"}, {Name: "pod"}}
	l.Endpoints = []lab.Endpoint{{Host: "h1", NS: "/run/docker/netns/x"}, {Host: "h2", NS: "/proc/1/ns/net"}, {Host: "pod"}}
	got := l.Namespaces([]string{"cnperf-a-h1", "cnperf-a-sw"})
	want := []string{"cnperf-a-h1", "cnperf-a-sw", "/proc/1/ns/net", "/run/docker/netns/x"}
	if !slices.Equal(got, want) {
		t.Fatalf("Namespaces = %q, want %q", got, want)
	}
	l.Runtime = farRuntime{}
	if got := l.Namespaces([]string{"cnperf-a-sw"}); !slices.Equal(got, []string{"cnperf-a-sw"}) {
		t.Fatalf("out of sight: Namespaces = %q, want the listed alone", got)
	}
}

// netnsModes are the modes the netns driver builds: the kernel topologies
// cnperf makes by hand (the Kubernetes modes run only on a cluster).
func netnsModes() []lab.Mode {
	var out []lab.Mode
	for _, m := range modes.All() {
		if _, ok := m.(netns.Mode); ok {
			out = append(out, m)
		}
	}
	return out
}
