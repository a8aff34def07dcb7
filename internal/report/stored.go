package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/spec"
)

// StoredFormat names the layout of a stored summary of a run's findings.
const StoredFormat = "cnperf-findings/1"

// Bounds of a stored summary: it is read from files anyone may edit.
const (
	MaxStoredBytes  = 1 << 20
	MaxStoredClaims = 10_000 // claims × cases: 100 claims of 100 cases
	maxStoredText   = 1024
	maxStoredUnits  = 1 << 30
	maxChanges      = 8
)

// StoredFindings is a run's findings in a few kilobytes, kept where the
// run's samples are not (docs/findings/): the run, its machine and, per
// claim and case, the ratio and its interval, so the claims can be judged
// again (Judge) when their ranges change.
type StoredFindings struct {
	Format  string        `json:"format"`
	Preset  string        `json:"preset"` // the spec whose claims were judged
	Run     string        `json:"run"`    // the run's spec name and id
	Date    time.Time     `json:"date"`
	Cnperf  string        `json:"cnperf"` // the version, and commit, that ran it
	Machine StoredMachine `json:"machine"`
	// Imported is the description of imported data (a paper's own), ""
	// for a run cnperf measured.
	Imported string `json:"imported,omitempty"`
	Busy     string `json:"busy,omitempty"` // why the machine was busy, "" when it was not
	// Changed lists the spec's fields where the run differs from the
	// preset's (a shortened or narrowed run), at most maxChanges.
	Changed []string      `json:"changed,omitempty"`
	Claims  []StoredClaim `json:"claims"`
}

// StoredMachine is the machine a run measured on.
type StoredMachine struct {
	CPU    string `json:"cpu"`
	Cores  int    `json:"cores"`
	Kernel string `json:"kernel"`
}

// StoredClaim is one claim's ratio on one case: what the claim compared
// (so a changed claim shows as stale) and the figures.
type StoredClaim struct {
	ID      string `json:"id"`
	Metric  string `json:"metric"`
	Series  string `json:"series"`
	Against string `json:"against"`
	Test    string `json:"test,omitempty"`
	Sizes   []int  `json:"sizes,omitempty"`
	Variant string `json:"variant,omitempty"` // explain.variant
	Case    string `json:"case,omitempty"`
	StoredInterval
	OnVariant *StoredInterval `json:"on_variant,omitempty"`
}

// StoredInterval is an analysis.Interval that JSON can hold: no ratio or
// no interval is null, not NaN.
type StoredInterval struct {
	Ratio     *float64    `json:"ratio"`
	CI        *[2]float64 `json:"ci"`
	Instances int         `json:"instances"`
	Units     int         `json:"units"`
}

// Store summarises a run's measured claims, judged on the claims of the
// spec preset: its name, and the fields where the run's spec differs
// from it.
func Store(run Run, ms []Measured, preset spec.Spec) StoredFindings {
	m := run.Meta
	s := StoredFindings{Format: StoredFormat, Preset: preset.Name, Run: m.Spec.Name + " " + m.ID, Date: m.Started.UTC().Truncate(time.Second),
		Cnperf: m.Cnperf, Machine: StoredMachine{CPU: m.Machine.CPUModel, Cores: m.Machine.CPUs, Kernel: m.Machine.Kernel}}
	if m.Status == "imported" {
		s.Imported = m.Spec.Description
	} else {
		if d := m.Disturbance(); d.Disturbed {
			s.Busy = d.Why()
		}
		s.Changed = specChanges(m.Spec, preset)
	}
	for _, x := range ms {
		c := StoredClaim{ID: x.Claim.ID, Metric: x.Claim.Metric, Series: x.Claim.Series, Against: x.Claim.Against, Test: x.Claim.Test,
			Sizes: x.Claim.Sizes, Case: x.Case, StoredInterval: storeInterval(x.Interval)}
		if x.Claim.Explain != nil {
			c.Variant = x.Claim.Explain.Variant
		}
		if x.Variant != nil {
			v := storeInterval(*x.Variant)
			c.OnVariant = &v
		}
		s.Claims = append(s.Claims, c)
	}
	return s
}

func storeInterval(iv analysis.Interval) StoredInterval {
	s := StoredInterval{Instances: iv.Instances, Units: iv.Units}
	if !math.IsNaN(iv.Ratio) && !math.IsInf(iv.Ratio, 0) {
		s.Ratio = &iv.Ratio
		if iv.Known() {
			s.CI = &[2]float64{iv.Lo, iv.Hi}
		}
	}
	return s
}

