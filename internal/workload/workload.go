// Package workload says what a workload is, so that the spec, the runner,
// the command line and analysis can loop over a list of them (the
// registry, in package registry) instead of naming each one.
//
// A socket workload (stream, rr, jitter, datagram, grid) has a Socket
// descriptor (package descriptors): its server, its parameters declared
// once (Param), its metrics and how its total record becomes their values.
// Its implementation (server, client, their commands) is apart, in the
// workload's own package, and only the command line links it (package
// commands): reading a run links no server, client or data grid.
// Ping-pong, whose three hosts (siege, ping, pong) do not fit the
// client/server shape, says only what every Workload says: its name and
// its metrics.
package workload

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Workload is what every workload says of itself.
type Workload interface {
	// Name is the workload's name in specs, records and `cnperf NAME`.
	Name() string
	// Metrics are its figures, in the order tables show them.
	Metrics() []Metric
	// Headline is the key of the metric a case is judged by.
	Headline() string
}

// Metric is one figure of a workload: its key in values, how tables name
// it, and which way is better.
type Metric struct {
	Key, Title, Unit string
	HigherIsBetter   bool
	Short            string // column head in the terminal summary
	// Additive figures of clients running at once add up (throughput,
	// transactions, counts); the others are averaged (latency, loss %).
	Additive bool
	// Count is a count of events that is often near zero on the reference
	// (retransmits, lost or reordered datagrams, failed operations): its
	// change is shown as the difference of the counts, since a percentage
	// of almost nothing says nothing (13 → 9,388 is not "+72,118 %").
	Count bool
}

// Socket is a workload of one client and one server: what a spec's test
// of it means, how it runs and how its records are read.
type Socket interface {
	Workload
	// Server is the server it needs. Workloads may share one: the runner
	// starts each Role once.
	Server() Server
	// Params declares its parameters, once, in the order errors list
	// them and its client gets them: the spec's fields besides name,
	// duration, interval, repetitions, sweep and fan-out (see Test),
	// their bounds, and the client's flags.
	Params() []Param
	// Capabilities are what its measure has that others ask for by what
	// it is (RoundTrip), not by the workload's name.
	Capabilities() []Capability
	// Validate checks the rules that tie a test's parameters together
	// (each one's own bounds are checked from its Param first). An error
	// is a *FieldError in the spec's words, or one naming the client's
	// flags (renamed with Flags).
	Validate(t Test) error
	// Total reads the payload of a total record (see Envelope; a run
	// written before the envelope stored the bare payload, which reads
	// the same).
	Total(payload json.RawMessage) (Total, error)
}

// ParamTitler is a Socket that names a parameter on a figure's axis its own
// way (stream's length over TCP is a write size, not a datagram's).
type ParamTitler interface {
	// ParamTitle is the axis title for param under protocol, "" for the
	// usual one.
	ParamTitle(param, protocol string) string
}

// Total is what analysis takes from a test's total record.
type Total struct {
	Protocol string             // tcp, udp, crr...: shown beside the case
	Values   map[string]float64 // by Metric.Key
	Moved    int64              // payload bytes moved, for CPU seconds per GB; 0: unknown
}

// Server is the server a workload needs: its port and protocols, and the
// `cnperf serve` arguments (after the binary).
type Server struct {
	Role      string   // also the process's cgroup name
	Port      int      // TCP and/or UDP
	Protocols []string // what to publish
	Args      []string
	// Concurrent is the flag that lets the server run N tests at once
	// (appended as FLAG N for fan-out tests); "" when it serves any number
	// of clients already.
	Concurrent string
	// More are further ports it listens on (a data grid's gossip), shifted
	// with Port: the runner publishes them too.
	More []Port
}

// Port is a port number and its protocol ("tcp" or "udp").
type Port struct {
	Number   int
	Protocol string
}

// Console is what a workload's commands get from cnperf's command line:
// where to print, and its servers' --listen rules.
type Console struct {
	Stdout, Stderr io.Writer
	// Listen checks a server's --listen value and completes its port; an
	// error is bad input.
	Listen func(s string, defaultPort int) (string, error)
	// DefaultListen is a server's default --listen for a port.
	DefaultListen func(port int) string
	ListenHelp    string // --listen's help text
}

// Failure marks a command's error as a failure of the measurement (exit
// 1) rather than bad input (exit 2, any other error); an interruption
// wraps context.Canceled (exit 130).
type Failure struct{ Err error }

func (f Failure) Error() string { return f.Err.Error() }
func (f Failure) Unwrap() error { return f.Err }

// Fail marks err as a Failure; nil stays nil.
func Fail(err error) error {
	if err == nil {
		return nil
	}
	return Failure{err}
}

// Set is a list of socket workloads: the registry's, or a test's.
type Set []Socket

// Lookup returns the workload of that name.
func (s Set) Lookup(name string) (Socket, bool) { return Find(s, name) }

// Find returns the workload of that name in a list (a Set, the size
// sweeps).
func Find[W Workload](list []W, name string) (w W, ok bool) {
	i := slices.IndexFunc(list, func(w W) bool { return w.Name() == name })
	if i < 0 {
		return w, false
	}
	return list[i], true
}

// Names lists the workloads' names in order.
func (s Set) Names() []string {
	out := make([]string, len(s))
	for i, w := range s {
		out[i] = w.Name()
	}
	return out
}

// lookup is Lookup with the spec's error for an unknown name.
func (s Set) lookup(name string) (Socket, error) {
	if w, ok := s.Lookup(name); ok {
		return w, nil
	}
	return nil, bad("workload", "%q is not a workload (known: %s)", name, strings.Join(s.Names(), ", "))
}

// Value reads a payload as T: a Total's helper.
func Value[T any](payload json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(payload, &v); err != nil {
		return v, fmt.Errorf("read %T: %w", v, err)
	}
	return v, nil
}
