package lab

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

type fakeMode struct{}

func (fakeMode) Name() string    { return "fake" }
func (fakeMode) Summary() string { return "a mode for tests" }

// fakeDriver builds hosts and the endpoints the Build asks for, as the
// modes do, and notes what it was asked.
type fakeDriver struct {
	BaseDriver
	checkErr, upErr error
	calls           []string
}

func (d *fakeDriver) Name() string { return "fake" }
func (d *fakeDriver) Validate(Config) error {
	d.calls = append(d.calls, "check")
	return d.checkErr
}
func (d *fakeDriver) Up(l *Lab, cfg Config) error {
	d.calls = append(d.calls, "up")
	for i, h := range cfg.Topology.Hosts {
		l.Hosts = append(l.Hosts, Host{Name: h.Name, Index: i + 1})
	}
	b := l.NewBuild()
	for _, e := range b.Endpoints {
		l.Endpoints = append(l.Endpoints, Endpoint{Host: e.Host.Name, NS: b.NS(e), Listen: HostPort("0.0.0.0", e.Port(b.Port))})
	}
	return d.upErr
}
func (d *fakeDriver) Down(string) error {
	d.calls = append(d.calls, "down")
	return nil
}
func (d *fakeDriver) Labs() ([]Info, error)             { return nil, nil }
func (d *fakeDriver) Builds(Mode) bool                  { return true }
func (d *fakeDriver) Options(OptionsInput) (any, error) { return nil, nil }
func (d *fakeDriver) Preflight(PreflightInput) error    { return nil }

var pingPong = Topology{Hosts: []HostSpec{
	{Name: "siege"},
	{Name: "ping", Endpoints: []EndpointSpec{{Role: "ping"}}},
	{Name: "pong", Endpoints: []EndpointSpec{{Role: "front"}}},
}}

// Up records the topology, builds on the hosts that carry endpoints only,
// and gives each endpoint its role.
func TestUpRecordsTopologyAndRoles(t *testing.T) {
	d := &fakeDriver{}
	topo := cloneTopology(pingPong)
	l, err := Up(d, Config{Name: "tfake", Mode: fakeMode{}, Topology: topo, Port: 8080})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d.calls, []string{"check", "up"}) {
		t.Errorf("driver calls %v", d.calls)
	}
	if l.Driver != "fake" || l.Mode != "fake" || len(l.Endpoints) != 2 {
		t.Fatalf("lab %+v", l.Lab)
	}
	front, err := l.Endpoint("front")
	if err != nil || front.Host != "pong" {
		t.Errorf("Endpoint(front) = %+v, %v; want pong's", front, err)
	}
	if _, err := l.Endpoint("pong"); err == nil {
		t.Error("an endpoint is found by its role, not its host's name")
	}
	topo.Hosts[1].Endpoints[0].Role = "changed"
	if l.Topology == nil || l.Topology.Hosts[1].Endpoints[0].Role != "ping" || len(l.Topology.Hosts[0].Endpoints) != 0 {
		t.Errorf("recorded topology %+v", l.Topology)
	}
}

