// Package suite says what a spec's socket tests mean: each test names a
// workload (stream, rr, jitter, datagram) and its parameters, optionally
// sweeps one of them, and becomes cases. A case is the command lines of a
// server and a client, the same `cnperf serve ...` and `cnperf stream ...`
// people run by hand, so a test in a spec measures exactly what the CLI does.
package suite

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/rr"
	"github.com/cnperf/cnperf/internal/stream"
	"github.com/cnperf/cnperf/internal/udptest"
)

// Workloads a test may name.
var Workloads = []string{"stream", "rr", "jitter", "datagram"}

// Test is one entry of a spec's tests. Zero fields take the workload's
// defaults (those of its CLI).
type Test struct {
	Name     string        `yaml:"name,omitempty" json:"name,omitempty"`
	Workload string        `yaml:"workload" json:"workload"`
	Protocol string        `yaml:"protocol,omitempty" json:"protocol,omitempty"` // stream: tcp, udp; rr: tcp, udp, crr
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"` // 0: 10s (datagram with count: until count)
	Omit     time.Duration `yaml:"omit,omitempty" json:"omit,omitempty"`         // stream, rr: warm-up left out
	Interval time.Duration `yaml:"interval,omitempty" json:"interval,omitempty"` // reporting interval; 0: 1s
	Parallel int           `yaml:"parallel,omitempty" json:"parallel,omitempty"` // stream, rr
	Length   int           `yaml:"length,omitempty" json:"length,omitempty"`     // stream write or datagram; jitter, datagram packet (0: datagram follows the MTU)
	Rate     string        `yaml:"rate,omitempty" json:"rate,omitempty"`         // bits/s with k, M, G; stream, jitter, datagram
	Request  int           `yaml:"request,omitempty" json:"request,omitempty"`   // rr
	Response int           `yaml:"response,omitempty" json:"response,omitempty"` // rr
	Count    int64         `yaml:"count,omitempty" json:"count,omitempty"`       // datagram: packets
	Timeout  time.Duration `yaml:"timeout,omitempty" json:"timeout,omitempty"`   // rr
	// FitMTU (rr) sets request and response to the path MTU − 32 in each
	// mode (1468 bytes on 1500, 1418 on the 1450-byte overlay), as seed 000
	// chose by hand so that no packet fragments.
	FitMTU      bool   `yaml:"fit_mtu,omitempty" json:"fit_mtu,omitempty"`
	Repetitions int    `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
	Sweep       *Sweep `yaml:"sweep,omitempty" json:"sweep,omitempty"`
}

// Sweep varies one parameter: listed values, or from..to by step.
type Sweep struct {
	Param  string   `yaml:"param" json:"param"`
	Values []string `yaml:"values,omitempty" json:"values,omitempty"`
	From   int64    `yaml:"from,omitempty" json:"from,omitempty"`
	To     int64    `yaml:"to,omitempty" json:"to,omitempty"`
	Step   int64    `yaml:"step,omitempty" json:"step,omitempty"`
}

// Case is a test with its swept parameter set: one thing to measure.
type Case struct {
	Test  Test   `json:"test"`
	Index int    `json:"index"` // of the test in the spec
	Label string `json:"label"` // e.g. "stream udp length=1400"
	Param string `json:"param,omitempty"`
	Value string `json:"value,omitempty"`
}

// MaxCases bounds a sweep, so a typo in step cannot plan a million cells.
const MaxCases = 1000

// sweepable lists the parameters a sweep may vary, per workload.
var sweepable = map[string][]string{
	"stream":   {"length", "parallel", "rate"},
	"rr":       {"request", "response", "parallel"},
	"jitter":   {"length", "rate"},
	"datagram": {"length", "rate"},
}

// Expand validates the tests and returns their cases in order; errors name
// the test as tests[i].
func Expand(tests []Test) ([]Case, error) {
	var cases []Case
	for i, t := range tests {
		cs, err := t.cases(i)
		if err != nil {
			return nil, fmt.Errorf("tests[%d]: %w", i, err)
		}
		cases = append(cases, cs...)
	}
	if len(cases) > MaxCases {
		return nil, fmt.Errorf("tests: %d cases, more than %d", len(cases), MaxCases)
	}
	return cases, nil
}

func (t Test) cases(i int) ([]Case, error) {
	if !slices.Contains(Workloads, t.Workload) {
		return nil, fmt.Errorf("workload %q: unknown (known: %s)", t.Workload, strings.Join(Workloads, ", "))
	}
	if t.Repetitions < 0 {
		return nil, fmt.Errorf("repetitions %d: must be >= 0 (0: the spec's)", t.Repetitions)
	}
	if err := t.onlyKnown(); err != nil {
		return nil, err
	}
	if t.FitMTU && (t.Request != 0 || t.Response != 0 || (t.Sweep != nil && (t.Sweep.Param == "request" || t.Sweep.Param == "response"))) {
		return nil, errors.New("fit_mtu: sets request and response from the path MTU; leave them out")
	}
	base := t.Label()
	if t.Sweep == nil {
		c := Case{Test: t, Index: i, Label: base}
		return []Case{c}, c.Validate()
	}
	sw := *t.Sweep
	if !slices.Contains(sweepable[t.Workload], sw.Param) {
		return nil, fmt.Errorf("sweep.param %q: %s sweeps %s", sw.Param, t.Workload, strings.Join(sweepable[t.Workload], ", "))
	}
	values := sw.Values
	if len(values) > 0 && (sw.From != 0 || sw.To != 0 || sw.Step != 0) {
		return nil, errors.New("sweep: give values or from/to/step, not both")
	}
	if len(values) == 0 {
		if sw.Step <= 0 || sw.To < sw.From {
			return nil, fmt.Errorf("sweep: from %d to %d step %d: want step > 0 and to >= from", sw.From, sw.To, sw.Step)
		}
		if (sw.To-sw.From)/sw.Step >= MaxCases {
			return nil, fmt.Errorf("sweep: from %d to %d step %d is more than %d values", sw.From, sw.To, sw.Step, MaxCases)
		}
		for v := sw.From; v <= sw.To; v += sw.Step {
			values = append(values, strconv.FormatInt(v, 10))
		}
	}
	var cs []Case
	for _, v := range values {
		ct, err := t.with(sw.Param, v)
		if err != nil {
			return nil, fmt.Errorf("sweep.values %q: %w", v, err)
		}
		ct.Sweep = nil
		c := Case{Test: ct, Index: i, Label: base + " " + sw.Param + "=" + v, Param: sw.Param, Value: v}
		if err := c.Validate(); err != nil {
			return nil, fmt.Errorf("sweep %s=%s: %w", sw.Param, v, err)
		}
		cs = append(cs, c)
	}
	return cs, nil
}

// Label names the test in tables: its name, else workload and protocol.
func (t Test) Label() string {
	if t.Name != "" {
		return t.Name
	}
	if t.Protocol != "" {
		return t.Workload + " " + t.Protocol
	}
	return t.Workload
}

// with returns t with one parameter set from text.
func (t Test) with(param, v string) (Test, error) {
	if param == "rate" {
		t.Rate = v
		return t, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return t, errors.New("want an integer")
	}
	switch param {
	case "length":
		t.Length = n
	case "parallel":
		t.Parallel = n
	case "request":
		t.Request = n
	case "response":
		t.Response = n
	}
	return t, nil
}

// onlyKnown refuses a parameter the workload does not have, so that a
// setting never silently does nothing.
func (t Test) onlyKnown() error {
	set := map[string]bool{
		"protocol": t.Protocol != "", "omit": t.Omit != 0, "parallel": t.Parallel != 0, "length": t.Length != 0,
		"rate": t.Rate != "", "request": t.Request != 0, "response": t.Response != 0, "count": t.Count != 0,
		"timeout": t.Timeout != 0, "fit_mtu": t.FitMTU,
	}
	allowed := map[string][]string{
		"stream":   {"protocol", "omit", "parallel", "length", "rate"},
		"rr":       {"protocol", "omit", "parallel", "request", "response", "timeout", "fit_mtu"},
		"jitter":   {"length", "rate"},
		"datagram": {"length", "rate", "count"},
	}[t.Workload]
	for _, k := range []string{"protocol", "omit", "parallel", "length", "rate", "request", "response", "count", "timeout", "fit_mtu"} {
		if set[k] && !slices.Contains(allowed, k) {
			return fmt.Errorf("%s: not a parameter of %s (it has %s)", k, t.Workload, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// duration is the time to measure: 10s unless set (a datagram test with a
// count runs until the count).
func (t Test) duration() time.Duration {
	if t.Duration == 0 && !(t.Workload == "datagram" && t.Count > 0) {
		return 10 * time.Second
	}
	return t.Duration
}

// Planned is how long the client should run: warm-up and duration; 0 when
// a datagram test runs until its count.
func (t Test) Planned() time.Duration {
	if d := t.duration(); d > 0 {
		return t.Omit + d
	}
	return 0
}

func (t Test) interval() time.Duration {
	if t.Interval == 0 {
		return time.Second
	}
	return t.Interval
}

// Validate checks the case with the workload's own rules.
func (c Case) Validate() error {
	t := c.Test
	if t.Duration < 0 {
		return fmt.Errorf("duration %s: must be >= 0", t.Duration)
	}
	rate, err := c.rate()
	if err != nil {
		return err
	}
	const addr = "198.18.0.1"
	switch t.Workload {
	case "stream":
		cfg := stream.Config{Addr: addr, Protocol: t.Protocol, Duration: t.duration(), Omit: t.Omit,
			Interval: t.interval(), Parallel: t.Parallel, Length: t.Length, Rate: rate}
		err = cfg.Validate()
	case "rr":
		cfg := rr.Config{Addr: addr, Mode: t.Protocol, Duration: t.duration(), Omit: t.Omit, Interval: t.interval(),
			RequestSize: t.Request, ResponseSize: t.Response, Parallel: t.Parallel, Timeout: t.Timeout}
		err = cfg.Validate()
	case "jitter":
		size := t.Length
		if size == 0 {
			size = udptest.DefaultJitterSize
		}
		if rate == 0 {
			rate = udptest.DefaultJitterRate
		}
		err = udptest.JitterConfig{Addr: addr, Rate: rate, Size: size, Duration: t.duration(), Interval: t.interval()}.Validate()
	case "datagram":
		err = udptest.DatagramConfig{Addr: addr, Size: t.Length, Rate: rate, Count: t.Count, Duration: t.duration(),
			Interval: t.interval()}.Validate()
	}
	if err != nil {
		// The workloads name their CLI flags; say which spec field it is.
		return fmt.Errorf("%s: %w", t.Workload, err)
	}
	return nil
}

func (c Case) rate() (int64, error) {
	if c.Test.Rate == "" {
		return 0, nil
	}
	r, err := udptest.ParseRate(c.Test.Rate)
	if err != nil {
		return 0, fmt.Errorf("rate %q: %w", c.Test.Rate, err)
	}
	return r, nil
}

// FitTo returns the case with rr's request and response set to the packet
// size of a path of the given MTU, when the test asks for it (FitMTU).
func (c Case) FitTo(mtu int) Case {
	if c.Test.FitMTU {
		size := udptest.DefaultPacketSize(mtu)
		c.Test.Request, c.Test.Response = size, size
	}
	return c
}

// Server is the server a workload needs: its port and protocols, and the
// `cnperf serve` arguments (after the binary).
type Server struct {
	Role      string   // also the process's cgroup name
	Port      int      // TCP and/or UDP
	Protocols []string // what to publish
	Args      []string
}

// ServerFor returns the server of a workload. jitter and datagram share one.
func ServerFor(workload string) Server {
	switch workload {
	case "stream":
		return Server{Role: "stream-server", Port: stream.DefaultPort, Protocols: []string{"tcp", "udp"},
			Args: []string{"serve", "stream", "--listen", fmt.Sprintf(":%d", stream.DefaultPort)}}
	case "rr":
		p, _ := strconv.Atoi(rr.DefaultPort)
		return Server{Role: "rr-server", Port: p, Protocols: []string{"tcp", "udp"},
			Args: []string{"serve", "rr", "--listen", ":" + rr.DefaultPort}}
	default:
		return Server{Role: "udp-server", Port: udptest.DefaultPort, Protocols: []string{"tcp", "udp"}, // tcp: control
			Args: []string{"serve", "udp", "--listen", fmt.Sprintf(":%d", udptest.DefaultPort)}}
	}
}

// ClientArgs returns the client's arguments (after the binary) against the
// server at host, printing JSON lines.
func (c Case) ClientArgs(host string) []string {
	t := c.Test
	srv := ServerFor(t.Workload)
	a := []string{t.Workload, "--server", fmt.Sprintf("%s:%d", host, srv.Port), "--json",
		"--time", t.duration().String(), "--interval", t.interval().String()}
	add := func(flag string, v any, set bool) {
		if set {
			a = append(a, flag, fmt.Sprint(v))
		}
	}
	switch t.Workload {
	case "stream":
		if t.Protocol == "udp" {
			a = append(a, "--udp")
		}
		add("--omit", t.Omit, t.Omit != 0)
		add("--parallel", t.Parallel, t.Parallel != 0)
		add("--length", t.Length, t.Length != 0)
		add("--bitrate", t.Rate, t.Rate != "")
	case "rr":
		add("--mode", t.Protocol, t.Protocol != "")
		add("--omit", t.Omit, t.Omit != 0)
		add("--parallel", t.Parallel, t.Parallel != 0)
		add("--request", t.Request, t.Request != 0)
		add("--response", t.Response, t.Response != 0)
		add("--timeout", t.Timeout, t.Timeout != 0)
	case "jitter":
		add("--length", t.Length, t.Length != 0)
		add("--bitrate", t.Rate, t.Rate != "")
	case "datagram":
		add("--size", t.Length, t.Length != 0)
		add("--rate", t.Rate, t.Rate != "")
		add("--count", t.Count, t.Count != 0)
		if t.Duration == 0 && t.Count > 0 {
			a[5] = "0s" // until the count
		}
	}
	return a
}