func (s StoredInterval) interval() analysis.Interval {
	iv := analysis.Interval{Ratio: math.NaN(), Lo: math.NaN(), Hi: math.NaN(), Instances: s.Instances, Units: s.Units}
	if s.Ratio != nil {
		iv.Ratio = *s.Ratio
	}
	if s.CI != nil {
		iv.Lo, iv.Hi = s.CI[0], s.CI[1]
	}
	return iv
}

// specChanges names the fields where a run's spec differs from the
// preset's ("pingpong.coverage", "tests[0].duration"), at most
// maxChanges and "..." after them.
func specChanges(run, preset spec.Spec) []string {
	var tree [2]any
	for i, s := range []spec.Spec{run, preset} {
		b, _ := json.Marshal(s) // a spec always marshals: it came from JSON or YAML
		_ = json.Unmarshal(b, &tree[i])
	}
	var out []string
	var walk func(path string, a, b any)
	walk = func(path string, a, b any) {
		am, aok := a.(map[string]any)
		bm, bok := b.(map[string]any)
		al, lok := a.([]any)
		bl, blok := b.([]any)
		switch {
		case len(out) > maxChanges:
		case aok && bok:
			keys := slices.AppendSeq(slices.Collect(maps.Keys(am)), maps.Keys(bm))
			slices.Sort(keys)
			for _, k := range slices.Compact(keys) {
				if k != "claims" && k != "description" && k != "labels" { // judged or described, not run
					walk(strings.TrimPrefix(path+"."+k, "."), am[k], bm[k])
				}
			}
		case lok && blok && len(al) == len(bl):
			for i := range al {
				walk(path+"["+strconv.Itoa(i)+"]", al[i], bl[i])
			}
		case !reflect.DeepEqual(a, b):
			out = append(out, path)
		}
	}
	walk("", tree[0], tree[1])
	if len(out) > maxChanges {
		out = append(out[:maxChanges], "...")
	}
	return out
}

// ReadStored reads a stored summary strictly: one JSON document of the
// format, no unknown field, every text, count and figure within bounds.
// name says where it came from in errors.
func ReadStored(r io.Reader, name string) (StoredFindings, error) {
	var s StoredFindings
	b, err := io.ReadAll(io.LimitReader(r, MaxStoredBytes+1))
	if err != nil {
		return s, fmt.Errorf("findings %s: %w", name, err)
	}
	if len(b) > MaxStoredBytes {
		return s, fmt.Errorf("findings %s: larger than %d bytes", name, MaxStoredBytes)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, fmt.Errorf("findings %s: %v", name, err)
	}
	if dec.More() {
		return s, fmt.Errorf("findings %s: more than one JSON document", name)
	}
	if err := s.check(); err != nil {
		return s, fmt.Errorf("findings %s: %w", name, err)
	}
	return s, nil
}

// check refuses what Store never writes.
func (s StoredFindings) check() error {
	text := func(field, v string, need bool) error {
		if len(v) > maxStoredText || (need && v == "") {
			return fmt.Errorf("%s: want 1..%d bytes", field, maxStoredText)
		}
		return nil
	}
	switch {
	case s.Format != StoredFormat:
		return fmt.Errorf("format %.64q: this cnperf reads %s", s.Format, StoredFormat)
	case len(s.Claims) > MaxStoredClaims:
		return fmt.Errorf("claims: %d, more than %d", len(s.Claims), MaxStoredClaims)
	case len(s.Changed) > maxChanges+1:
		return fmt.Errorf("changed: %d fields, more than %d", len(s.Changed), maxChanges+1)
	case s.Machine.Cores < 0 || s.Machine.Cores > maxStoredUnits:
		return fmt.Errorf("machine.cores %d: outside 0..%d", s.Machine.Cores, maxStoredUnits)
	}
	for _, e := range []error{text("preset", s.Preset, true), text("run", s.Run, true), text("cnperf", s.Cnperf, false),
		text("machine.cpu", s.Machine.CPU, false), text("machine.kernel", s.Machine.Kernel, false), text("imported", s.Imported, false), text("busy", s.Busy, false)} {
		if e != nil {
			return e
		}
	}
	for i, c := range s.Changed {
		if err := text(fmt.Sprintf("changed[%d]", i), c, true); err != nil {
			return err
		}
	}
	for i, c := range s.Claims {
		if err := c.check(); err != nil {
			return fmt.Errorf("claims[%d].%w", i, err)
		}
		if slices.ContainsFunc(s.Claims[:i], func(o StoredClaim) bool { return o.ID == c.ID && o.Case == c.Case }) {
			return fmt.Errorf("claims[%d]: claim %.64q, case %.64q there twice", i, c.ID, c.Case)
		}
	}
	return nil
}

