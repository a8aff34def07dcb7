package lab

import (
	"errors"
	"slices"
	"strings"
	"testing"
)

type fakeMode struct{}

func (fakeMode) Name() string    { return "fake" }
func (fakeMode) Summary() string { return "a mode for tests" }

// fakeDriver builds hosts and one endpoint per host that carries any, as
// the modes do, and notes what it was asked.
type fakeDriver struct {
	checkErr, upErr error
	calls           []string
}

func (d *fakeDriver) Name() string { return "fake" }
func (d *fakeDriver) Check(Config) error {
	d.calls = append(d.calls, "check")
	return d.checkErr
}
func (d *fakeDriver) Up(l *Lab, cfg Config) error {
	d.calls = append(d.calls, "up")
	for i, h := range cfg.Topology.Hosts {
		l.Hosts = append(l.Hosts, Host{Name: h.Name, Index: i + 1})
	}
	b := l.NewBuild()
	for _, h := range b.Hosts {
		l.Endpoints = append(l.Endpoints, Endpoint{Host: h.Name, Listen: HostPort("0.0.0.0", b.Port)})
	}
	return d.upErr
}
func (d *fakeDriver) Down(string) error {
	d.calls = append(d.calls, "down")
	return nil
}
func (d *fakeDriver) Labs() ([]Info, error) { return nil, nil }

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
	two := Topology{Hosts: []HostSpec{{Name: "h1", Endpoints: []EndpointSpec{{Role: "server"}, {Role: "client"}}}}}
	for _, tc := range []struct {
		name      string
		topo      Topology
		d         *fakeDriver
		want      string
		wantCalls []string
	}{
		{"two endpoints on one host", two, &fakeDriver{},
			"lab: host h1 has 2 endpoints (server, client); mode fake builds one endpoint per host", nil},
		{"repeated role", Topology{Hosts: []HostSpec{{Name: "a", Endpoints: []EndpointSpec{{Role: "x"}}}, {Name: "b", Endpoints: []EndpointSpec{{Role: "x"}}}}},
			&fakeDriver{}, `host b: bad or repeated role "x"`, nil},
		{"the switch's name", ClientServers([]string{"c", "net"}, false), &fakeDriver{}, `bad or repeated host name "net"`, nil},
		{"no endpoint", ClientServers([]string{"c"}, false), &fakeDriver{}, "no host carries an endpoint", nil},
		{"driver refuses", pingPong, &fakeDriver{checkErr: errors.New("lab tfake already exists")}, "already exists", []string{"check"}},
		{"build fails", pingPong, &fakeDriver{upErr: errors.New("no bridge")}, "no bridge", []string{"check", "up", "down"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Up(tc.d, Config{Name: "tfake", Mode: fakeMode{}, Topology: tc.topo, Port: 8080})
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want %q", err, tc.want)
			}
			if !slices.Equal(tc.d.calls, tc.wantCalls) {
				t.Errorf("driver calls %v, want %v", tc.d.calls, tc.wantCalls)
			}
		})
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
