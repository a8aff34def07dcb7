// A spec's socket tests: each test names a workload and its parameters,
// optionally sweeps one of them, and becomes cases. A case is the command
// lines of a server and a client, the same `cnperf serve ...` and `cnperf
// stream ...` people run by hand, so a test in a spec measures exactly
// what the CLI does.

package workload

import (
	"errors"
	"fmt"
	"net"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Test is one entry of a spec's tests: the fields every test has, and
// its workload's parameters by name (Params), each declared once by the
// workload (Param). Unset parameters take the workload's defaults (those
// of its client).
type Test struct {
	Name     string        `yaml:"name,omitempty" json:"name,omitempty"`
	Workload string        `yaml:"workload" json:"workload"`
	Duration time.Duration `yaml:"duration,omitempty" json:"duration,omitempty"` // 0: 10s (a test with a count: until count)
	Interval time.Duration `yaml:"interval,omitempty" json:"interval,omitempty"` // reporting interval; 0: 1s
	// Params are the workload's parameters, written beside the fields
	// above in a spec and in a run's JSON (tests[].length).
	Params      Params `yaml:"-" json:"-"`
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

// Bad is a FieldError: a workload's Validate words its errors with it.
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
		n, err := t.validate(s)
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

// validate checks what a test says about itself (workload, repetitions,
// parameters it may have, its sweep's shape and values' syntax) and returns
// its number of cases, computed, not expanded.
func (t Test) validate(s Set) (int, error) {
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
	if err := t.onlyKnown(w, s); err != nil {
		return 0, err
	}
	if err := t.validateFanOut(); err != nil {
		return 0, err
	}
	if t.Sweep == nil {
		return 1, nil
	}
	sw := *t.Sweep
	if sweepable := append(Sweepable(w), FanOut...); !slices.Contains(sweepable, sw.Param) {
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
			if p, _ := Declared(w, sw.Param); p.Kind == Rate {
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
		ct := t.with(w, sw.Param, v)
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
	if p := t.Params.Text("protocol"); p != "" {
		return t.Workload + " " + p
	}
	return t.Workload
}

// with returns t with one parameter set from a sweep's value, whose
// syntax validate checked (a fan-out parameter's: digits).
func (t Test) with(w Socket, param, v string) Test {
	if p, ok := Declared(w, param); ok {
		t.Params = p.with(t.Params, v)
		return t
	}
	n, _ := strconv.Atoi(v)
	switch param {
	case "clients":
		t.Clients = n
	case "servers":
		t.Servers = n
	case "processes":
		t.Processes = n
	}
	return t
}

// validateFanOut bounds the fan-out fields; whether the placement has that
// many containers is the spec's to check.
func (t Test) validateFanOut() error {
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

// onlyKnown refuses a parameter the workload does not declare, so that a
// setting never silently does nothing: another workload's parameter, or a
// field no test has.
func (t Test) onlyKnown(w Socket, s Set) error {
	keys := make([]string, 0, len(t.Params))
	for k := range t.Params {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	own := Names(w.Params())
	for _, k := range keys {
		if slices.Contains(own, k) {
			continue
		}
		for _, o := range s {
			if _, ok := Declared(o, k); ok {
				return bad(k, "not a parameter of %s (it has %s)", t.Workload, strings.Join(own, ", "))
			}
		}
		return bad(k, "unknown field; %s takes %s, and every test %s", t.Workload, strings.Join(own, ", "), strings.Join(commonFields, ", "))
	}
	return nil
}

// RunTime is the time to measure: 10s unless set (a test with a count,
// which only datagram takes, runs until the count).
func (t Test) RunTime() time.Duration {
	if t.Duration == 0 && t.Params.Int("count") == 0 {
		return 10 * time.Second
	}
	return t.Duration
}

// Planned is how long the client should run: warm-up and duration; 0 when
// a test runs until its count.
func (t Test) Planned() time.Duration {
	if d := t.RunTime(); d > 0 {
		return t.Params.Dur("omit") + d
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
	if err := t.validateFanOut(); err != nil {
		return err
	}
	if d := t.Duration; d < 0 || d > MaxDuration {
		return bad("duration", "%s is outside 0s..%s", d, MaxDuration)
	}
	if t.Interval != 0 && (t.Interval < MinInterval || t.Interval > MaxDuration) {
		return bad("interval", "%s is outside %s..%s (0: 1s)", t.Interval, MinInterval, MaxDuration)
	}
	for _, p := range w.Params() {
		if err := p.Validate(t.Params, t.Workload); err != nil {
			return err
		}
	}
	measured := t.Params.Dur("omit") + t.RunTime()
	if n := measured / t.ReportInterval(); n > MaxIntervals {
		return bad("interval", "%s cuts omit + duration (%s) into %d intervals, more than %d", t.ReportInterval(), measured, n, MaxIntervals)
	}
	err := w.Validate(t)
	var fe *FieldError
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return SpecFields(w, err.Error())
}

// Fitter is a Socket whose sizes may follow the path's MTU (a switch
// parameter fit_mtu).
type Fitter interface {
	// FitTo returns t with its sizes set for a path of the given MTU.
	FitTo(t Test, mtu int) Test
}

// FitTo returns the case with its sizes fitted to a path of the given MTU,
// when the test asks for it (FitMTU) and its workload can.
func (c Case) FitTo(mtu int) Case {
	if f, ok := c.w.(Fitter); ok && c.FitsMTU() {
		c.Test = f.FitTo(c.Test, mtu)
	}
	return c
}

// FitsMTU reports whether the case's sizes follow the path's MTU, which
// the runner then measures.
func (c Case) FitsMTU() bool { return c.Test.Params.Bool("fit_mtu") }

// ClientArgs returns the client's arguments (after the binary) against the
// server at host, printing JSON lines.
func (c Case) ClientArgs(host string) []string {
	t := c.Test
	a := []string{t.Workload, "--server", net.JoinHostPort(host, strconv.Itoa(c.w.Server().Port)), "--json",
		"--time", t.RunTime().String(), "--interval", t.ReportInterval().String()}
	for _, p := range c.w.Params() {
		switch {
		case p.Flag == "" || !t.Params.Set(p.Name):
		case p.FlagSets != "":
			if t.Params.Text(p.Name) == p.FlagSets {
				a = append(a, p.Flag)
			}
		case p.Kind == Switch:
			a = append(a, p.Flag)
		default:
			a = append(a, p.Flag, p.arg(t.Params))
		}
	}
	return a
}

// Loader is a Socket whose test may run beside a load on the same path,
// as flent's RRUL runs latency probes beside bulk streams: Load returns
// the load's test and workload, or false when the test asks for none.
type Loader interface {
	Load(t Test) (Test, Socket, bool)
}

// LoadCase is the load a case runs beside itself (its workload's Loader),
// named as the case so its records file under it, or false.
func (c Case) LoadCase() (Case, bool) {
	l, ok := c.w.(Loader)
	if !ok {
		return Case{}, false
	}
	t, w, ok := l.Load(c.Test)
	if !ok {
		return Case{}, false
	}
	return Case{Test: t, Index: c.Index, Label: c.Label, Param: c.Param, Value: c.Value, w: w}, true
}

// LoadServer is the server the load of a spec's tests needs, if any.
func LoadServer(cases []Case) (Server, bool) {
	for _, c := range cases {
		if lc, ok := c.LoadCase(); ok {
			return lc.w.Server(), true
		}
	}
	return Server{}, false
}
