package spec

import (
	"strings"
	"testing"
	"time"
)

func TestCalibrateField(t *testing.T) {
	const head = "name: cal\nmodes: [bare, bridge]\n"
	for _, tc := range []struct {
		name, yaml, want string // want "" for no error
	}{
		{"from and series", "calibrate: {from: runs/ref, series: bare}\n", ""},
		{"from only", "calibrate: {from: runs/ref}\n", ""},
		{"no from", "calibrate: {series: bare}\n", "calibrate.from: give the reference run's directory"},
		{"unknown field", "calibrate: {from: runs/ref, sries: bare}\n", `unknown field "calibrate.sries"`},
		{"bandwidth too", "calibrate: {from: runs/ref}\nconditions: {bandwidth: 100mbit}\n", "calibrate: conditions.bandwidth 100mbit is set too"},
		{"zone_delay too", "calibrate: {from: runs/ref}\nconditions: {zone_delay: 1ms}\n", "calibrate: conditions.zone_delay 1ms is set too"},
		{"variants may", "calibrate: {from: runs/ref}\nvariants: [{name: a}, {name: far, zone_delay: 110ms}]\n", ""},
		{"derived, conditions agree", "calibrate: {from: gone, derived: {bandwidth: 1000kbit, zone_delay: 1ms}}\nconditions: {bandwidth: 1000kbit, zone_delay: 1ms}\n", ""},
		{"derived, conditions edited", "calibrate: {from: gone, derived: {bandwidth: 1000kbit, zone_delay: 1ms}}\nconditions: {bandwidth: 2mbit, zone_delay: 1ms}\n", "calibrate.derived: bandwidth 1000kbit and zone_delay 1ms, but conditions say \"2mbit\""},
		{"derived, bad rate", "calibrate: {from: gone, derived: {bandwidth: fast}}\n", `calibrate.derived.bandwidth "fast"`},
		{"derived, unknown field", "calibrate: {from: gone, derived: {rtt_ms: 3}}\n", `unknown field "calibrate.derived.rtt_ms"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(head+tc.yaml), "t.yaml")
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("error %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
}

func TestCalibrated(t *testing.T) {
	base := Default()
	base.Name = "cal"
	base.Calibrate = &Calibrate{From: "runs/ref"}
	path := Calibration{Run: "r1", Series: "bare", Source: "cnperf", Concurrency: 1, RTT: 1234567 * time.Nanosecond, RTTBasis: "latency", BitsPerSecond: 212_345_678}

	s, err := base.Calibrated(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Conditions.Bandwidth != "212346kbit" || s.Conditions.ZoneDelay != 617*time.Microsecond {
		t.Errorf("conditions %+v, want 212346kbit and 617µs", s.Conditions)
	}
	if d := s.Calibrate.Derived; d == nil || d.Bandwidth != s.Conditions.Bandwidth || d.ZoneDelay != s.Conditions.ZoneDelay || d.Run != "r1" {
		t.Errorf("derived %+v", d)
	}
	if base.Calibrate.Derived != nil || base.Conditions.Bandwidth != "" {
		t.Error("Calibrated changed the spec it was called on")
	}
	// The stored spec reads back and runs as it is.
	y, err := s.YAML()
	if err != nil {
		t.Fatal(err)
	}
	back, err := Parse(strings.NewReader(string(y)), "stored")
	if err != nil {
		t.Fatalf("stored spec: %v\n%s", err, y)
	}
	if *back.Calibrate.Derived != *s.Calibrate.Derived || back.Conditions != s.Conditions {
		t.Errorf("stored spec reads back as %+v, %+v", back.Calibrate.Derived, back.Conditions)
	}

	for _, tc := range []struct {
		name string
		edit func(*Calibration)
		want string
	}{
		{"negative rtt", func(c *Calibration) { c.RTT = -time.Millisecond }, "calibrate.from runs/ref: round trip -1ms: negative"},
		{"no rate", func(c *Calibration) { c.BitsPerSecond = 0 }, "calibrate.from runs/ref: bandwidth 0 bit/s: must be positive"},
		{"slow", func(c *Calibration) { c.BitsPerSecond = 4000 }, "derived bandwidth 4kbit: outside conditions.bandwidth's bounds: below 8 kbit/s"},
		{"fast", func(c *Calibration) { c.BitsPerSecond = 2e12 }, "outside conditions.bandwidth's bounds: above 1000gbit"},
		{"far", func(c *Calibration) { c.RTT = 3 * time.Hour }, "derived zone_delay 1h30m0s (round trip 3h0m0s): above conditions.zone_delay's 1h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := path
			tc.edit(&c)
			_, err := base.Calibrated(c)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
		})
	}
	own := base
	own.Conditions.Bandwidth = "1gbit"
	if _, err := own.Calibrated(path); err == nil || !strings.Contains(err.Error(), "conditions.bandwidth 1gbit is set too") {
		t.Errorf("a spec with its own bandwidth: %v", err)
	}
}
