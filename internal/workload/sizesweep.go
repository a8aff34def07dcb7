package workload

import "time"

// SizeSweep is a workload that sweeps message sizes through a chain of
// servers, as Kratzke's HTTP ping-pong does (siege → ping → pong, one
// request per size and repetition): its servers run on endpoints of their
// own, its client on a host outside them sends a chunk of the size plan per
// cell, and prints envelope lines as every client does, one interval line
// per request; each is stored as one record.Sample (the sample's own
// fields), not whole. Its settings are a spec's test of it, or the
// pingpong section (SweepSettings). The registry lists size sweeps by
// name, as it lists socket workloads.
type SizeSweep interface {
	Workload
	// Params declares its parameters once (Param): the spec's fields,
	// their bounds and defaults, and the flags of the programs that take
	// them.
	Params() []Param
	// Client is the role of the host the client runs on.
	Client() string
	// Servers are its servers in the order they start, given where each
	// role's endpoint listens and is reached from the other endpoints
	// (a server's Args may name an earlier one's address: ping is given
	// pong's). Args start after the binary, as Server.Args do.
	Servers(set SweepSettings, at func(role string) SweepAddr) []Server
	// Target is the server the client sends to.
	Target() string
	// ClientArgs is the client's command line after the binary for one
	// chunk of sizes against target (HOST:PORT), every sample printed as
	// a line.
	ClientArgs(set SweepSettings, target string, sizes []int) []string
	// Probe is the size of the one request whose whole answer says its
	// servers are ready: the runner sends it until one is answered.
	Probe() int
}

// SweepSettings are a size sweep's settings, from the spec's section.
type SweepSettings struct {
	MaxBody     int           // the largest body the last server serves
	Retries     int           // a relaying server's retries towards the next
	Timeout     time.Duration // one attempt's, the relay's and the client's
	Repetitions int           // requests per size
	Concurrency int           // the client's requests in flight
}

// SweepAddr is where a server's endpoint listens, and where the other
// endpoints reach it.
type SweepAddr struct{ Listen, Internal string }
