package analysis

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// A ping-pong request on a kept-alive connection takes about one round
// trip plus its body's time through the path's bottleneck:
//
//	duration(m) ≈ floor + c·m / B
//
// with c requests in flight sharing the bottleneck of B bytes/s. With one
// in flight (c = 1) the floor is the round trip, the servers' own time
// included. With more, the floor is mostly waiting behind the others: c in
// flight, each taking floor, pass c/floor requests a second, so one alone
// takes at least floor/c, which is then the round trip's estimate (a lower
// bound). A new connection per request would add a round trip (the
// handshake) to the floor; cnperf's siege and ping, and ppbench's, keep
// their connections alive.
//
// FitPath finds floor and 1/B robustly: the floor is the median time of
// the smallest messages less their size term, the slope the median of
// (duration − floor)/m over the largest decile, refined in turn. Medians,
// not least squares, so that a few stalled requests (a retransmission, a
// descheduled server) move neither.

// Calibration's bounds on the samples it takes.
const (
	// CalibrateSmallBytes bounds the messages whose time is taken as the
	// round trip: at most this many bytes, whose size term is a few µs at
	// any rate a lab shapes.
	CalibrateSmallBytes = 1000
	// CalibrateMinSmall and CalibrateMinLarge are the fewest samples the
	// round trip and the bandwidth may rest on.
	CalibrateMinSmall = 2
	CalibrateMinLarge = 1
	// CalibrateSpread is how many times larger than the small messages
	// the large ones must be, for their size term to stand out.
	CalibrateSpread = 8
)

// PathFit is a reference's floor and bottleneck time per byte.
type PathFit struct {
	FloorMS   float64 // the smallest messages' time less their size term, ms
	MSPerByte float64 // the largest messages' time per byte above the floor, ms
	Small     int     // samples the floor rests on
	Large     int     // samples the slope rests on
	SmallMax  int     // the largest size among them, bytes
	LargeMin  int     // the smallest size among them, bytes
}

// FitPath fits duration ≈ floor + size · slope to successful samples (all
// of one series). Its errors say what the samples lack.
func FitPath(samples []record.Sample) (PathFit, error) {
	var ok []record.Sample
	for _, s := range samples {
		if s.OK() && s.DurationMS > 0 && !math.IsInf(s.DurationMS, 0) {
			ok = append(ok, s)
		}
	}
	if len(ok) < CalibrateMinSmall+CalibrateMinLarge {
		return PathFit{}, fmt.Errorf("%d successful samples with a duration, fewer than %d", len(ok), CalibrateMinSmall+CalibrateMinLarge)
	}
	slices.SortStableFunc(ok, func(a, b record.Sample) int { return a.Size - b.Size })

	// The small set: messages up to CalibrateSmallBytes, or, where a
	// uniform sweep drew too few, the smallest twentieth of the samples.
	nSmall, _ := slices.BinarySearchFunc(ok, CalibrateSmallBytes+1, func(s record.Sample, size int) int { return s.Size - size })
	if nSmall < CalibrateMinSmall {
		nSmall = max(CalibrateMinSmall, len(ok)/20)
	}
	nLarge := max(CalibrateMinLarge, len(ok)/10)
	if nSmall+nLarge > len(ok) {
		nLarge = len(ok) - nSmall
	}
	small, large := ok[:nSmall], ok[len(ok)-nLarge:]
	fit := PathFit{Small: len(small), Large: len(large), SmallMax: small[len(small)-1].Size, LargeMin: large[0].Size}
	if nLarge < CalibrateMinLarge || fit.LargeMin < CalibrateSpread*max(fit.SmallMax, 1) {
		return fit, fmt.Errorf("sizes %d to %d B: the largest messages must be at least %d times the smallest (up to %d B) to show the bandwidth",
			ok[0].Size, ok[len(ok)-1].Size, CalibrateSpread, fit.SmallMax)
	}

	floors := make([]float64, len(small))
	slopes := make([]float64, len(large))
	// Each step corrects the floor by the size term and the slope by the
	// floor; with small messages CalibrateSpread times smaller, three
	// rounds change either by far less than the noise.
	for range 3 {
		for i, s := range small {
			floors[i] = s.DurationMS - fit.MSPerByte*float64(s.Size)
		}
		fit.FloorMS = stats.Median(floors)
		for i, s := range large {
			slopes[i] = (s.DurationMS - fit.FloorMS) / float64(s.Size)
		}
		fit.MSPerByte = stats.Median(slopes)
	}
	switch {
	case !(fit.MSPerByte > 0):
		return fit, fmt.Errorf("the largest messages (%d B and up) took no longer than the smallest: no bandwidth to derive", fit.LargeMin)
	case fit.MSPerByte*float64(fit.LargeMin) < 0.05*fit.FloorMS:
		return fit, fmt.Errorf("the largest messages (%d B and up) took at most 5 %% longer than the smallest (%.3g ms): their size term is noise, use larger messages", fit.LargeMin, fit.FloorMS)
	case fit.FloorMS < 0:
		return fit, fmt.Errorf("the smallest messages' time less their size term is negative (%.3g ms): the samples do not fit time = round trip + size / bandwidth", fit.FloorMS)
	}
	return fit, nil
}

// Path is a reference path's round trip and bandwidth.
type Path struct {
	RTT         time.Duration
	RTTBasis    string  // "latency" (one request in flight) or "throughput" (several)
	BytesPerSec float64 // the bottleneck's rate, shared by the requests in flight
}

