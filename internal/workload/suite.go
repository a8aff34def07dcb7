// Package suite says what a spec's socket tests mean: each test names a
// workload (stream, rr, jitter, datagram) and its parameters, optionally
// sweeps one of them, and becomes cases. A case is the command lines of a
// server and a client, the same `cnperf serve ...` and `cnperf stream ...`
// people run by hand, so a test in a spec measures exactly what the CLI does.
package workload

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/workload/rr"
	"github.com/cnperf/cnperf/internal/workload/stream"
	"github.com/cnperf/cnperf/internal/workload/udp"
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

// Bounds of a spec's tests, checked field by field before any sweep is
// expanded, so that no value can make validation itself slow or large.
const (
	MaxCases       = 1000                  // cases of all tests (a sweep's values count one each)
	MaxRepetitions = 1000                  // tests[].repetitions
	MaxDuration    = 24 * time.Hour        // tests[].duration, omit
	MinInterval    = 10 * time.Millisecond // tests[].interval (0: 1s)
	MaxIntervals   = 1_000_000             // (omit + duration) / interval
	MaxTimeout     = time.Hour             // tests[].timeout
	MaxRate        = 1_000_000_000_000     // bits/s (1T): tests[].rate, a swept rate
	MaxCount       = 1_000_000_000         // tests[].count, packets
	MaxSweepValue  = MaxRate               // tests[].sweep.from, to, step
	MaxNameBytes   = 64                    // tests[].name
	minStreamUDP   = 24                    // stream's UDP header: sequence, time, test id, stream
)

// FieldError is a bad value of one field of a test, named as the spec
// writes it below tests[i] ("length", "sweep.values[2]").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

func bad(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

// sweepable lists the parameters a sweep may vary, per workload.
var sweepable = map[string][]string{
	"stream":   {"length", "parallel", "rate"},
	"rr":       {"request", "response", "parallel"},
	"jitter":   {"length", "rate"},
	"datagram": {"length", "rate"},
}

// protocols lists each workload's protocols ("" is the first).
var protocols = map[string][]string{
	"stream": {"tcp", "udp"},
	"rr":     {rr.ModeTCP, rr.ModeUDP, rr.ModeCRR},
}

// Counts checks every test's own fields against their bounds without
// expanding anything, and returns how many cases each test makes (its
// sweep's values, or 1): a plan's size is known before it is built.
// Errors name the field as tests[i].FIELD.
func Counts(tests []Test) ([]int, error) {
	if len(tests) > MaxCases {
		return nil, fmt.Errorf("tests: %d tests, more than %d", len(tests), MaxCases)
	}
	counts := make([]int, len(tests))
	for i, t := range tests {
		n, err := t.check()
		if err != nil {
			return nil, fmt.Errorf("tests[%d].%w", i, err)
		}
		counts[i] = n
	}
	return counts, nil
}

// Expand validates the tests and returns their cases in order; errors name
// the field as tests[i].FIELD.
func Expand(tests []Test) ([]Case, error) {
	counts, err := Counts(tests)
	if err != nil {
		return nil, err
	}
	total := 0
	for _, n := range counts { // each <= MaxCases, at most MaxCases of them
		total += n
	}
	if total > MaxCases {
		return nil, fmt.Errorf("tests: %d cases (each test once per sweep value), more than %d", total, MaxCases)
	}
	cases := make([]Case, 0, total)
	for i, t := range tests {
		cs, err := t.cases(i)
		if err != nil {
			return nil, fmt.Errorf("tests[%d].%w", i, err)
		}
		cases = append(cases, cs...)
	}
	return cases, nil
}

// check validates what a test says about itself (workload, repetitions,
// parameters it may have, its sweep's shape and values' syntax) and returns
// its number of cases, computed, not expanded.
func (t Test) check() (int, error) {
	if !slices.Contains(Workloads, t.Workload) {
		return 0, bad("workload", "%q is not a workload (known: %s)", t.Workload, strings.Join(Workloads, ", "))
	}
	if len(t.Name) > MaxNameBytes {
		return 0, bad("name", "%d bytes, more than %d", len(t.Name), MaxNameBytes)
	}
	if t.Repetitions < 0 || t.Repetitions > MaxRepetitions {
		return 0, bad("repetitions", "%d is outside 0..%d (0: once)", t.Repetitions, MaxRepetitions)
	}
	if err := t.onlyKnown(); err != nil {
		return 0, err
	}
	if t.FitMTU && (t.Request != 0 || t.Response != 0 || (t.Sweep != nil && (t.Sweep.Param == "request" || t.Sweep.Param == "response"))) {
		return 0, bad("fit_mtu", "sets request and response from the path MTU; leave them out")
	}
	if t.Sweep == nil {
		return 1, nil
	}
	sw := *t.Sweep
	if !slices.Contains(sweepable[t.Workload], sw.Param) {
		return 0, bad("sweep.param", "%q: %s sweeps %s", sw.Param, t.Workload, strings.Join(sweepable[t.Workload], ", "))
	}
	if len(sw.Values) > 0 {
		if sw.From != 0 || sw.To != 0 || sw.Step != 0 {
			return 0, bad("sweep", "give values or from/to/step, not both")
		}
		if len(sw.Values) > MaxCases {
			return 0, bad("sweep.values", "%d values, more than %d", len(sw.Values), MaxCases)
		}
		for j, v := range sw.Values {
			field := fmt.Sprintf("sweep.values[%d]", j)
			if sw.Param == "rate" {
				if _, err := parseRate(v); err != nil {
					return 0, bad(field, "%q: %v", v, err)
				}
			} else if !wholeRE.MatchString(v) {
				return 0, bad(field, "%q: want a whole number", v)
			}
			if slices.Contains(sw.Values[:j], v) {
				return 0, bad(field, "%q is listed twice", v)
			}
		}
		return len(sw.Values), nil
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"from", sw.From}, {"to", sw.To}} {
		if f.v < 0 || f.v > MaxSweepValue {
			return 0, bad("sweep."+f.name, "%d is outside 0..%d", f.v, int64(MaxSweepValue))
		}
	}
	switch {
	case sw.Step <= 0 || sw.Step > MaxSweepValue:
		return 0, bad("sweep.step", "%d is outside 1..%d", sw.Step, int64(MaxSweepValue))
	case sw.To < sw.From:
		return 0, bad("sweep.to", "%d is below sweep.from %d", sw.To, sw.From)
	}
	// All three are in [0, MaxSweepValue]: no overflow.
	n := (sw.To-sw.From)/sw.Step + 1
	if n > MaxCases {
		return 0, bad("sweep.step", "from %d to %d by %d is %d values, more than %d", sw.From, sw.To, sw.Step, n, MaxCases)
	}
	return int(n), nil
}

