package pingpong

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/cnperf/cnperf/internal/workload"
)

// A ping-pong test's defaults: a spec's test (or pingpong section) takes
// these for the fields it leaves out.
const (
	DefaultMinSize     = 1
	DefaultLargestSize = 500_000 // max_size (DefaultMaxSize is pong's limit, max_body)
	DefaultCoverage    = 0.1
	DefaultRepetitions = 10
	DefaultConcurrency = 1
	DefaultSeed        = 1
	DefaultChunk       = 10
	// MaxChunk bounds the sizes of one cell.
	MaxChunk = 100_000
)

// Params declares a ping-pong test's parameters once: the spec's fields
// (tests[].NAME, or pingpong.NAME), their bounds, defaults and the flag of
// the program that takes each (siege, ping or pong; none: the runner's).
// The spec checks its fields against these bounds (Bound) and the docs'
// table is generated from them. A test's servers (another implementation
// of the protocol) are a section of their own, not a parameter.
func (descriptor) Params() []workload.Param {
	whole := func(name, unit string, lo, hi int64, def int64, flag, help string) workload.Param {
		return workload.Param{Name: name, Kind: workload.Whole, Unit: unit, Bounds: []workload.Bound{{Min: lo, Max: hi}},
			Default: strconv.FormatInt(def, 10), Flag: flag, Help: help}
	}
	return []workload.Param{
		whole("min_size", "bytes", 0, MaxSizeLimit, DefaultMinSize, "--min", "the smallest message size; at most max_size"),
		whole("max_size", "bytes", 0, MaxSizeLimit, DefaultLargestSize, "--max", "the largest message size; at most max_body"),
		{Name: "coverage", Kind: workload.Fraction, Default: strconv.FormatFloat(DefaultCoverage, 'g', -1, 64), Flag: "--coverage",
			Help: fmt.Sprintf("fraction of the sizes in the range to request, distinct, drawn uniformly (at most %d sizes)", MaxPlanSizes)},
		whole("repetitions", "requests", 1, MaxRepetitions, DefaultRepetitions, "--repetitions", "requests per size"),
		// Each request in flight holds a connection to ping, and ping one
		// to pong: at most 1024.
		whole("concurrency", "requests", 1, 1024, DefaultConcurrency, "--concurrency", "requests siege keeps in flight (keep-alive connections)"),
		whole("seed", "", math.MinInt64, math.MaxInt64, DefaultSeed, "--seed", "seed of the size sample: the same seed gives the same sizes"),
		whole("chunk", "sizes", 1, MaxChunk, DefaultChunk, "", "sizes per cell; cells rotate round-robin over the modes"),
		whole("retries", "attempts", 0, MaxRetries, DefaultRetries, "--retries", "ping's retries towards pong after a failed attempt, before it answers 503 (0: none)"),
		{Name: "timeout", Kind: workload.Duration, Bounds: []workload.Bound{{Min: 1, Max: int64(MaxTimeout)}}, Default: DefaultTimeout.String(),
			Flag: "--timeout", Help: "one request (siege) and one attempt (ping)"},
		whole("max_body", "bytes", 1, MaxSizeLimit, DefaultMaxSize, "--max-size", "pong's largest body; a larger request gets no answer"),
		whole("port", "", 1, 65535, DefaultPingPort, "", "where ping and pong listen and are published"),
	}
}

// Param is a declared parameter (Params): siege, ping and pong register
// their flags from it.
func Param(name string) workload.Param {
	p, ok := workload.Declared(Descriptor, name)
	if !ok {
		panic("pingpong: no parameter " + name)
	}
	return p
}

// Bound is the declared bound of a whole-number or duration parameter
// (Params): the spec, siege, ping and pong check their values against it.
func Bound(name string) workload.Bound { return Param(name).Bounds[0] }

// Check reports a whole number outside the parameter's declared bound.
func Check(name string, n int) error {
	if b := Bound(name); int64(n) < b.Min || int64(n) > b.Max {
		return rangeError(n, int(b.Min), int(b.Max))
	}
	return nil
}

// CheckTimeout reports a timeout outside its declared bound, (0, MaxTimeout].
func CheckTimeout(d time.Duration) error {
	if b := Bound("timeout"); d < time.Duration(b.Min) || d > time.Duration(b.Max) {
		return fmt.Errorf("%s: must be > 0 and at most %s", d, time.Duration(b.Max))
	}
	return nil
}

// CheckMaxSize reports a pong limit outside 0..MaxSizeLimit (pong's
// --max-size 0 serves only empty bodies; a spec's max_body is at least 1).
func CheckMaxSize(n int) error {
	if n < 0 || n > MaxSizeLimit {
		return rangeError(n, 0, MaxSizeLimit)
	}
	return nil
}
