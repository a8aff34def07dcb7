package lab

import (
	"errors"
	"fmt"
	"regexp"

	"github.com/cnperf/cnperf/internal/record"
)

// The topology types, as the lab's record stores them.
type (
	Topology     = record.Topology
	HostSpec     = record.HostSpec
	EndpointSpec = record.EndpointSpec
)

// A chain's bounds: a line needs two hosts, and each segment takes a /24
// of the address plan (plan.go's ChainSegment).
const (
	MinChain = 2
	MaxChain = 16
)

// MaxHosts bounds a lab's hosts: each takes an address of the underlay's
// /24 (plan.go's UnderlayIP).
const MaxHosts = 250

// SwitchHost names a lab's underlay namespace (cnperf-LAB-net): no host
// may take it.
const SwitchHost = "net"

var (
	hostRE = regexp.MustCompile(`^[a-z][a-z0-9]{0,9}$`)
	roleRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,19}$`)
)

// ClientServers is the topology of a client and its servers: the first
// host is the client, outside the cluster (with peers, an endpoint in the
// cluster too), and every other host carries one endpoint; each endpoint's
// role is its host's name. `cnperf lab up --hosts` builds this.
func ClientServers(hosts []string, peers bool) Topology {
	var t Topology
	for i, h := range hosts {
		spec := HostSpec{Name: h}
		if i > 0 || peers {
			spec.Endpoints = []EndpointSpec{{Role: h}}
		}
		t.Hosts = append(t.Hosts, spec)
	}
	return t
}

// OneHost is the topology of endpoints that all run on one host, by role
// (Bryzgalov 2014: a server and its client containers side by side).
func OneHost(host string, roles ...string) Topology {
	spec := HostSpec{Name: host}
	for _, r := range roles {
		spec.Endpoints = append(spec.Endpoints, EndpointSpec{Role: r})
	}
	return Topology{Hosts: []HostSpec{spec}}
}

// checkTopology refuses a topology no driver can build: bad or repeated
// names, no endpoint, more endpoints on a host than MaxPerHost.
func checkTopology(t Topology) error {
	if len(t.Hosts) == 0 {
		return errors.New("lab: no hosts: need a client host and at least one server host")
	}
	if len(t.Hosts) > MaxHosts {
		return fmt.Errorf("lab: %d hosts; at most %d", len(t.Hosts), MaxHosts)
	}
	hosts := map[string]bool{SwitchHost: true}
	roles := map[string]bool{}
	endpoints := 0
	for _, h := range t.Hosts {
		if !hostRE.MatchString(h.Name) || hosts[h.Name] {
			return fmt.Errorf("lab: bad or repeated host name %q", h.Name)
		}
		hosts[h.Name] = true
		for _, e := range h.Endpoints {
			if !roleRE.MatchString(e.Role) || roles[e.Role] {
				return fmt.Errorf("lab: host %s: bad or repeated role %q (1-20 of a-z, 0-9 and _, starting with a letter)", h.Name, e.Role)
			}
			roles[e.Role] = true
		}
		if len(h.Endpoints) > MaxPerHost {
			return fmt.Errorf("lab: host %s has %d endpoints; at most %d per host", h.Name, len(h.Endpoints), MaxPerHost)
		}
		endpoints += len(h.Endpoints)
	}
	if endpoints == 0 {
		return errors.New("lab: no host carries an endpoint: need a client host and at least one server host")
	}
	if t.Chain && (len(t.Hosts) < MinChain || len(t.Hosts) > MaxChain) {
		return fmt.Errorf("lab: a chain of %d hosts: want %d to %d", len(t.Hosts), MinChain, MaxChain)
	}
	return nil
}

// checkShiftedPorts refuses ports that the slots' shifts would push past
// 65535.
func checkShiftedPorts(t Topology, publish []Port) error {
	span := portSpan(publish)
	for _, h := range t.Hosts {
		if len(h.Endpoints) < 2 {
			continue
		}
		for _, p := range publish {
			if top := p.Number + (len(h.Endpoints)-1)*span; top > 65535 {
				return fmt.Errorf("lab: port %d/%s: host %s's %d endpoints each take their own ports, up to %d, above 65535", p.Number, p.Protocol, h.Name, len(h.Endpoints), top)
			}
		}
	}
	return nil
}

// assignRoles gives each endpoint the mode built the role the topology
// asked for on its host and, unless the mode set its own, its slot's port
// shift, and checks that the mode built what was asked.
func assignRoles(l *Lab) error {
	want := map[string][]EndpointSpec{}
	n := 0
	for _, h := range l.Topology.Hosts {
		want[h.Name] = h.Endpoints
		n += len(h.Endpoints)
	}
	if len(l.Endpoints) != n {
		return fmt.Errorf("mode %s built %d endpoints, the topology asks for %d", l.Mode, len(l.Endpoints), n)
	}
	used := map[string]int{}
	span := portSpan(l.Publish)
	for i := range l.Endpoints {
		ep := &l.Endpoints[i]
		specs := want[ep.Host]
		if used[ep.Host] >= len(specs) {
			return fmt.Errorf("mode %s built more endpoints on host %q than the topology's %d", l.Mode, ep.Host, len(specs))
		}
		ep.Role = specs[used[ep.Host]].Role
		// A mode that moves an endpoint's ports itself (k8s-nodeport into
		// the node port range, k8s-host apart on a shared node) says so;
		// otherwise the slot's shift is the endpoint's.
		if ep.PortShift == 0 {
			ep.PortShift = used[ep.Host] * span
		}
		used[ep.Host]++
	}
	return nil
}

// cloneTopology copies t, so that the record does not share the caller's
// slices.
func cloneTopology(t Topology) Topology {
	c := Topology{Chain: t.Chain}
	for _, h := range t.Hosts {
		c.Hosts = append(c.Hosts, HostSpec{Name: h.Name, Endpoints: append([]EndpointSpec(nil), h.Endpoints...)})
	}
	return c
}
