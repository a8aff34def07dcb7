package run

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
)

// A chain lab (spec.Chain) is hosts h1..hN in a line with one container
// each: the client on h1, server2..serverN on the others. A hops=k case
// runs from the client to server(k+1); a segment=i case from server i's
// container to server i+1's, so each segment is measured alone.

// chainTopology is the chain's hosts and containers.
func chainTopology(hosts int) lab.Topology {
	t := lab.Topology{Chain: true}
	for i := 1; i <= hosts; i++ {
		t.Hosts = append(t.Hosts, lab.HostSpec{Name: "h" + strconv.Itoa(i), Endpoints: []lab.EndpointSpec{{Role: chainRole(i)}}})
	}
	return t
}

// chainRole is the role of host i's container.
func chainRole(i int) string {
	if i == 1 {
		return "client"
	}
	return "server" + strconv.Itoa(i)
}

// chainEnds are the containers a chain case runs between, by role.
func chainEnds(c workload.Case) (client, server string, err error) {
	n, err := strconv.Atoi(c.Value)
	if err != nil || n < 1 {
		return "", "", fmt.Errorf("chain case %q: bad %s %q", c.Label, c.Param, c.Value)
	}
	switch c.Param {
	case spec.HopsParam:
		return chainRole(1), chainRole(n + 1), nil
	case spec.SegmentParam:
		return chainRole(n), chainRole(n + 1), nil
	}
	return "", "", fmt.Errorf("chain case %q: not over the chain", c.Label)
}

// chainServerRoles are the containers that serve: every host's but h1's.
func chainServerRoles(hosts int) []string {
	var out []string
	for i := 2; i <= hosts; i++ {
		out = append(out, chainRole(i))
	}
	return out
}

// driversThat names the catalog's drivers whose capabilities (without
// options) say can, for a refusal to say which drivers would do.
func driversThat(cat lab.Catalog, can func(lab.Capabilities) bool) string {
	var names []string
	for _, d := range cat.Drivers {
		if can(d.Capabilities(nil)) {
			names = append(names, d.Name())
		}
	}
	return strings.Join(names, " and ")
}

// checkChainModes refuses, in the spec's words, modes that cannot run on
// a chain, before any lab is built.
func checkChainModes(cat lab.Catalog, s spec.Spec) error {
	if s.Chain == nil {
		return nil
	}
	for _, name := range s.RunDrivers() {
		d, err := cat.Driver(name)
		if err != nil {
			return nil // CheckDrivers says so
		}
		if !d.Capabilities(nil).Chains {
			return fmt.Errorf("chain: driver %s: only the %s driver builds chains", name, driversThat(cat, func(c lab.Capabilities) bool { return c.Chains }))
		}
	}
	d, err := cat.Driver(s.Driver)
	if err != nil {
		return nil // CheckDrivers says so
	}
	for i, name := range s.Modes {
		m, err := cat.Mode(name)
		if err != nil {
			continue // CheckModes says so
		}
		if err := d.ChainMode(m); err != nil {
			return fmt.Errorf("modes[%d]: %w", i, err)
		}
	}
	return nil
}
