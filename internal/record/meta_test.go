package record

import (
	"slices"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/spec"
)

func TestSeriesKeys(t *testing.T) {
	s := spec.Default()
	s.Modes = []string{"bare", "bridge", "overlay"}
	s.Drivers = []string{"netns", "docker"}
	all := []string{"bare", "bridge", "overlay", "bridge@docker", "overlay@docker"}
	tests := []struct {
		name     string
		recorded []ModeMeta
		want     []string
	}{
		{"nothing recorded: the spec's", nil, all},
		{"stopped after two labs: the rest follow", []ModeMeta{{Mode: "bare"}, {Mode: "bridge"}}, all},
		{"instances counted once", []ModeMeta{{Mode: "bare"}, {Mode: "bridge"}, {Mode: "bare", Instance: 1}}, all},
		{"recorded order wins", []ModeMeta{{Mode: "overlay"}, {Mode: "bare"}}, []string{"overlay", "bare", "bridge", "bridge@docker", "overlay@docker"}},
		{"a series the spec does not name is kept", []ModeMeta{{Mode: "docker"}}, append([]string{"docker"}, all...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := Meta{Spec: s, Modes: tc.recorded}
			if got := m.SeriesKeys(); !slices.Equal(got, tc.want) {
				t.Errorf("SeriesKeys() = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestSplitSeries(t *testing.T) {
	s := spec.Default()
	s.Modes = []string{"bare", "bridge"}
	s.Drivers = []string{"netns", "docker"}
	m := Meta{Spec: s, Modes: []ModeMeta{{Mode: "bridge@docker", Setup: "bridge", Driver: "docker"}, {Mode: "odd", Setup: "macvlan", Driver: "docker"}}}
	for _, tc := range []struct{ key, mode, driver string }{
		{"bridge@docker", "bridge", "docker"},
		{"odd", "macvlan", "docker"}, // recorded: no parsing of the key
		{"bare", "bare", "netns"},    // not recorded: the spec's
		{"x@y", "x", "y"},
	} {
		if mode, driver := m.SplitSeries(tc.key); mode != tc.mode || driver != tc.driver {
			t.Errorf("SplitSeries(%q) = %q, %q; want %q, %q", tc.key, mode, driver, tc.mode, tc.driver)
		}
	}
}

func TestCellRate(t *testing.T) {
	t0 := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	for _, tc := range []struct {
		c    Cell
		want float64
	}{
		{Cell{Start: t0, End: t0.Add(2 * time.Second), Samples: 100}, 50},
		{Cell{Start: t0, End: t0.Add(500 * time.Millisecond), Samples: 25}, 50},
		{Cell{Start: t0, End: t0.Add(4 * time.Second), Samples: 1}, 0.25},
		{Cell{Start: t0, Samples: 10}, 0},                          // unfinished
		{Cell{Start: t0, End: t0, Samples: 10}, 0},                 // zero length
		{Cell{Start: t0, End: t0.Add(time.Second)}, 0},             // no samples
		{Cell{Start: t0.Add(time.Second), End: t0, Samples: 5}, 0}, // clock went back
	} {
		if got := tc.c.Rate(); got != tc.want {
			t.Errorf("%+v: Rate() = %v, want %v", tc.c, got, tc.want)
		}
	}
}
