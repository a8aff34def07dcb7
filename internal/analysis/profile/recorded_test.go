package profile

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// recorded is a real run whose cells were sampled with perf alongside
// (its README says how): rr and stream on bare, bridge, overlay and
// overlay-encrypted. The report's tests read it as a run.
const recorded = "../../report/testdata/profiled"

func readRecorded(t *testing.T) record.Meta {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(recorded, record.MetaFile))
	if err != nil {
		t.Fatal(err)
	}
	var m record.Meta
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestRecordedStacksLandInNamedParts: in every recorded cell nearly all of
// the lab's samples (all but idle and outside the lab) land in a named
// part, and the parts a mode adds show where that mode runs and nowhere
// else.
func TestRecordedStacksLandInNamedParts(t *testing.T) {
	m := Default()
	// Parts only some modes have: which of the modes must show them in
	// every cell, and which must not show them at all.
	only := map[string]struct{ in, not []string }{
		"TUN and the user-space router": {in: []string{"overlay-encrypted"}, not: []string{"bare", "bridge", "overlay"}},
		"encryption":                    {in: []string{"overlay-encrypted"}, not: []string{"bare", "overlay"}},
		"VXLAN / UDP tunnel":            {not: []string{"bare", "bridge", "overlay-encrypted"}},
		"netfilter: NAT":                {not: []string{"bare"}},
	}
	meta := readRecorded(t)
	if len(meta.Cells) != 16 {
		t.Fatalf("%d cells", len(meta.Cells))
	}
	for _, c := range meta.Cells {
		s, err := record.ReadStacks(filepath.Join(recorded, c.Profile.File))
		if err != nil {
			t.Fatal(err)
		}
		parts, where := m.Attribute(s)
		var lab, named uint64
		for p, n := range parts {
			if p != Idle && p != Outside {
				lab += n
			}
			if p != Idle && p != Outside && p != Other {
				named += n
			}
		}
		if lab == 0 || float64(named) < 0.95*float64(lab) {
			t.Errorf("cell %d (%s %s): %d of %d of the lab's samples in named parts: %v", c.Index, c.Mode, c.Case, named, lab, parts)
		}
		for part, o := range only {
			for _, mode := range o.in {
				if c.Mode == mode && parts[part] == 0 {
					t.Errorf("cell %d (%s %s): no samples in %q", c.Index, c.Mode, c.Case, part)
				}
			}
			for _, mode := range o.not {
				if c.Mode == mode && parts[part] != 0 {
					t.Errorf("cell %d (%s %s): %d samples in %q", c.Index, c.Mode, c.Case, parts[part], part)
				}
			}
		}
		if c.Mode == "overlay-encrypted" && where[record.StackRouter] == 0 {
			t.Errorf("cell %d (%s %s): %d samples in the router", c.Index, c.Mode, c.Case, where[record.StackRouter])
		}
	}
}

// TestRecordedAttributionSums: on the recorded run, per case and series,
// the parts' differences with the reference sum to the total's, the named
// parts, other and outside to the total, per cell and so on average.
func TestRecordedAttributionSums(t *testing.T) {
	meta := readRecorded(t)
	var obs []analysis.Observation
	for _, c := range meta.Cells {
		// The work as the cases read it, from the cell's kernel record
		// (the bytes it moved) and its samples' requests: enough to check
		// sums, which hold whatever the work.
		o := analysis.Observation{Cell: c.Index, Values: map[string]float64{}, Moved: c.Kernel.Bytes}
		if c.Case == "rr" {
			o.Values["trans_per_s"] = 1000
		}
		obs = append(obs, o)
	}
	tabs, err := Attribute(Input{Dir: recorded, Meta: meta, Obs: obs, RefOf: analysis.One("bare"), Map: Default()})
	if err != nil {
		t.Fatal(err)
	}
	if len(tabs) != 2 || tabs[0].Case != "rr" || tabs[0].PerGB || tabs[1].Case != "stream" || !tabs[1].PerGB || len(tabs[0].Series) != 4 || len(tabs[0].Refs) != 3 {
		t.Fatalf("tables: %+v", tabs)
	}
	for _, tab := range tabs {
		for _, s := range tab.Series {
			var parts, diffs float64
			val := map[string]float64{}
			diff := map[string]float64{}
			for _, r := range tab.Rows {
				val[r.Name], diff[r.Name] = r.Values[s].Mean, r.Diffs[s].Diff
				if r.Kind == KindPart {
					parts += r.Values[s].Mean
					diffs += r.Diffs[s].Diff
				}
			}
			total := val[rowTotal]
			if !near(parts, val[rowNamed]) || math.Abs(val[rowNamed]+val[Other]+val[Outside]-total) > 1e-9*total {
				t.Errorf("%s %s: parts %g, named %g, other %g, outside %g, total %g", tab.Case, s, parts, val[rowNamed], val[Other], val[Outside], total)
			}
			if _, ok := tab.Refs[s]; ok && math.Abs(diffs+diff[Other]+diff[Outside]-diff[rowTotal]) > 1e-9*total {
				t.Errorf("%s %s: the differences sum to %g, the total's is %g", tab.Case, s, diffs+diff[Other]+diff[Outside], diff[rowTotal])
			}
		}
	}
}
