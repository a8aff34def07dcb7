package workload

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Kind is what a parameter's value is.
type Kind int

const (
	Whole    Kind = iota // a whole number: bytes, streams, packets
	Duration             // a duration with its unit: 2s, 500ms
	Switch               // true or false; on the client, a flag without a value
	Rate                 // bits/s with k, M, G or T (powers of 1000): 10M, 1.5G
	Choice               // one of Choices: a protocol, a style
	Fraction             // a number in (0, 1]: ping-pong's coverage
)

// Param declares one parameter of a workload, once. Everything else is
// derived from it: the spec's field and its unknown-field errors, the
// bounds check in the spec's words, whether a sweep may vary it, and the
// client's flag (its registration, help, and the argument a spec's test
// passes).
type Param struct {
	Name string // the spec's field, tests[].NAME
	Kind Kind
	Unit string // of a whole number: "bytes", "streams" (help and axis titles)
	// Bounds of a set value (Whole: the number; Duration: nanoseconds),
	// checked in the spec's words; zero always means the client's default.
	// The first Bound whose Protocol is the test's protocol applies, else
	// the first without one; none: any value >= 0 (Duration, Rate) or any
	// whole number >= 0.
	Bounds  []Bound
	Choices []string // Choice: its values, the first the default
	// Flag is the client's flag ("--length"), Short its one-letter form
	// ("l"); "" when the client takes no flag (the runner applies it).
	Flag, Short string
	// Alias is an older name of Flag that the client still takes, hidden
	// from its help and answered with a note to use Flag ("--mode" for
	// rr's protocol, which the word mode no longer names).
	Alias string
	// Default is the client's default as its flag shows it ("" for none).
	Default string
	// FlagSets, for a Choice, makes Flag a flag without a value that
	// sets the parameter to this choice (stream's --udp sets protocol
	// udp); the other choices then pass no flag.
	FlagSets string
	Sweep    bool   // a sweep may vary it
	Help     string // the flag's help, which the docs repeat
}

// Bound is a parameter's range: Min..Max, or, for a size (What set), at
// most Max bytes of What and at least Min ("UDP datagram": errors say "is
// above the largest UDP datagram (65507)").
type Bound struct {
	Protocol string // applies under this protocol only; "" under any
	Min, Max int64
	What     string
}

// Capability is something a workload's measure has that other parts of
// cnperf need, asked for by what it is rather than by the workload's name.
type Capability string

const (
	// RoundTrip: the workload measures a round-trip latency, its median
	// as metric RoundTripMetric (a chain of hosts then also measures each
	// segment, and tables show the latency per hop).
	RoundTrip Capability = "round-trip latency"
	// ConnState: the workload fills the datapath's connection state, so
	// the runner reads the lab's conntrack tables during its cells.
	ConnState Capability = "connection state"
)

// RoundTripMetric is the median round trip of a RoundTrip workload.
const RoundTripMetric = "rtt_p50"

// Params are a test's workload parameters, by the spec's field name: each
// value as the spec gave it (YAML: int64, string, bool; a run's JSON:
// json.Number, string, bool; Go: int, time.Duration...). A Param's Kind
// reads it.
type Params map[string]any

// Set reports whether the parameter is given (a zero value is "the
// default", as an unset one).
func (p Params) Set(name string) bool {
	v, ok := p[name]
	if !ok || v == nil {
		return false
	}
	switch v := v.(type) {
	case string:
		return v != ""
	case bool:
		return v
	case int:
		return v != 0
	case int64:
		return v != 0
	case time.Duration:
		return v != 0
	case json.Number:
		return v.String() != "0"
	case float64:
		return v != 0
	}
	return true
}

// Int reads a whole number (0 when unset or not one: Validate tells).
func (p Params) Int(name string) int64 {
	n, _ := whole(p[name])
	return n
}

// Dur reads a duration (0 when unset or not one: Validate tells).
func (p Params) Dur(name string) time.Duration {
	d, _ := duration(p[name])
	return d
}

