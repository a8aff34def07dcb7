package spec

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Calibrate makes the lab's underlay as fast as a reference run's network:
// when the run starts, the round trip and bandwidth measured in the
// reference (analysis.Calibrated) become conditions.bandwidth and
// conditions.zone_delay. The spec package only holds and checks the field
// and applies derived values: reading a run needs the record package,
// which imports this one.
type Calibrate struct {
	// From is the reference run's directory: a cnperf run or an imported
	// ppbench or apachebench file (cnperf import).
	From string `yaml:"from" json:"from"`
	// Series is the reference's series whose samples are read; default
	// the reference run's own reference.
	Series string `yaml:"series,omitempty" json:"series,omitempty"`
	// Derived is what the calibration found and applied. The runner fills
	// it, so the stored spec says where its bandwidth and delay came from;
	// a spec that carries it is applied as it is, without the reference
	// run (remove it to derive again).
	Derived *Calibration `yaml:"derived,omitempty" json:"derived,omitempty"`
}

// Calibration is a reference path's round trip and bandwidth, and the
// conditions they become.
type Calibration struct {
	Run         string `yaml:"run" json:"run"`       // the reference run's id
	Series      string `yaml:"series" json:"series"` // its series the samples came from
	Source      string `yaml:"source" json:"source"` // cnperf, ppbench or apachebench
	Concurrency int    `yaml:"concurrency" json:"concurrency"`
	// RTT is the round trip of one request's path; RTTBasis says how it
	// was found: "latency" (one request in flight: the smallest messages'
	// time) or "throughput" (several in flight: their time over the
	// concurrency, a lower bound; see analysis.EstimatePath).
	RTT      time.Duration `yaml:"rtt" json:"rtt_ns"`
	RTTBasis string        `yaml:"rtt_basis" json:"rtt_basis"`
	// BitsPerSecond is the bottleneck's rate from the largest messages.
	BitsPerSecond int64 `yaml:"bits_per_second" json:"bits_per_second"`
	SmallSamples  int   `yaml:"small_samples" json:"small_samples"` // samples the round trip rests on
	LargeSamples  int   `yaml:"large_samples" json:"large_samples"` // samples the bandwidth rests on
	// Skipped counts the lines of the reference's samples.jsonl left
	// out: damaged, or of a series its run.json does not list.
	Skipped int `yaml:"skipped_lines,omitempty" json:"skipped_lines,omitempty"`
	// What was applied: conditions.bandwidth and conditions.zone_delay.
	Bandwidth string        `yaml:"bandwidth" json:"bandwidth"`
	ZoneDelay time.Duration `yaml:"zone_delay" json:"zone_delay_ns"`
}

// Conditions returns the conditions a path with this round trip and rate
// becomes. The whole round trip goes into the zone delay, half each way:
// the lab delays only between its zones, and zone_hosts' default puts the
// topology's last host (pong; a socket test's server) in the second zone,
// so the path a ping-pong sample times, ping→pong, crosses it once each
// way while siege→ping is not delayed.
func (c Calibration) Conditions() (bandwidth string, zoneDelay time.Duration) {
	return RateString(c.BitsPerSecond), (c.RTT / 2).Round(time.Microsecond)
}

// RateString writes bits per second as a tc rate in whole kbit, which
// conditions.ParseRate reads back within 1 kbit/s.
func RateString(bitsPerSecond int64) string {
	return fmt.Sprintf("%dkbit", int64(math.Round(float64(bitsPerSecond)/1000)))
}

// Calibrated returns the spec with c applied: conditions.bandwidth and
// zone_delay set, and c recorded as calibrate.derived. Derived values
// outside the conditions' bounds are refused, naming the field.
func (s Spec) Calibrated(c Calibration) (Spec, error) {
	if s.Calibrate == nil {
		return s, errors.New("calibrate: the spec has none")
	}
	if err := s.validateCalibrate(); err != nil {
		return s, err // the spec's own bandwidth or delay is not overwritten
	}
	from := s.Calibrate.From
	if c.RTT < 0 {
		return s, fmt.Errorf("calibrate.from %s: round trip %s: negative, the samples do not fit time = round trip + size / bandwidth", from, c.RTT)
	}
	if c.BitsPerSecond <= 0 {
		return s, fmt.Errorf("calibrate.from %s: bandwidth %d bit/s: must be positive", from, c.BitsPerSecond)
	}
	c.Bandwidth, c.ZoneDelay = c.Conditions()
	if _, err := conditions.ParseRate(c.Bandwidth); err != nil {
		return s, fmt.Errorf("calibrate.from %s: derived bandwidth %s: outside conditions.bandwidth's bounds: %w", from, c.Bandwidth, err)
	}
	if c.ZoneDelay > conditions.MaxZoneDelay {
		return s, fmt.Errorf("calibrate.from %s: derived zone_delay %s (round trip %s): above conditions.zone_delay's %s", from, c.ZoneDelay, c.RTT, conditions.MaxZoneDelay)
	}
	cal := *s.Calibrate
	cal.Derived = &c
	s.Calibrate = &cal
	s.Conditions.Bandwidth, s.Conditions.ZoneDelay = c.Bandwidth, c.ZoneDelay
	if err := s.validateCalibrate(); err != nil {
		return s, err
	}
	return s, nil
}

// validateCalibrate checks the calibrate field: a reference to read, and
// no bandwidth or zone delay of the spec's own that calibration would
// overwrite; or, once derived, conditions that still say what was
// derived. Variants may still set either: theirs apply over it.
func (s Spec) validateCalibrate() error {
	c := s.Calibrate
	if c == nil {
		return nil
	}
	if c.From == "" {
		return errors.New("calibrate.from: give the reference run's directory")
	}
	d := c.Derived
	if d == nil {
		switch {
		case s.Conditions.Bandwidth != "":
			return fmt.Errorf("calibrate: conditions.bandwidth %s is set too: calibration derives it; remove one", s.Conditions.Bandwidth)
		case s.Conditions.ZoneDelay != 0:
			return fmt.Errorf("calibrate: conditions.zone_delay %s is set too: calibration derives it; remove one", s.Conditions.ZoneDelay)
		}
		return nil
	}
	if _, err := conditions.ParseRate(d.Bandwidth); err != nil {
		return fmt.Errorf("calibrate.derived.bandwidth %q: %w", d.Bandwidth, err)
	}
	if d.ZoneDelay < 0 || d.ZoneDelay > conditions.MaxZoneDelay {
		return fmt.Errorf("calibrate.derived.zone_delay %s: want 0 to %s", d.ZoneDelay, conditions.MaxZoneDelay)
	}
	if s.Conditions.Bandwidth != d.Bandwidth || s.Conditions.ZoneDelay != d.ZoneDelay {
		return fmt.Errorf("calibrate.derived: bandwidth %s and zone_delay %s, but conditions say %q and %s: edit neither, or remove calibrate.derived and conditions' two to derive again",
			d.Bandwidth, d.ZoneDelay, s.Conditions.Bandwidth, s.Conditions.ZoneDelay)
	}
	return nil
}