// wholeRE is a swept integer: digits only, short enough for an int.
var wholeRE = regexp.MustCompile(`^(0|[1-9][0-9]{0,11})$`)

// values lists a checked sweep's values: as given, or from..to by step.
func (sw Sweep) values() []string {
	if len(sw.Values) > 0 {
		return sw.Values
	}
	var out []string
	for v := sw.From; v <= sw.To; v += sw.Step { // bounded by check: no overflow
		out = append(out, strconv.FormatInt(v, 10))
	}
	return out
}

// cases expands a checked test.
func (t Test) cases(i int) ([]Case, error) {
	base := t.Label()
	if t.Sweep == nil {
		c := Case{Test: t, Index: i, Label: base}
		return []Case{c}, c.Validate()
	}
	sw := *t.Sweep
	values := sw.values()
	cs := make([]Case, len(values))
	for j, v := range values {
		ct, err := t.with(sw.Param, v)
		if err != nil {
			return nil, bad(fmt.Sprintf("sweep.values[%d]", j), "%q: %v", v, err)
		}
		ct.Sweep = nil
		cs[j] = Case{Test: ct, Index: i, Label: base + " " + sw.Param + "=" + v, Param: sw.Param, Value: v}
	}
	// The ends first: a range that leaves a bound names the end that does.
	order := make([]int, 0, len(values))
	order = append(order, 0)
	if len(values) > 1 {
		order = append(order, len(values)-1)
	}
	for j := 1; j < len(values)-1; j++ {
		order = append(order, j)
	}
	for _, j := range order {
		if err := cs[j].Validate(); err != nil {
			return nil, sweepError(err, sw, j, len(values))
		}
	}
	return cs, nil
}