// Bool reads a switch.
func (p Params) Bool(name string) bool {
	b, _ := p[name].(bool)
	return b
}

// Text reads a choice or a rate as text ("" when unset).
func (p Params) Text(name string) string {
	s, _ := text(p[name])
	return s
}

func whole(v any) (int64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case int:
		return int64(v), nil
	case int64:
		return v, nil
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return n, nil
		}
	}
	return 0, errors.New("want a whole number")
}

// duration reads a duration: text with a unit, a Go duration, or the
// nanoseconds a run's JSON stored.
func duration(v any) (time.Duration, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case time.Duration:
		return v, nil
	case string:
		if d, err := time.ParseDuration(v); err == nil {
			return d, nil
		}
	case json.Number:
		if n, err := v.Int64(); err == nil {
			return time.Duration(n), nil
		}
	}
	return 0, errors.New("want a duration with its unit, like 2s or 500ms")
}

func text(v any) (string, error) {
	switch v := v.(type) {
	case nil:
		return "", nil
	case string:
		return v, nil
	case int:
		return strconv.Itoa(v), nil
	case int64:
		return strconv.FormatInt(v, 10), nil
	case json.Number:
		return v.String(), nil
	}
	return "", errors.New("want text")
}

// show is a value as errors quote it.
func show(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	return fmt.Sprint(v)
}

// Validate checks the value of p in ps against its kind and bounds; an
// error is a *FieldError naming p.
func (p Param) Validate(ps Params, workload string) error {
	v := ps[p.Name]
	switch p.Kind {
	case Whole:
		n, err := whole(v)
		if err != nil {
			return bad(p.Name, "%s: %v", show(v), err)
		}
		return p.bound(ps).validate(p.Name, n)
	case Duration:
		d, err := duration(v)
		if err != nil {
			return bad(p.Name, "%s: %v", show(v), err)
		}
		switch b := p.bound(ps); {
		case b.Max < 0 && d < 0:
			return bad(p.Name, "%s is negative", d)
		case b.Max >= 0 && (d < 0 || d > time.Duration(b.Max)):
			return bad(p.Name, "%s is outside 0s..%s", d, time.Duration(b.Max))
		}
	case Switch:
		if _, ok := v.(bool); !ok && v != nil {
			return bad(p.Name, "%s: want true or false", show(v))
		}
	case Rate:
		s, err := text(v)
		if err != nil {
			return bad(p.Name, "%s: want bits per second like 10M, 1.5G or 0", show(v))
		}
		if _, err := parseRate(s); s != "" && err != nil {
			return bad(p.Name, "%q: %v", s, err)
		}
	case Choice:
		s, err := text(v)
		if err != nil || (s != "" && !slices.Contains(p.Choices, s)) {
			return bad(p.Name, "%s is not a %s of %s (%s)", show(v), p.Name, workload, strings.Join(p.Choices, ", "))
		}
	case Fraction:
		if f, err := fraction(v); err != nil || (v != nil && !(f > 0 && f <= 1)) { // NaN fails both
			return bad(p.Name, "%s: want a number in (0, 1]", show(v))
		}
	}
	return nil
}

// fraction reads a number (0 when unset).
func fraction(v any) (float64, error) {
	switch v := v.(type) {
	case nil:
		return 0, nil
	case float64:
		return v, nil
	case json.Number:
		return v.Float64()
	}
	n, err := whole(v)
	return float64(n), err
}

// bound is the Bound that applies to the test's protocol.
func (p Param) bound(ps Params) Bound {
	proto := ps.Text("protocol")
	for _, b := range p.Bounds {
		if b.Protocol != "" && b.Protocol == proto {
			return b
		}
	}
	for _, b := range p.Bounds {
		if b.Protocol == "" {
			return b
		}
	}
	return Bound{Max: -1}
}

