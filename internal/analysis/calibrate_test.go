package analysis_test

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/importer"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
)

// synthetic draws samples of a path with a known round trip and rate:
// duration = rtt + c·size/B, times lognormal noise of sd noise, and a
// share of stalls (a request that waited 3 to 10 round trips more).
func synthetic(seed uint64, sizes []int, reps int, rttMS, bytesPerSec float64, c int, noise, stalls float64) []record.Sample {
	r := rand.New(rand.NewPCG(seed, 1))
	var out []record.Sample
	for _, size := range sizes {
		for range reps {
			d := (rttMS + float64(c)*float64(size)*1000/bytesPerSec) * math.Exp(noise*r.NormFloat64())
			if r.Float64() < stalls {
				d += rttMS * (3 + 7*r.Float64())
			}
			out = append(out, ok("bare", size, d, 0))
		}
	}
	return out
}

// uniformSizes draws n sizes uniformly from lo..hi, as cnperf's plan does.
func uniformSizes(seed uint64, n, lo, hi int) []int {
	r := rand.New(rand.NewPCG(seed, 2))
	sizes := make([]int, n)
	for i := range sizes {
		sizes[i] = lo + r.IntN(hi-lo+1)
	}
	return sizes
}

// kratzkeSizes are Kratzke's (2015) apachebench sizes, 10 B to 1 MB.
var kratzkeSizes = func() []int {
	var s []int
	for _, decade := range []int{10, 100, 1000, 10000, 100000} {
		for k := 1; k <= 9; k++ {
			s = append(s, k*decade)
		}
	}
	return append(s, 1000000)
}()

func TestFitPathRecoversKnownPaths(t *testing.T) {
	for _, tc := range []struct {
		name        string
		sizes       []int
		reps        int
		rttMS, bps  float64 // bytes/s
		c           int
		noise, stal float64
	}{
		{"lab bare, uniform sweep", uniformSizes(1, 2000, 10, 1000000), 3, 0.37, 1.2e9, 1, 0.05, 0.02},
		{"m3.medium-like, Kratzke's (2015) sizes", kratzkeSizes, 20, 1.2, 26e6, 1, 0.05, 0.02},
		{"cross-region", kratzkeSizes, 10, 230, 5e6, 1, 0.03, 0.01},
		{"concurrency 50", kratzkeSizes, 10, 62, 26.5e6, 50, 0.05, 0.02},
		{"few samples, none small", uniformSizes(2, 120, 10, 1000000), 1, 0.5, 100e6, 1, 0.02, 0},
		{"noisy", kratzkeSizes, 30, 2, 12.5e6, 1, 0.15, 0.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fit, err := analysis.FitPath(synthetic(7, tc.sizes, tc.reps, tc.rttMS, tc.bps, tc.c, tc.noise, tc.stal))
			if err != nil {
				t.Fatal(err)
			}
			// The noise is multiplicative around the model: its median,
			// which the fit estimates, is the model's.
			if e := math.Abs(fit.FloorMS/tc.rttMS - 1); e > 0.03 {
				t.Errorf("floor %.4g ms, want %.4g ms (off by %.1f %%)", fit.FloorMS, tc.rttMS, 100*e)
			}
			bps := float64(tc.c) * 1000 / fit.MSPerByte
			t.Logf("floor %+.2f %%, bandwidth %+.2f %% (%d small, %d large samples)", 100*(fit.FloorMS/tc.rttMS-1), 100*(bps/tc.bps-1), fit.Small, fit.Large)
			if e := math.Abs(bps/tc.bps - 1); e > 0.03 {
				t.Errorf("bandwidth %.4g B/s, want %.4g (off by %.1f %%)", bps, tc.bps, 100*e)
			}
			if fit.Small < analysis.CalibrateMinSmall || fit.Large < analysis.CalibrateMinLarge || fit.LargeMin < analysis.CalibrateSpread*fit.SmallMax {
				t.Errorf("fit rests on %d small (to %d B) and %d large (from %d B) samples", fit.Small, fit.SmallMax, fit.Large, fit.LargeMin)
			}
		})
	}
}

