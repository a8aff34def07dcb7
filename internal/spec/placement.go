package spec

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/workload"
)

// Placement is where a socket lab's containers run: Servers server
// containers and Clients client containers, all on one host (Hosts
// "same", Bryzgalov's (2014) inter-container tests) or the servers on one host and
// the clients on another ("apart", the default). Each test then runs on as
// many of them as it says (workload.Test's clients, servers, pairs,
// processes). Ping-pong takes it too (checkSweepPlacement): its servers,
// ping and pong, then share one host, and its client, siege, is on
// another.
type Placement struct {
	Hosts   string `yaml:"hosts,omitempty" json:"hosts,omitempty"`
	Servers int    `yaml:"servers,omitempty" json:"servers,omitempty"`
	Clients int    `yaml:"clients,omitempty" json:"clients,omitempty"`
}

// Placement's hosts.
const (
	SameHost   = "same"
	HostsApart = "apart"
)

// MaxEndpointsPerHost bounds the containers a placement puts on one host.
const MaxEndpointsPerHost = 250

// Placed returns the spec's placement with its defaults: one server and
// one client, apart.
func (s Spec) Placed() Placement {
	p := Placement{Hosts: HostsApart, Servers: 1, Clients: 1}
	if s.Placement != nil {
		if s.Placement.Hosts != "" {
			p.Hosts = s.Placement.Hosts
		}
		p.Servers = max(s.Placement.Servers, 1)
		p.Clients = max(s.Placement.Clients, 1)
	}
	return p
}

// checkPlacement bounds the placement and checks that every case finds the
// containers it runs on.
func (s Spec) checkPlacement(cases []workload.Case) error {
	if p := s.Placement; p != nil {
		switch {
		case p.Hosts != "" && p.Hosts != SameHost && p.Hosts != HostsApart:
			return fmt.Errorf("placement.hosts %q: want %s (servers and clients on one host) or %s (on two)", p.Hosts, SameHost, HostsApart)
		case p.Servers < 0 || p.Servers > workload.MaxServers:
			return fmt.Errorf("placement.servers %d: must be in 1..%d", p.Servers, workload.MaxServers)
		case p.Clients < 0 || p.Clients > workload.MaxClients:
			return fmt.Errorf("placement.clients %d: must be in 1..%d", p.Clients, workload.MaxClients)
		}
	}
	p := s.Placed()
	if p.Hosts == SameHost && p.Servers+p.Clients > MaxEndpointsPerHost {
		return fmt.Errorf("placement: %d servers and %d clients on one host, more than %d containers", p.Servers, p.Clients, MaxEndpointsPerHost)
	}
	for _, c := range cases {
		t := c.Test
		field := fmt.Sprintf("tests[%d].", c.Index)
		if c.Param != "" {
			field = fmt.Sprintf("tests[%d] (%s=%s): ", c.Index, c.Param, c.Value)
		}
		clients, servers := t.ClientCount(p.Clients), t.ServerCount(p.Clients)
		switch {
		case clients > p.Clients:
			return fmt.Errorf("%sclients %d: the placement has %d client containers (placement.clients)", field, clients, p.Clients)
		case servers > p.Servers:
			return fmt.Errorf("%sservers %d: the placement has %d server containers (placement.servers)", field, servers, p.Servers)
		}
		// The busiest server serves ceil(clients / servers) containers'
		// processes at once.
		if fanIn := (clients + servers - 1) / servers * t.ProcessCount(); fanIn > workload.MaxFanIn {
			return fmt.Errorf("%sprocesses %d: %d clients at once on one server, more than %d", field, t.ProcessCount(), fanIn, workload.MaxFanIn)
		}
	}
	return nil
}

// checkSweepPlacement checks ping-pong's placement: its client (siege) on
// a host of its own and its servers (ping and pong) together on another
// ("apart"), so that ping's request to pong crosses two containers of one
// host as Bryzgalov (2014) measured. Siege stays outside the servers' host
// as Kratzke's client stays outside the cluster, so "same" is refused;
// ping-pong has one ping, one pong and one siege.
func (s Spec) checkSweepPlacement() error {
	p := s.Placement
	if p == nil {
		return nil
	}
	switch {
	case p.Hosts == SameHost:
		return fmt.Errorf("placement.hosts %s: ping-pong's siege runs on a host of its own, outside its servers' (Kratzke's client outside the cluster); %s puts ping and pong on one host", p.Hosts, HostsApart)
	case p.Hosts != "" && p.Hosts != HostsApart:
		return fmt.Errorf("placement.hosts %q: ping-pong takes %s (ping and pong on one host, siege on another)", p.Hosts, HostsApart)
	case p.Servers < 0 || p.Servers > 1:
		return fmt.Errorf("placement.servers %d: ping-pong has one ping and one pong (1)", p.Servers)
	case p.Clients < 0 || p.Clients > 1:
		return fmt.Errorf("placement.clients %d: ping-pong runs one siege (1)", p.Clients)
	}
	return nil
}