// validate bounds a set whole number (0: the default).
func (b Bound) validate(field string, n int64) error {
	switch {
	case b.Max < 0: // no bound declared
		if n < 0 {
			return bad(field, "%d is negative", n)
		}
	case b.What != "":
		switch {
		case n < 0:
			return bad(field, "%d is negative", n)
		case n == 0:
		case n > b.Max:
			return bad(field, "%d is above the largest %s (%d)", n, b.What, b.Max)
		case n < b.Min:
			return bad(field, "%d is below %d, the smallest %s a test sends", n, b.Min, b.What)
		}
	case n < 0 || (n != 0 && (n < b.Min || n > b.Max)):
		return bad(field, "%d is outside %d..%d", n, b.Min, b.Max)
	}
	return nil
}

// arg is the value as the client's flag takes it.
func (p Param) arg(ps Params) string {
	switch p.Kind {
	case Whole:
		return strconv.FormatInt(ps.Int(p.Name), 10)
	case Duration:
		return ps.Dur(p.Name).String()
	case Switch:
		return "true"
	}
	return ps.Text(p.Name)
}

// with returns a copy of ps with the parameter set from a sweep's value,
// whose syntax Test.validate checked: a whole number's digits, or a rate.
func (p Param) with(ps Params, v string) Params {
	out := make(Params, len(ps)+1)
	maps.Copy(out, ps)
	out[p.Name] = v
	if p.Kind == Whole {
		out[p.Name], _ = strconv.ParseInt(v, 10, 64)
	}
	return out
}

// canonical is the value in its kind's Go type (int64, time.Duration,
// bool, string), as valid values are kept once checked; ok is false for a
// value Validate refuses.
func (p Param) canonical(v any) (any, bool) {
	var err error
	switch p.Kind {
	case Whole:
		v, err = whole(v)
	case Duration:
		v, err = duration(v)
	case Switch:
		_, ok := v.(bool)
		return v, ok
	case Fraction:
		v, err = fraction(v)
	default:
		v, err = text(v)
	}
	return v, err == nil
}

// Declared finds a workload's parameter (a socket workload's or a size
// sweep's).
func Declared(w interface{ Params() []Param }, name string) (Param, bool) {
	ps := w.Params()
	i := slices.IndexFunc(ps, func(p Param) bool { return p.Name == name })
	if i < 0 {
		return Param{}, false
	}
	return ps[i], true
}

// Names lists the parameters' names in order.
func Names(ps []Param) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

// Has reports whether the workload has the capability.
func Has(w Socket, c Capability) bool { return slices.Contains(w.Capabilities(), c) }

// Sweepable lists the parameters a sweep of the workload's tests may vary
// (besides FanOut).
func Sweepable(w Socket) []string {
	var out []string
	for _, p := range w.Params() {
		if p.Sweep {
			out = append(out, p.Name)
		}
	}
	return out
}

// Flags maps the client's flags to the spec's fields, so that an error of
// the client's own validation names what the spec wrote.
func Flags(w Socket) map[string]string {
	m := map[string]string{"--time": "duration", "--interval": "interval"}
	for _, p := range w.Params() {
		if p.Flag != "" {
			m[p.Flag] = p.Name
		}
	}
	return m
}

var flagRE = regexp.MustCompile(`--[a-z][a-z-]*`)

// SpecFields turns a workload's client error ("--size 70000: must be ...")
// into one about the spec's field ("length: 70000: must be ..."), every
// flag in it renamed with w.Flags.
func SpecFields(w Socket, msg string) error {
	names := Flags(w)
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

// Bits reads a rate parameter in bits/s (0 when unset or not a rate:
// Validate tells).
func (p Params) Bits(name string) int64 {
	r, _ := parseRate(p.Text(name))
	return r
}

var rateRE = regexp.MustCompile(`^([0-9]{1,15}(?:\.[0-9]{1,9})?)([kKmMgGtT]?)$`)

// parseRate reads a rate as the workloads' CLIs do (shell.ParseRate),
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