func (c StoredClaim) check() error {
	for _, f := range []struct{ field, v string }{{"id", c.ID}, {"metric", c.Metric}, {"series", c.Series}, {"against", c.Against}} {
		if f.v == "" || len(f.v) > spec.MaxLabelBytes {
			return fmt.Errorf("%s: want 1..%d bytes", f.field, spec.MaxLabelBytes)
		}
	}
	if len(c.Test) > spec.MaxLabelBytes || len(c.Variant) > spec.MaxLabelBytes || len(c.Case) > maxStoredText {
		return fmt.Errorf("test, variant, case: longer than allowed")
	}
	if c.Sizes != nil && (len(c.Sizes) != 2 || c.Sizes[0] < 1 || c.Sizes[0] > c.Sizes[1]) {
		return fmt.Errorf("sizes %v: want [LO, HI], 1 <= LO <= HI", c.Sizes)
	}
	if err := c.StoredInterval.check(); err != nil {
		return err
	}
	if c.OnVariant != nil {
		if c.Variant == "" {
			return fmt.Errorf("on_variant: a ratio on no variant")
		}
		if err := c.OnVariant.check(); err != nil {
			return fmt.Errorf("on_variant.%w", err)
		}
	}
	return nil
}

func (s StoredInterval) check() error {
	ok := func(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }
	switch {
	case s.Ratio != nil && !ok(*s.Ratio):
		return fmt.Errorf("ratio %v: want a finite ratio >= 0, or null", *s.Ratio)
	case s.CI != nil && (s.Ratio == nil || !(ok(s.CI[0]) && ok(s.CI[1]) && s.CI[0] <= *s.Ratio && *s.Ratio <= s.CI[1])):
		return fmt.Errorf("ci %v: want finite [LO, HI] around the ratio", *s.CI)
	case s.Units < 0 || s.Units > maxStoredUnits || s.Instances < 0 || s.Instances > maxStoredUnits:
		return fmt.Errorf("units, instances: want 0..%d", maxStoredUnits)
	}
	return nil
}

// Rejudged is one claim of a preset against a stored run: its findings
// judged anew, or why there are none.
type Rejudged struct {
	Claim    spec.Claim // Against resolved
	Findings []Finding
	// Stale says what changed since the run: the claim's metric, series,
	// test or sizes; "" when the stored figures still fit it.
	Stale string
	// Missing: the run has no figure of the claim (run --modes left its
	// series out, or the claim is newer than the run).
	Missing bool
}

// Rejudge judges the preset's resolved claims on a stored run: the stored
// ratios held against the ranges and explanations the claims have now.
func Rejudge(s StoredFindings, claims []spec.Claim) []Rejudged {
	out := make([]Rejudged, len(claims))
	for i, c := range claims {
		out[i].Claim = c
		variant := ""
		if c.Explain != nil {
			variant = c.Explain.Variant
		}
		for _, st := range s.Claims {
			if st.ID != c.ID {
				continue
			}
			if out[i].Stale = st.differs(c); out[i].Stale != "" {
				out[i].Findings = nil
				break
			}
			m := Measured{Claim: c, Case: st.Case, Interval: st.interval()}
			if st.OnVariant != nil && st.Variant == variant {
				v := st.OnVariant.interval()
				m.Variant = &v
			}
			out[i].Findings = append(out[i].Findings, m.Judge())
		}
		out[i].Missing = out[i].Stale == "" && len(out[i].Findings) == 0
	}
	return out
}

// differs names what of the claim's definition the stored figure was not
// measured for. A changed variant leaves the claim's figure standing; its
// explanation is untested until a run measures the new variant.
func (st StoredClaim) differs(c spec.Claim) string {
	for _, d := range []struct {
		what string
		same bool
	}{{"metric", st.Metric == c.Metric}, {"series", st.Series == c.Series && st.Against == c.Against}, {"test", st.Test == c.Test},
		{"sizes", slices.Equal(st.Sizes, c.Sizes)}} {
		if !d.same {
			return d.what
		}
	}
	return ""
}