func TestFitPathRefusesNonsense(t *testing.T) {
	flat := []record.Sample{}
	for _, size := range kratzkeSizes {
		flat = append(flat, ok("bare", size, 5, 0))
	}
	failed := synthetic(1, kratzkeSizes, 2, 1, 1e6, 1, 0, 0)
	for i := range failed {
		failed[i].Code = 503
	}
	shrinking := []record.Sample{}
	for _, size := range kratzkeSizes {
		shrinking = append(shrinking, ok("bare", size, 10-float64(size)/200000, 0))
	}
	for _, tc := range []struct {
		name    string
		samples []record.Sample
		want    string
	}{
		{"none", nil, "0 successful samples"},
		{"two", []record.Sample{ok("bare", 10, 1, 0), ok("bare", 1e6, 9, 0)}, "fewer than 3"},
		{"all failed", failed, "0 successful samples"},
		{"narrow sizes", synthetic(1, []int{2000, 3000, 4000, 5000, 6000}, 5, 1, 1e6, 1, 0, 0), "at least 8 times"},
		{"flat", flat, "took no longer"},
		{"shrinking", shrinking, "took no longer"},
		{"size term is noise", synthetic(1, kratzkeSizes, 5, 100, 1e12, 1, 0, 0), "noise"},
		{"negative floor", []record.Sample{ok("bare", 1000, 0.1, 0), ok("bare", 1000, 0.1, 0), ok("bare", 1e6, 1000, 0)}, "negative"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := analysis.FitPath(tc.samples)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func TestPathOf(t *testing.T) {
	fit := analysis.PathFit{FloorMS: 62, MSPerByte: 1.0 / 530} // 530 B/ms per request
	for _, tc := range []struct {
		c, hops int
		rtt     time.Duration
		basis   string
		bps     float64
	}{
		{1, 1, 62 * time.Millisecond, "latency", 530e3},
		{1, 2, 31 * time.Millisecond, "latency", 530e3},
		{50, 2, 1240 * time.Microsecond, "throughput", 50 * 530e3},
		{50, 1, 1240 * time.Microsecond, "throughput", 50 * 530e3},
	} {
		p := analysis.PathOf(fit, tc.c, tc.hops)
		if p.RTT.Round(time.Microsecond) != tc.rtt || p.RTTBasis != tc.basis || math.Abs(p.BytesPerSec/tc.bps-1) > 1e-9 {
			t.Errorf("c %d hops %d: %+v, want rtt %s (%s), %g B/s", tc.c, tc.hops, p, tc.rtt, tc.basis, tc.bps)
		}
	}
}

// writeRun stores samples as a cnperf run of spec s in a new directory.
func writeRun(t *testing.T, s spec.Spec, samples []record.Sample) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "ref")
	run, err := record.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range samples {
		if err := run.Append(x); err != nil {
			t.Fatal(err)
		}
	}
	if err := run.WriteMeta(record.Meta{Format: 1, ID: "r-test", Status: "complete", Spec: s}); err != nil {
		t.Fatal(err)
	}
	if err := run.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestLoadCalibration(t *testing.T) {
	s := spec.Default()
	s.Name, s.Modes = "ref", []string{"bare", "bridge"}
	samples := synthetic(3, kratzkeSizes, 10, 0.8, 12.5e6, 1, 0.03, 0) // 100 Mbit/s
	for i := range samples {
		samples[i].Workload = "pingpong"
	}
	// Samples of a series run.json does not list are left out, counted.
	alien := ok("weave", 1000, 1e6, 1e6)
	dir := writeRun(t, s, append(samples, alien, alien))

	c, notes, err := analysis.ReadCalibration(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if c.Skipped != 2 || len(notes) != 1 || !strings.Contains(notes[0], `samples.jsonl: 2 lines of series that run.json does not list ("weave")`) {
		t.Errorf("skipped %d, notes %q", c.Skipped, notes)
	}
	if c.Run != "r-test" || c.Series != "bare" || c.Source != "cnperf" || c.Concurrency != 1 || c.RTTBasis != "latency" {
		t.Errorf("calibration %+v", c)
	}
	if e := math.Abs(float64(c.RTT)/float64(800*time.Microsecond) - 1); e > 0.03 {
		t.Errorf("rtt %s, want 0.8ms", c.RTT)
	}
	if e := math.Abs(float64(c.BitsPerSecond)/100e6 - 1); e > 0.03 {
		t.Errorf("bandwidth %d bit/s, want 100 Mbit/s", c.BitsPerSecond)
	}
	if c.ZoneDelay != (c.RTT/2).Round(time.Microsecond) || c.Bandwidth != spec.RateString(c.BitsPerSecond) {
		t.Errorf("conditions %s, %s from rtt %s, %d bit/s", c.Bandwidth, c.ZoneDelay, c.RTT, c.BitsPerSecond)
	}

	// Applied to a spec: the conditions are set and the stored spec
	// says where they came from, and a stored spec applies as it is.
	run := spec.Default()
	run.Name, run.Modes = "cal", []string{"bare", "overlay-userspace"}
	run.Calibrate = &spec.Calibrate{From: dir}
	got, err := analysis.Calibrated(run)
	if err != nil {
		t.Fatal(err)
	}
	if got.Conditions.Bandwidth != c.Bandwidth || got.Conditions.ZoneDelay != c.ZoneDelay || got.Calibrate.Derived == nil || *got.Calibrate.Derived != c {
		t.Errorf("calibrated spec: conditions %+v, calibrate %+v", got.Conditions, got.Calibrate)
	}
	if run.Calibrate.Derived != nil {
		t.Error("Calibrated changed its argument's calibrate")
	}
	if err := got.Validate(); err != nil {
		t.Errorf("calibrated spec does not validate: %v", err)
	}
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	again, err := analysis.Calibrated(got)
	if err != nil || again.Conditions != got.Conditions {
		t.Errorf("a derived calibration, its run gone: %v, %+v", err, again.Conditions)
	}
}

func TestLoadCalibrationErrors(t *testing.T) {
	s := spec.Default()
	s.Name, s.Modes = "ref", []string{"bare"}
	few := writeRun(t, s, []record.Sample{ok("bare", 10, 1, 0), ok("bare", 1e6, 9, 0)})
	two := s
	two.Modes = []string{"bare", "bridge"}
	listed := writeRun(t, two, []record.Sample{ok("bare", 10, 1, 0), ok("bare", 1e6, 9, 0)})
	socket := spec.Default()
	socket.Name, socket.Modes = "sock", []string{"bare"}
	socket.Tests = []workload.Test{{Workload: "rr"}}
	for _, tc := range []struct {
		dir, series, want string
	}{
		{filepath.Join(t.TempDir(), "missing"), "", "calibrate.from "},
		{t.TempDir(), "", "is not a cnperf run"},
		{few, "bridge", "calibrate.series bridge: run " + few + " has no series bridge (its run.json lists bare)"},
		{few, "", "calibrate.series bare: run " + few + ": 2 successful samples"},
		// run.json lists it, the samples have none: say which have.
		{listed, "bridge", "calibrate.series bridge: run " + listed + " has no samples of it (series with samples: bare)"},
		{writeRun(t, two, nil), "bridge", "has no samples of it (no series has samples)"},
		{writeRun(t, socket, nil), "", "a run of socket tests"},
	} {
		_, err := analysis.LoadCalibration(tc.dir, tc.series)
		if err == nil || !strings.Contains(err.Error(), tc.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("LoadCalibration(%s, %q) = %v, want one line with %q", tc.dir, tc.series, err, tc.want)
		}
	}
}

// The importers' testdata, imported as `cnperf import` does, calibrates:
// ppbench's bare has two 1000-byte rows (3 and 4 ms) and one of 250 kB
// (40.2 ms), measured with concurrency 10.
func TestLoadCalibrationImportedPPBench(t *testing.T) {
	f, err := os.Open("../report/importer/testdata/ppbench.csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	samples, info, err := importer.PPBench(f, "ppbench.csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "kratzke")
	if err := importer.WriteRun(dir, samples, info, ""); err != nil {
		t.Fatal(err)
	}
	c, err := analysis.LoadCalibration(dir, "bare")
	if err != nil {
		t.Fatal(err)
	}
	// The fit solves floor = 3.5 − 1000·slope, slope = (40.2 − floor) /
	// 250000: slope = 36.7/249000 ms/B, floor 3.353 ms; over 10 in flight
	// the round trip is 335 µs and the rate 10/slope.
	wantBits := 10 * 249000 / 36.7e-3 * 8
	if c.Source != "ppbench" || c.Concurrency != 10 || c.RTTBasis != "throughput" || c.RTT != 335*time.Microsecond ||
		math.Abs(float64(c.BitsPerSecond)/wantBits-1) > 1e-3 || c.SmallSamples != 2 || c.LargeSamples != 1 {
		t.Errorf("calibration %+v, want rtt 335µs, %.0f bit/s", c, wantBits)
	}
	if _, err := analysis.LoadCalibration(dir, "docker"); err == nil {
		t.Error("docker's rows (one size that answered, 5000 B, and 2000 B) calibrated")
	}
}
