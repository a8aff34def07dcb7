// A spec's socket tests: each test names a workload and its parameters,
// optionally sweeps one of them, and becomes cases. A case is the command
// lines of a server and a client, the same `cnperf serve ...` and `cnperf
// stream ...` people run by hand, so a test in a spec measures exactly
// what the CLI does.

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
)

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
	// mode (1468 bytes on 1500, 1418 on the 1450-byte overlay), as the 2017 Coherence thesis
	// chose by hand so that no packet fragments.
	FitMTU bool `yaml:"fit_mtu,omitempty" json:"fit_mtu,omitempty"`
	// BusyPoll (rr) spins the client's workers on non-blocking calls
	// instead of blocking: a CPU each, never idle (sockperf --nonblocked).
	BusyPoll bool `yaml:"busy_poll,omitempty" json:"busy_poll,omitempty"`
	// Copy (stream, TCP as fast as possible) writes each block from user
	// memory, as iperf3 without -Z, instead of sendfile from a file.
	Copy        bool   `yaml:"copy,omitempty" json:"copy,omitempty"`
	Repetitions int    `yaml:"repetitions,omitempty" json:"repetitions,omitempty"`
	Sweep       *Sweep `yaml:"sweep,omitempty" json:"sweep,omitempty"`
	// Fan-out (Bryzgalov 2014), for every workload, over a spec's placement:
	// Clients client containers run the test at once (0: every one the
	// placement has), client i against server i mod Servers (0: one
	// server; Pairs: as many servers as clients), each running Processes
	// clients (0: one), every client measured on its own.
	Clients   int  `yaml:"clients,omitempty" json:"clients,omitempty"`
	Servers   int  `yaml:"servers,omitempty" json:"servers,omitempty"`
	Pairs     bool `yaml:"pairs,omitempty" json:"pairs,omitempty"`
	Processes int  `yaml:"processes,omitempty" json:"processes,omitempty"`
}

// FanOut are the parameters every workload takes for fan-out, and may
// sweep, besides its own.
var FanOut = []string{"clients", "servers", "processes"}

// Fan-out bounds. A server serves at most MaxFanIn clients at once.
const (
	MaxClients   = 250 // tests[].clients, placement.clients
	MaxServers   = 250 // tests[].servers, placement.servers
	MaxProcesses = 64  // tests[].processes
	MaxFanIn     = 1024
)

// ClientCount is how many client containers run the test, given how many
// the lab has.
func (t Test) ClientCount(placed int) int {
	if t.Clients > 0 {
		return t.Clients
	}
	return max(placed, 1)
}

// ServerCount is how many servers the test's clients spread over.
func (t Test) ServerCount(placed int) int {
	switch {
	case t.Pairs:
		return t.ClientCount(placed)
	case t.Servers > 0:
		return t.Servers
	}
	return 1
}

// ProcessCount is how many clients run in each client container.
func (t Test) ProcessCount() int { return max(t.Processes, 1) }

// FansOut reports whether the test runs more than one client at once.
func (t Test) FansOut(placedClients int) bool {
	return t.ClientCount(placedClients)*t.ProcessCount() > 1
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
	w     Socket // from Expand
}

// Workload is the case's workload.
func (c Case) Workload() Socket { return c.w }

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
)

// FieldError is a bad value of one field of a test, named as the spec
// writes it below tests[i] ("length", "sweep.values[2]").
type FieldError struct {
	Field string
	Msg   string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

// Bad is a FieldError: a workload's Check words its errors with it.
func Bad(field, format string, a ...any) error {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, a...)}
}

var bad = Bad

// Counts checks every test's own fields against their bounds without
// expanding anything, and returns how many cases each test makes (its
// sweep's values, or 1): a plan's size is known before it is built.
// Errors name the field as tests[i].FIELD.
func (s Set) Counts(tests []Test) ([]int, error) {
	if len(tests) > MaxCases {
		return nil, fmt.Errorf("tests: %d tests, more than %d", len(tests), MaxCases)
	}
	counts := make([]int, len(tests))
	for i, t := range tests {
		n, err := t.check(s)
		if err != nil {
			return nil, fmt.Errorf("tests[%d].%w", i, err)
		}
		counts[i] = n
	}
	return counts, nil
}

