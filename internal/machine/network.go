package machine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/workload/descriptors"
	"github.com/cnperf/cnperf/internal/workload/stream"
)

// Bounds of the network test's time per repetition.
const (
	DefaultNetworkTime = 3 * time.Second
	MaxNetworkTime     = time.Minute
	networkWarmUp      = time.Second
)

// networkTopology is two hosts of a bare lab: the path every mode's
// costs are measured against.
var networkTopology = lab.Topology{Hosts: []lab.HostSpec{
	{Name: "client", Endpoints: []lab.EndpointSpec{{Role: "client"}}},
	{Name: "server", Endpoints: []lab.EndpointSpec{{Role: "server"}}},
}}

// Network builds a bare lab (two namespaces on the lab's switch), runs one
// TCP stream test of d between them (cnperf's stream workload, in this
// process) and removes the lab, with cat's default driver (netns). It
// returns the receiver's bits per second. d is as Options.Validate
// bounds --net-time.
func Network(ctx context.Context, cat lab.Catalog, exe string, d time.Duration) (float64, error) {
	mode, err := cat.Mode("bare")
	if err != nil {
		return 0, err
	}
	self, err := owner.Self()
	if err != nil {
		return 0, fmt.Errorf("who owns the lab: %w", err)
	}
	name := record.NewID("mprof")
	l, err := cat.Up(lab.Config{Name: name, Mode: mode, Exe: exe, Topology: networkTopology,
		Port: descriptors.StreamPort, Publish: []lab.Port{{Number: descriptors.StreamPort, Protocol: "udp"}}, Owner: self})
	if err != nil {
		return 0, fmt.Errorf("network lab: %w", err)
	}
	bps, err := streamOnce(ctx, l, d)
	if derr := cat.Down(name); derr != nil {
		err = errors.Join(err, fmt.Errorf("remove lab %s: %w (run `cnperf clean`)", name, derr))
	}
	return bps, err
}

// streamOnce serves one stream test in the lab's server namespace and runs
// it from the client's.
func streamOnce(ctx context.Context, l *lab.Lab, d time.Duration) (float64, error) {
	srvEP, err := l.Endpoint("server")
	if err != nil {
		return 0, err
	}
	cliEP, err := l.Endpoint("client")
	if err != nil {
		return 0, err
	}
	var srv *stream.Server
	// A socket made on a thread in a namespace stays in it.
	if err := namespace.Do(srvEP.NS, func() error {
		var err error
		srv, err = stream.Listen(srvEP.Listen, 1, nil)
		return err
	}); err != nil {
		return 0, fmt.Errorf("stream server: %w", err)
	}
	sctx, stop := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() { _ = srv.Serve(sctx); close(served) }()
	defer func() { stop(); <-served }()
	res, err := stream.Run(ctx, stream.Config{Addr: srvEP.Internal, Duration: d, Omit: networkWarmUp, Dial: namespace.Dialer(cliEP.NS)}, nil)
	if err != nil {
		return 0, fmt.Errorf("stream test: %w", err)
	}
	if !(res.ReceiverBitsPerSecond > 0) {
		return 0, errNoMeasure
	}
	return res.ReceiverBitsPerSecond, nil
}