// PathOf turns a fit into a path for samples measured with concurrency
// requests in flight, whose time spans hops HTTP hops (ping→pong: 1;
// apachebench's siege→ping→pong: 2, each a round trip). The body's time is
// counted once whatever the hops: ping relays it as a stream.
func PathOf(fit PathFit, concurrency, hops int) Path {
	c := float64(max(concurrency, 1))
	p := Path{BytesPerSec: c * 1000 / fit.MSPerByte, RTTBasis: "latency"}
	floor := fit.FloorMS / float64(max(hops, 1))
	if concurrency > 1 {
		// The floor is queueing, over every hop at once: one request
		// holds the bottleneck floor/c.
		floor, p.RTTBasis = fit.FloorMS/c, "throughput"
	}
	p.RTT = time.Duration(floor * float64(time.Millisecond))
	return p
}

// LoadCalibration reads the reference run in dir, as the report loads
// runs (record.Open, run.json, its ping-pong samples), and derives its path
// from the samples of series (default: the run's reference). Its errors
// name the spec field they are about. The lines of samples.jsonl it
// skipped are counted in the calibration's Skipped.
func LoadCalibration(dir, series string) (spec.Calibration, error) {
	c, _, err := ReadCalibration(dir, series)
	return c, err
}

// ReadCalibration is LoadCalibration that also returns what reading the
// run skipped, one line each (record.ReadReport.Notes).
func ReadCalibration(dir, series string) (spec.Calibration, []string, error) {
	var c spec.Calibration
	rd, err := record.Open(dir)
	if err != nil {
		return c, nil, fmt.Errorf("calibrate.from %s: %w", dir, err)
	}
	var meta record.Meta
	if err := rd.Meta(&meta); err != nil {
		return c, nil, fmt.Errorf("calibrate.from %s: %w", dir, err)
	}
	keys := meta.SeriesKeys()
	switch {
	case len(keys) == 0:
		return c, nil, fmt.Errorf("calibrate.from %s: run.json names no modes: not a cnperf run", dir)
	case !meta.Spec.RunsPingPong():
		return c, nil, fmt.Errorf("calibrate.from %s: a run of socket tests: calibration reads ping-pong samples", dir)
	}
	if series == "" {
		series = meta.Spec.ReferenceKey()
		if series == "" {
			series = keys[0]
		}
	}
	if !slices.Contains(keys, series) {
		return c, nil, fmt.Errorf("calibrate.series %s: run %s has no series %s (its run.json lists %s)", series, dir, series, strings.Join(keys, ", "))
	}
	contents, rep, err := rd.Contents()
	if err != nil {
		return c, nil, fmt.Errorf("calibrate.from %s: %w", dir, err)
	}
	var mine []record.Sample
	var measured []string // the series that have samples, in file order
	for _, s := range contents.PingPong {
		if s.Mode == series {
			mine = append(mine, s)
		}
		if !slices.Contains(measured, s.Mode) {
			measured = append(measured, s.Mode)
		}
	}
	if len(mine) == 0 {
		has := "no series has samples"
		if len(measured) > 0 {
			has = "series with samples: " + strings.Join(measured, ", ")
		}
		return c, nil, fmt.Errorf("calibrate.series %s: run %s has no samples of it (%s)", series, dir, has)
	}
	conc, err := concurrency(meta.Spec.PingPong.Concurrency, mine)
	if err != nil {
		return c, nil, fmt.Errorf("calibrate.series %s: run %s: %w", series, dir, err)
	}
	fit, err := FitPath(mine)
	if err != nil {
		return c, nil, fmt.Errorf("calibrate.series %s: run %s: %w", series, dir, err)
	}
	source := meta.Spec.Labels["source"]
	if source == "" {
		source = "cnperf"
	}
	hops := 1
	if source == "apachebench" {
		hops = 2
	}
	p := PathOf(fit, conc, hops)
	id := meta.ID
	if id == "" {
		id = filepath.Base(filepath.Clean(dir))
	}
	c = spec.Calibration{
		Run: id, Series: series, Source: source, Concurrency: conc,
		RTT: p.RTT.Round(time.Microsecond), RTTBasis: p.RTTBasis,
		BitsPerSecond: int64(math.Round(p.BytesPerSec * 8)),
		SmallSamples:  fit.Small, LargeSamples: fit.Large, Skipped: rep.Skipped + rep.Unlisted,
	}
	c.Bandwidth, c.ZoneDelay = c.Conditions()
	return c, rep.Notes(), nil
}

// concurrency is the requests the samples had in flight: the spec's, or,
// for an import whose rows differ (spec 0), their one `concurrency` label.
func concurrency(fromSpec int, samples []record.Sample) (int, error) {
	if fromSpec >= 1 {
		return fromSpec, nil
	}
	seen := ""
	for _, s := range samples {
		v := s.Labels["concurrency"]
		if seen != "" && v != seen {
			return 0, fmt.Errorf("its samples ran with concurrency %s and %s: calibrate from one", seen, v)
		}
		seen = v
	}
	n, err := strconv.Atoi(seen)
	if err != nil || n < 1 {
		return 0, errors.New("its concurrency is unknown (spec.pingpong.concurrency is 0, no concurrency label)")
	}
	return n, nil
}

// Calibrated returns s with its calibration applied: the reference run
// read and its path set as conditions.bandwidth and zone_delay, recorded in
// calibrate.derived. A spec without calibrate, or whose calibration was
// derived already (a stored spec run again), is returned as it is.
func Calibrated(s spec.Spec) (spec.Spec, error) {
	if s.Calibrate == nil || s.Calibrate.Derived != nil {
		return s, nil
	}
	c, err := LoadCalibration(s.Calibrate.From, s.Calibrate.Series)
	if err != nil {
		return s, err
	}
	return s.Calibrated(c)
}