// Expand validates the tests and returns their cases in order; errors name
// the field as tests[i].FIELD.
func (s Set) Expand(tests []Test) ([]Case, error) {
	counts, err := s.Counts(tests)
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
		w, _ := s.Lookup(t.Workload) // checked by Counts
		cs, err := t.cases(i, w)
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
func (t Test) check(s Set) (int, error) {
	w, err := s.lookup(t.Workload)
	if err != nil {
		return 0, err
	}
	if len(t.Name) > MaxNameBytes {
		return 0, bad("name", "%d bytes, more than %d", len(t.Name), MaxNameBytes)
	}
	if t.Repetitions < 0 || t.Repetitions > MaxRepetitions {
		return 0, bad("repetitions", "%d is outside 0..%d (0: once)", t.Repetitions, MaxRepetitions)
	}
	if err := t.onlyKnown(w); err != nil {
		return 0, err
	}
	if err := t.checkFanOut(); err != nil {
		return 0, err
	}
	if t.FitMTU && (t.Request != 0 || t.Response != 0 || (t.Sweep != nil && (t.Sweep.Param == "request" || t.Sweep.Param == "response"))) {
		return 0, bad("fit_mtu", "sets request and response from the path MTU; leave them out")
	}
	if t.Sweep == nil {
		return 1, nil
	}
	sw := *t.Sweep
	if sweepable := append(slices.Clip(w.Sweepable()), FanOut...); !slices.Contains(sweepable, sw.Param) {
		return 0, bad("sweep.param", "%q: %s sweeps %s", sw.Param, t.Workload, strings.Join(sweepable, ", "))
	}
	if sw.Param == "servers" && t.Pairs {
		return 0, bad("sweep.param", "servers: pairs sets servers to clients; sweep clients")
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
func (t Test) cases(i int, w Socket) ([]Case, error) {
	base := t.Label()
	if t.Sweep == nil {
		c := Case{Test: t, Index: i, Label: base, w: w}
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
		cs[j] = Case{Test: ct, Index: i, Label: base + " " + sw.Param + "=" + v, Param: sw.Param, Value: v, w: w}
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
	case "clients":
		t.Clients = n
	case "servers":
		t.Servers = n
	case "processes":
		t.Processes = n
	}
	return t, nil
}

// checkFanOut bounds the fan-out fields; whether the placement has that
// many containers is the spec's to check.
func (t Test) checkFanOut() error {
	for _, f := range []struct {
		name   string
		v, max int
	}{{"clients", t.Clients, MaxClients}, {"servers", t.Servers, MaxServers}, {"processes", t.Processes, MaxProcesses}} {
		if f.v < 0 || f.v > f.max {
			return bad(f.name, "%d is outside 0..%d (0: the default)", f.v, f.max)
		}
	}
	if t.Pairs && t.Servers != 0 {
		return bad("pairs", "sets servers to clients; leave servers out")
	}
	return nil
}

// onlyKnown refuses a parameter the workload does not have, so that a
// setting never silently does nothing.
func (t Test) onlyKnown(w Socket) error {
	set := map[string]bool{
		"protocol": t.Protocol != "", "omit": t.Omit != 0, "parallel": t.Parallel != 0, "length": t.Length != 0,
		"rate": t.Rate != "", "request": t.Request != 0, "response": t.Response != 0, "count": t.Count != 0,
		"timeout": t.Timeout != 0, "fit_mtu": t.FitMTU, "busy_poll": t.BusyPoll, "copy": t.Copy,
	}
	allowed := w.Params()
	for _, k := range []string{"protocol", "omit", "parallel", "length", "rate", "request", "response", "count", "timeout", "fit_mtu", "busy_poll", "copy"} {
		if set[k] && !slices.Contains(allowed, k) {
			return bad(k, "not a parameter of %s (it has %s)", t.Workload, strings.Join(allowed, ", "))
		}
	}
	return nil
}

// RunTime is the time to measure: 10s unless set (a test with a count,
// which only datagram takes, runs until the count).
func (t Test) RunTime() time.Duration {
	if t.Duration == 0 && t.Count == 0 {
		return 10 * time.Second
	}
	return t.Duration
}

// Planned is how long the client should run: warm-up and duration; 0 when
// a test runs until its count.
func (t Test) Planned() time.Duration {
	if d := t.RunTime(); d > 0 {
		return t.Omit + d
	}
	return 0
}

// ReportInterval is the client's reporting interval: 1s unless set.
func (t Test) ReportInterval() time.Duration {
	if t.Interval == 0 {
		return time.Second
	}
	return t.Interval
}

// Validate checks the case's fields against their bounds and the
// workload's rules; an error is a FieldError naming the spec's field.
func (c Case) Validate() error {
	t, w := c.Test, c.w
	if err := t.checkFanOut(); err != nil {
		return err
	}
	if ps := w.Protocols(); t.Protocol != "" && !slices.Contains(ps, t.Protocol) {
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
	if n := (t.Omit + t.RunTime()) / t.ReportInterval(); n > MaxIntervals {
		return bad("interval", "%s cuts omit + duration (%s) into %d intervals, more than %d", t.ReportInterval(), t.Omit+t.RunTime(), n, MaxIntervals)
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
	err = w.Check(t, rate)
	var fe *FieldError
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return SpecFields(w, err.Error())
}

// Between checks an int field against lo..hi; zero is the default when
// zeroOK.
func Between(field string, v, lo, hi int, zeroOK bool) error {
	if (v == 0 && zeroOK) || (v >= lo && v <= hi) {
		return nil
	}
	return bad(field, "%d is outside %d..%d", v, lo, hi)
}

// Size checks a size in bytes (0: the default) against lo..hi; what names
// the unit in errors ("UDP datagram").
func Size(field string, v, lo, hi int, what string) error {
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

var flagRE = regexp.MustCompile(`--[a-z][a-z-]*`)

// SpecFields turns a workload's client error ("--size 70000: must be ...")
// into one about the spec's field ("length: 70000: must be ..."), every
// flag in it renamed with w.Flags.
func SpecFields(w Socket, msg string) error {
	names := w.Flags()
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
		msg = w.Name() + ": " + msg
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

// Fitter is a Socket whose sizes may follow the path's MTU (fit_mtu).
type Fitter interface {
	// FitTo returns t with its sizes set for a path of the given MTU.
	FitTo(t Test, mtu int) Test
}

// FitTo returns the case with its sizes fitted to a path of the given MTU,
// when the test asks for it (FitMTU) and its workload can.
func (c Case) FitTo(mtu int) Case {
	if f, ok := c.w.(Fitter); ok && c.Test.FitMTU {
		c.Test = f.FitTo(c.Test, mtu)
	}
	return c
}

// ClientArgs returns the client's arguments (after the binary) against the
// server at host, printing JSON lines.
func (c Case) ClientArgs(host string) []string {
	t := c.Test
	a := []string{t.Workload, "--server", fmt.Sprintf("%s:%d", host, c.w.Server().Port), "--json",
		"--time", t.RunTime().String(), "--interval", t.ReportInterval().String()}
	return append(a, c.w.ClientFlags(t)...)
}
