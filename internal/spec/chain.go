package spec

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// Chain lays a socket lab's hosts in a line (Zismer's (2016) hop chain): hosts
// h1..hN, each reaching only its neighbours, one container on each. Every
// test runs from h1's container to each other host's (a case per target,
// swept as "hops"), and rr tests also over each segment alone (h_i to
// h_i+1, swept as "segment"), so the report can set the latency to host k
// beside the sum of the segments' on the way.
//
// It is a field of the spec, not a condition: it fixes the topology and so
// the cases, which every lab of a run shares, where conditions vary per
// lab (variants).
type Chain struct {
	Hosts int `yaml:"hosts" json:"hosts"`
}

// A chain's bounds: a line needs two hosts; each segment takes a /24 of
// the address plan, and the cases grow with the hosts.
const (
	MinChainHosts = 2
	MaxChainHosts = 16
)

// The parameters chain cases sweep.
const (
	HopsParam    = "hops"
	SegmentParam = "segment"
)

// ChainCases expands the tests' cases over a chain of hosts: each case
// once per target host (hops=1..hosts-1), then each case of a round-trip workload (rr) once per
// segment past the first (segment=2..hosts-1; segment 1 is hops=1, the
// same two containers).
func ChainCases(cases []workload.Case, hosts int) []workload.Case {
	var out []workload.Case
	for _, c := range cases {
		for k := 1; k < hosts; k++ {
			out = append(out, chainCase(c, HopsParam, k))
		}
		if registry.Has(c.Test.Workload, workload.RoundTrip) {
			for i := 2; i < hosts; i++ {
				out = append(out, chainCase(c, SegmentParam, i))
			}
		}
	}
	return out
}

// casesPer is how many cases a chain makes of each case of a workload
// (1 without a chain): one per target, and for a round-trip workload (rr)
// one per segment past the first. Hosts are clamped to the bounds, which checkChain reports.
func (c *Chain) casesPer(name string) int64 {
	if c == nil {
		return 1
	}
	h := int64(min(max(c.Hosts, MinChainHosts), MaxChainHosts))
	if registry.Has(name, workload.RoundTrip) {
		return 2*h - 3
	}
	return h - 1
}

func chainCase(c workload.Case, param string, v int) workload.Case {
	c.Param, c.Value = param, strconv.Itoa(v)
	c.Label += " " + param + "=" + c.Value
	return c
}

// checkChain bounds a chain and refuses what it cannot run: ping-pong, a
// placement, fan-out, sweeps (a chain sweeps the hops). Which drivers
// build chains is theirs to say (lab.Capabilities.Chains and ChainMode, asked by the runner).
// cases are the tests' own, before the chain expands them.
func (s Spec) checkChain(cases []workload.Case) error {
	c := s.Chain
	if c == nil {
		return nil
	}
	switch {
	case c.Hosts < MinChainHosts || c.Hosts > MaxChainHosts:
		return fmt.Errorf("chain.hosts %d: want %d to %d hosts in a line", c.Hosts, MinChainHosts, MaxChainHosts)
	case !s.Socket():
		return errors.New("chain: needs socket tests (tests:); ping-pong's hosts are fixed (siege, ping, pong)")
	case s.RunsPingPong():
		return errors.New("chain: runs socket tests only; ping-pong's hosts are fixed (siege, ping, pong): run it in a spec of its own")
	case s.Placement != nil:
		return errors.New("chain: with placement: a chain puts one container on each host")
	}
	for _, k := range cases {
		field := fmt.Sprintf("tests[%d]", k.Index)
		switch {
		case k.Param != "":
			return fmt.Errorf("%s.sweep: a chain sweeps the hops; sweep nothing else with chain", field)
		case k.Test.FansOut(1) || k.Test.ServerCount(1) > 1:
			return fmt.Errorf("%s: clients, servers, pairs or processes: a chain runs one client to one server at a time", field)
		}
	}
	if n := len(ChainCases(cases, c.Hosts)); n > workload.MaxCases {
		return fmt.Errorf("chain.hosts %d: %d cases over the chain, more than %d", c.Hosts, n, workload.MaxCases)
	}
	return nil
}