// sweepError names the sweep's field for an error about the swept
// parameter's value j of n, and says which value an error about another
// field came with.
func sweepError(err error, sw Sweep, j, n int) error {
	var fe *FieldError
	if !errors.As(err, &fe) {
		return err
	}
	v := sw.values()[j]
	if fe.Field != sw.Param {
		return bad(fe.Field, "%s (with sweep %s=%s)", fe.Msg, sw.Param, v)
	}
	switch {
	case len(sw.Values) > 0:
		return bad(fmt.Sprintf("sweep.values[%d]", j), "%s", fe.Msg)
	case j == 0:
		return bad("sweep.from", "%s", fe.Msg)
	case j == n-1:
		return bad("sweep.to", "%s", fe.Msg)
	default:
		return bad("sweep", "%s=%s: %s", sw.Param, v, fe.Msg)
	}
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
		return t, errors.New("want a whole number")
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
			return bad(k, "not a parameter of %s (it has %s)", t.Workload, strings.Join(allowed, ", "))
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

// Validate checks the case's fields against their bounds and the
// workload's rules; an error is a FieldError naming the spec's field.
func (c Case) Validate() error {
	t := c.Test
	if !slices.Contains(Workloads, t.Workload) {
		return bad("workload", "%q is not a workload (known: %s)", t.Workload, strings.Join(Workloads, ", "))
	}
	if ps := protocols[t.Workload]; t.Protocol != "" && !slices.Contains(ps, t.Protocol) {
		return bad("protocol", "%q is not a protocol of %s (%s)", t.Protocol, t.Workload, strings.Join(ps, ", "))
	}
	for _, f := range []struct {
		name string
		v    time.Duration
	}{{"duration", t.Duration}, {"omit", t.Omit}} {
		if f.v < 0 || f.v > MaxDuration {
			return bad(f.name, "%s is outside 0s..%s", f.v, MaxDuration)
		}
	}
	if t.Interval != 0 && (t.Interval < MinInterval || t.Interval > MaxDuration) {
		return bad("interval", "%s is outside %s..%s (0: 1s)", t.Interval, MinInterval, MaxDuration)
	}
	if n := (t.Omit + t.duration()) / t.interval(); n > MaxIntervals {
		return bad("interval", "%s cuts omit + duration (%s) into %d intervals, more than %d", t.interval(), t.Omit+t.duration(), n, MaxIntervals)
	}
	if t.Timeout < 0 || t.Timeout > MaxTimeout {
		return bad("timeout", "%s is outside 0s..%s", t.Timeout, MaxTimeout)
	}
	if t.Count < 0 || t.Count > MaxCount {
		return bad("count", "%d is outside 0..%d", t.Count, MaxCount)
	}
	rate, err := c.rate()
	if err != nil {
		return err
	}
	overUDP := t.Protocol == "udp"
	switch t.Workload {
	case "stream":
		if err := between("parallel", t.Parallel, 1, stream.MaxParallel, true); err != nil {
			return err
		}
		lo, hi, what := 1, stream.MaxTCPLength, "TCP write"
		if overUDP {
			lo, hi, what = minStreamUDP, stream.MaxUDPLength, "UDP datagram"
		}
		if err := size("length", t.Length, lo, hi, what); err != nil {
			return err
		}
	case "rr":
		if err := between("parallel", t.Parallel, 1, rr.MaxParallel, true); err != nil {
			return err
		}
		hi, what := rr.MaxTCPSize, "rr message over TCP"
		if overUDP {
			hi, what = rr.MaxUDPSize, "UDP datagram"
		}
		if err := size("request", t.Request, 1, hi, what); err != nil {
			return err
		}
		if err := size("response", t.Response, 1, hi, what); err != nil {
			return err
		}
		req, resp := max(t.Request, 1), max(t.Response, 1)
		if overUDP && req < 4 && resp != req {
			return bad("response", "%d: a UDP request under 4 bytes cannot carry the response size; use request >= 4 or response %d", resp, req)
		}
	case "jitter":
		if t.Rate != "" && rate == 0 {
			return bad("rate", "%q: jitter needs a rate > 0", t.Rate)
		}
		if err := size("length", t.Length, udp.HeaderSize, udp.MaxSize, "UDP datagram"); err != nil {
			return err
		}
	case "datagram":
		if err := size("length", t.Length, udp.HeaderSize, udp.MaxSize, "UDP datagram"); err != nil {
			return err
		}
	}
	return c.workloadValidate(rate)
}

// between checks an int field against lo..hi; zero is the default when
// zeroOK.
func between(field string, v, lo, hi int, zeroOK bool) error {
	if (v == 0 && zeroOK) || (v >= lo && v <= hi) {
		return nil
	}
	return bad(field, "%d is outside %d..%d", v, lo, hi)
}

// size checks a size in bytes (0: the default) against lo..hi.
func size(field string, v, lo, hi int, what string) error {
	switch {
	case v < 0:
		return bad(field, "%d is negative", v)
	case v == 0:
		return nil
	case v > hi:
		return bad(field, "%d is above the largest %s (%d)", v, what, hi)
	case v < lo:
		return bad(field, "%d is below %d, the smallest %s a test sends", v, lo, what)
	}
	return nil
}

// workloadValidate checks the case with the workload's own rules too, so
// that a rule added there is never missed here; their errors name CLI
// flags, which are turned into the spec's fields.
func (c Case) workloadValidate(rate int64) error {
	t := c.Test
	const addr = "198.18.0.1"
	var err error
	switch t.Workload {
	case "stream":
		err = stream.Config{Addr: addr, Protocol: t.Protocol, Duration: t.duration(), Omit: t.Omit,
			Interval: t.interval(), Parallel: t.Parallel, Length: t.Length, Rate: rate}.Validate()
	case "rr":
		err = rr.Config{Addr: addr, Mode: t.Protocol, Duration: t.duration(), Omit: t.Omit, Interval: t.interval(),
			RequestSize: t.Request, ResponseSize: t.Response, Parallel: t.Parallel, Timeout: t.Timeout}.Validate()
	case "jitter":
		size, r := t.Length, rate
		if size == 0 {
			size = udp.DefaultJitterSize
		}
		if r == 0 {
			r = udp.DefaultJitterRate
		}
		err = udp.JitterConfig{Addr: addr, Rate: r, Size: size, Duration: t.duration(), Interval: t.interval()}.Validate()
	case "datagram":
		err = udp.DatagramConfig{Addr: addr, Size: t.Length, Rate: rate, Count: t.Count, Duration: t.duration(),
			Interval: t.interval()}.Validate()
	}
	if err == nil {
		return nil
	}
	return specFields(t.Workload, err.Error())
}

// flagFields maps each workload's client flags to the spec's fields.
var flagFields = map[string]map[string]string{
	"stream": {"--protocol": "protocol", "--udp": "protocol", "--time": "duration", "--omit": "omit", "--interval": "interval",
		"--parallel": "parallel", "--bitrate": "rate", "--length": "length"},
	"rr": {"--mode": "protocol", "--time": "duration", "--omit": "omit", "--interval": "interval", "--parallel": "parallel",
		"--request": "request", "--response": "response", "--timeout": "timeout"},
	"jitter": {"--time": "duration", "--interval": "interval", "--bitrate": "rate", "--length": "length"},
	"datagram": {"--time": "duration", "--interval": "interval", "--rate": "rate", "--size": "length",
		"--count": "count"},
}

var flagRE = regexp.MustCompile(`--[a-z][a-z-]*`)

// specFields turns a workload's error ("--size 70000: must be ...") into
// one about the spec's field ("length: 70000: must be ..."), every flag in
// it renamed.
func specFields(workload, msg string) error {
	names := flagFields[workload]
	rename := func(f string) string {
		if n, ok := names[f]; ok {
			return n
		}
		return strings.TrimPrefix(f, "--")
	}
	field := "workload" // a rule about no one flag: say whose it is
	if m := flagRE.FindStringIndex(msg); m != nil && m[0] == 0 && !strings.HasPrefix(msg[m[1]:], " or ") {
		field = rename(msg[:m[1]])
		msg = strings.TrimLeft(msg[m[1]:], " ")
	} else {
		msg = workload + ": " + msg
	}
	msg = flagRE.ReplaceAllStringFunc(msg, rename)
	return bad(field, "%s", msg)
}

// rate reads the test's rate: bits/s with k, M, G or T (powers of 1000),
// nothing else around it, at most MaxRate.
func (c Case) rate() (int64, error) {
	if c.Test.Rate == "" {
		return 0, nil
	}
	r, err := parseRate(c.Test.Rate)
	if err != nil {
		return 0, bad("rate", "%q: %v", c.Test.Rate, err)
	}
	return r, nil
}

var rateRE = regexp.MustCompile(`^([0-9]{1,15}(?:\.[0-9]{1,9})?)([kKmMgGtT]?)$`)

// parseRate reads a rate as the workloads' CLIs do (udp.ParseRate),
// but strictly: no spaces, signs, exponents or other text, at most MaxRate.
func parseRate(s string) (int64, error) {
	m := rateRE.FindStringSubmatch(s)
	if m == nil {
		return 0, errors.New("want bits per second like 10M, 1.5G or 0 (k, M, G, T: powers of 1000)")
	}
	v, err := strconv.ParseFloat(m[1], 64)
	if err != nil {
		return 0, errors.New("want bits per second like 10M, 1.5G or 0")
	}
	mult := map[string]float64{"": 1, "k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12}[strings.ToLower(m[2])]
	if r := v * mult; r > MaxRate {
		return 0, fmt.Errorf("above %dT (%d bits/s)", int64(MaxRate/1e12), int64(MaxRate))
	} else {
		return int64(math.Round(r)), nil
	}
}

// FitTo returns the case with rr's request and response set to the packet
// size of a path of the given MTU, when the test asks for it (FitMTU).
func (c Case) FitTo(mtu int) Case {
	if c.Test.FitMTU {
		size := udp.DefaultPacketSize(mtu)
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
		return Server{Role: "udp-server", Port: udp.DefaultPort, Protocols: []string{"tcp", "udp"}, // tcp: control
			Args: []string{"serve", "udp", "--listen", fmt.Sprintf(":%d", udp.DefaultPort)}}
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
	// set replaces the value of a flag already in a.
	set := func(flag, v string) {
		if i := slices.Index(a, flag); i >= 0 && i+1 < len(a) {
			a[i+1] = v
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
			set("--time", "0s") // until the count
		}
	}
	return a
}