// What no mode can build yet is refused before the driver is asked; a
// driver's refusal removes nothing (the lab may be someone's); a failed
// build removes what it built.
func TestUpRefusesAndRollsBack(t *testing.T) {
	crowded := OneHost("h1")
	for i := range MaxPerHost + 1 {
		crowded.Hosts[0].Endpoints = append(crowded.Hosts[0].Endpoints, EndpointSpec{Role: fmt.Sprintf("c%d", i)})
	}
	for _, tc := range []struct {
		name      string
		topo      Topology
		d         *fakeDriver
		want      string
		wantCalls []string
	}{
		{"more endpoints on a host than the bound", crowded, &fakeDriver{}, "lab: host h1 has 251 endpoints; at most 250 per host", nil},
		{"repeated role", Topology{Hosts: []HostSpec{{Name: "a", Endpoints: []EndpointSpec{{Role: "x"}}}, {Name: "b", Endpoints: []EndpointSpec{{Role: "x"}}}}},
			&fakeDriver{}, `host b: bad or repeated role "x"`, nil},
		{"the switch's name", ClientServers([]string{"c", "net"}, false), &fakeDriver{}, `bad or repeated host name "net"`, nil},
		{"no endpoint", ClientServers([]string{"c"}, false), &fakeDriver{}, "no host carries an endpoint", nil},
		{"driver refuses", pingPong, &fakeDriver{checkErr: errors.New("lab tfake already exists")}, "already exists", []string{"check"}},
		{"build fails", pingPong, &fakeDriver{upErr: errors.New("no bridge")}, "no bridge", []string{"check", "up", "down"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Up(tc.d, Config{Name: "tfake", Mode: fakeMode{}, Topology: tc.topo, Port: 8080})
			if err != nil && strings.Contains(err.Error(), "\n") {
				t.Errorf("err = %q: want one line", err)
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if !slices.Equal(tc.d.calls, tc.wantCalls) {
				t.Errorf("driver calls %v, want %v", tc.d.calls, tc.wantCalls)
			}
		})
	}
}

// A host may carry several endpoints: one host alone is a lab, the mode is
// asked for every endpoint with its slot, and each slot's ports are shifted
// by the span of the lab's ports (8080-8082 here: 3), in the Build and in
// the record.
func TestSeveralEndpointsOnAHost(t *testing.T) {
	d := &fakeDriver{}
	topo := OneHost("h1", "server", "c1", "c2")
	publish := []Port{{Number: 8082, Protocol: "udp"}}
	l, err := Up(d, Config{Name: "tfake", Mode: fakeMode{}, Topology: topo, Port: 8080, Publish: publish})
	if err != nil {
		t.Fatal(err)
	}
	b := l.NewBuild()
	if len(b.Hosts) != 1 || len(b.AllHosts) != 1 || !b.Several() {
		t.Errorf("build hosts %+v, all %+v, several %v", b.Hosts, b.AllHosts, b.Several())
	}
	for k, want := range []struct {
		role  string
		shift int
		ns    string
	}{{"server", 0, "cnperf-tfake-h1-c"}, {"c1", 3, "cnperf-tfake-h1-c1"}, {"c2", 6, "cnperf-tfake-h1-c2"}} {
		e := b.Endpoints[k]
		if e.Role != want.role || e.Slot != k || e.Shift != want.shift || b.NS(e) != want.ns || e.Port(8082) != 8082+want.shift {
			t.Errorf("endpoint %d: %+v in %s, want role %s, shift %d in %s", k, e, b.NS(e), want.role, want.shift, want.ns)
		}
		ep, err := l.Endpoint(want.role)
		if err != nil || ep.PortShift != want.shift || ep.NS != want.ns || ep.Listen != HostPort("0.0.0.0", 8080+want.shift) {
			t.Errorf("Endpoint(%s) = %+v, %v; want port shift %d", want.role, ep, err, want.shift)
		}
	}
	if Dev("veth0", 0) != "veth0" || Dev("vethovs", 250) != "vethovs-250" {
		t.Errorf("Dev: %s, %s", Dev("veth0", 0), Dev("vethovs", 250))
	}
	// One endpoint per host keeps slot 0's names and no shift.
	one := (&Lab{Lab: l.Lab}).withTopology(pingPong).NewBuild()
	if one.Several() || len(one.Endpoints) != 2 || one.NS(one.Endpoints[1]) != "cnperf-tfake-pong-c" || one.Endpoints[1].Shift != 0 {
		t.Errorf("ping-pong build %+v", one.Endpoints)
	}
}

// Shifted ports past 65535 are refused in one line naming the port.
func TestShiftedPortsBounded(t *testing.T) {
	topo := OneHost("h1")
	for i := range 200 {
		topo.Hosts[0].Endpoints = append(topo.Hosts[0].Endpoints, EndpointSpec{Role: fmt.Sprintf("c%d", i)})
	}
	d := &fakeDriver{}
	_, err := Up(d, Config{Name: "tfake", Mode: fakeMode{}, Topology: topo, Port: 65400})
	want := "lab: port 65400/tcp: host h1's 200 endpoints each take their own ports, up to 65599, above 65535"
	if err == nil || err.Error() != want || len(d.calls) != 0 {
		t.Errorf("err = %v, calls %v; want %q before the driver is asked", err, d.calls, want)
	}
}

func TestClientServers(t *testing.T) {
	got := ClientServers([]string{"client", "server"}, true)
	want := Topology{Hosts: []HostSpec{{Name: "client", Endpoints: []EndpointSpec{{Role: "client"}}}, {Name: "server", Endpoints: []EndpointSpec{{Role: "server"}}}}}
	if len(got.Hosts) != 2 || !slices.Equal(got.Hosts[0].Endpoints, want.Hosts[0].Endpoints) || !slices.Equal(got.Hosts[1].Endpoints, want.Hosts[1].Endpoints) {
		t.Errorf("peers: %+v", got)
	}
	if got := ClientServers([]string{"siege", "ping"}, false); len(got.Hosts[0].Endpoints) != 0 || got.Hosts[1].Endpoints[0].Role != "ping" {
		t.Errorf("no peers: %+v", got)
	}
}

// withTopology is l with topology t and hosts for it, as a driver's Up
// leaves them.
func (l *Lab) withTopology(t Topology) *Lab {
	l.Topology, l.Hosts = &t, nil
	for i, h := range t.Hosts {
		l.Hosts = append(l.Hosts, Host{Name: h.Name, Index: i + 1})
	}
	return l
}

// TestAssignRolesKeepsAModesOwnShift: a mode that moved an endpoint's
// ports (k8s-nodeport into the node port range) keeps that shift; the
// others get their slot's.
func TestAssignRolesKeepsAModesOwnShift(t *testing.T) {
	l := &Lab{}
	l.Publish = []Port{{Number: 5201, Protocol: "tcp"}, {Number: 5202, Protocol: "udp"}}
	l.Topology = &Topology{Hosts: []HostSpec{
		{Name: "c", Endpoints: []EndpointSpec{{Role: "client"}}},
		{Name: "s", Endpoints: []EndpointSpec{{Role: "server1"}, {Role: "server2"}}},
	}}
	l.Endpoints = []Endpoint{{Host: "c", PortShift: 27000}, {Host: "s"}, {Host: "s"}}
	if err := assignRoles(l); err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		role  string
		shift int
	}{{"client", 27000}, {"server1", 0}, {"server2", 2}} {
		if got := l.Endpoints[i]; got.Role != want.role || got.PortShift != want.shift {
			t.Errorf("endpoint %d: role %s shift %d, want %s %d", i, got.Role, got.PortShift, want.role, want.shift)
		}
	}
}
