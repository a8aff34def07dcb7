package gate

import (
	"bytes"
	"encoding/xml"
	"errors"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/report/gate/gatetest"
)

func TestJudgeLimits(t *testing.T) {
	steady := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })                          // bridge costs 20 % of transfer rate
	lucky := gatetest.WriteRun(t, 18, 3, func(i int) float64 { return []float64{0.7, 0.8, 0.9}[i] }) // 20 %, give or take an instance
	for _, c := range []struct {
		name  string
		dir   string
		limit string
		want  Verdict
	}{
		{"within", steady, "bridge:transfer=25", Holds},
		{"beyond", steady, "bridge:transfer=15", Broken},
		{"at the cost: straddles", steady, "bridge:transfer=20", CannotTell},
		{"latency adds 25 %", steady, "bridge:latency=30", Holds},
		{"latency beyond", steady, "bridge:latency=20", Broken},
		{"requests per second", steady, "bridge:cell_rps=25", Holds},
		{"instances widen the interval", lucky, "bridge:transfer=25", CannotTell},
		{"instances: far enough", lucky, "bridge:transfer=60", Holds},
	} {
		t.Run(c.name, func(t *testing.T) {
			run, err := Load(c.dir)
			if err != nil {
				t.Fatal(err)
			}
			l, err := ParseLimit(c.limit)
			if err != nil {
				t.Fatal(err)
			}
			rs, err := JudgeLimits(run, []Limit{l})
			if err != nil {
				t.Fatal(err)
			}
			if len(rs) != 1 || rs[0].Verdict != c.want {
				t.Fatalf("%s: got %+v, want %s", c.limit, rs, c.want)
			}
			if !strings.Contains(rs[0].Line, "95 % CI") {
				t.Errorf("line %q shows no interval", rs[0].Line)
			}
		})
	}
}

func TestBadInput(t *testing.T) {
	dir := gatetest.WriteRun(t, 6, 1, func(int) float64 { return 0.8 })
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ limit, want string }{
		{"overlay:transfer=10", `no mode "overlay"`},
		{"bridge:throughput=10", `no metric "throughput"`},
		{"bare:transfer=10", "is the reference"},
	} {
		l, _ := ParseLimit(c.limit)
		_, err := JudgeLimits(run, []Limit{l})
		var bad BadInput
		if !errors.As(err, &bad) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want bad input naming %q", c.limit, err, c.want)
		}
	}
	if _, err := Load(t.TempDir()); !errors.As(err, new(BadInput)) {
		t.Errorf("a directory that is not a run: %v", err)
	}
	for _, s := range []string{"bridge", "bridge:transfer", ":transfer=1", "bridge:=1", "bridge:transfer=x", "bridge:transfer=NaN", "bridge:transfer=Inf"} {
		if _, err := ParseLimit(s); err == nil {
			t.Errorf("ParseLimit(%q) accepted", s)
		}
	}
	if l, err := ParseLimit("bridge:transfer=-2.5%"); err != nil || l.MaxCost != -2.5 {
		t.Errorf("ParseLimit with a %% sign: %+v, %v", l, err)
	}
}

func TestReadLimits(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "limits.yaml")
	os.WriteFile(good, []byte("max_cost:\n  - bridge:transfer=25\n  - bridge:latency=30\nmax_change: 3\n"), 0o644)
	ls, change, err := ReadLimits(good)
	if err != nil || len(ls) != 2 || ls[1].Metric != "latency" || change == nil || *change != 3 {
		t.Errorf("ReadLimits: %+v, %v, %v", ls, change, err)
	}
	for name, doc := range map[string]string{"unknown key": "max_costs: []\n", "bad limit": "max_cost: [bridge]\n", "not yaml": "max_cost: [\n"} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.WriteFile(p, []byte(doc), 0o644)
		if _, _, err := ReadLimits(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestJudgeBaselines(t *testing.T) {
	old := gatetest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	same := gatetest.WriteRun(t, 21, 1, func(int) float64 { return 0.8 })
	slower := gatetest.WriteRun(t, 22, 1, func(int) float64 { return 0.72 }) // 10 % slower
	faster := gatetest.WriteRun(t, 23, 1, func(int) float64 { return 0.88 }) // 10 % faster
	luckyOld := gatetest.WriteRun(t, 24, 3, func(i int) float64 { return []float64{0.7, 0.8, 0.9}[i] })
	luckyNew := gatetest.WriteRun(t, 25, 3, func(i int) float64 { return []float64{0.7, 0.8, 0.9}[i] })
	for _, c := range []struct {
		name         string
		now, old     string
		metric, want string
		words        *regexp.Regexp
	}{
		{"the same", same, old, "transfer", "holds", regexp.MustCompile(`: (no change from|0\.[0-9] % (better|worse) than) the baseline, 95 % CI `)},
		{"10 % slower", slower, old, "transfer", "BROKEN", regexp.MustCompile(`: 1[01]\.[0-9] % worse than the baseline, 95 % CI (9|10)\.[0-9] % worse to 1[12]\.[0-9] % worse: beyond the limit of 5\.0 % worse`)},
		{"10 % faster", faster, old, "transfer", "holds", regexp.MustCompile(`: (9|10)\.[0-9] % better than the baseline, 95 % CI [0-9.]+ % better to [0-9.]+ % better: within`)},
		{"latency of the faster run", faster, old, "latency", "holds", regexp.MustCompile(`: [0-9.]+ % better than the baseline`)},
		// Lab instances 25 % apart in both runs: no telling 5 %.
		{"instances apart", luckyNew, luckyOld, "transfer", "cannot tell", regexp.MustCompile(`straddles the limit of 5\.0 % worse`)},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, _ := Load(c.now)
			o, _ := Load(c.old)
			rs, err := JudgeBaselines(n, o, 5)
			if err != nil {
				t.Fatal(err)
			}
			var got *Result
			for i := range rs {
				if rs[i].Name == "bridge:"+c.metric {
					got = &rs[i]
				}
			}
			if got == nil || got.Verdict.String() != c.want {
				t.Fatalf("%+v, want %s", got, c.want)
			}
			if !c.words.MatchString(got.Line) || !strings.Contains(got.Line, "could detect changes of ") {
				t.Errorf("line %q: want %q and the smallest detectable change", got.Line, c.words)
			}
			if strings.Contains(got.Line, "-") {
				t.Errorf("line %q: a change is worse or better, never a negative number", got.Line)
			}
		})
	}
}

func TestAmount(t *testing.T) {
	for _, c := range []struct {
		v    float64
		want string
	}{{4.6, "4.6 % worse"}, {-4.6, "4.6 % better"}, {0.04, "0.0 %"}, {-0.04, "0.0 %"}, {-112.9, "112.9 % better"}} {
		if got := amount(c.v); got != c.want {
			t.Errorf("amount(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

// Steady units in both runs: the smallest change the pair can detect is
// small, and it is what the line says.
func TestChangeDetectable(t *testing.T) {
	a, _ := Load(gatetest.WriteRun(t, 30, 3, func(int) float64 { return 0.8 }))
	b, _ := Load(gatetest.WriteRun(t, 31, 3, func(int) float64 { return 0.8 }))
	pools := changePools([]Run{b, a})
	for _, ci := range b.CIs {
		if ci.Metric.Key != "transfer" {
			continue
		}
		c := change(ci, []analysis.RatioCI{a.CIs[0]}, pools[poolKey{"", "transfer"}])
		if !c.Known || c.Detectable <= 0 || c.Detectable > 3 {
			t.Errorf("%+v: 1 %% noise per cell over 30 units must detect changes of under 3 %%", c)
		}
		if !(c.Lo < c.Worse && c.Worse < c.Hi) {
			t.Errorf("%+v: the point is outside its interval", c)
		}
	}
}

func TestWriteJUnit(t *testing.T) {
	rs := []Result{{Name: "a", Verdict: Holds, Line: "ok"}, {Name: "b", Verdict: Broken, Line: "beyond"}, {Name: "c", Verdict: CannotTell, Line: "straddles"}}
	var b bytes.Buffer
	if err := WriteJUnit(&b, "run", rs); err != nil {
		t.Fatal(err)
	}
	var got junitSuites
	if err := xml.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("not XML: %v\n%s", err, b.String())
	}
	s := got.Suites[0]
	if s.Tests != 3 || s.Failures != 1 || s.Skipped != 1 || s.Cases[1].Failure == nil || s.Cases[2].Skipped == nil || s.Cases[0].Failure != nil {
		t.Errorf("suite %+v", s)
	}
	if Worst(rs) != Broken || Worst(rs[:1]) != Holds || Worst([]Result{rs[0], rs[2]}) != CannotTell {
		t.Error("Worst")
	}
}

// TestJudgeChangeUnbounded: an interval without finite bounds (two
// baselines far apart leave the spread between runs 1 degree of freedom)
// cannot tell, in words, never "+Inf % better".
func TestJudgeChangeUnbounded(t *testing.T) {
	c := Change{Worse: -3.8, Lo: math.Inf(-1), Hi: 100, Detectable: math.Inf(1), Known: true, Baselines: 2, BetweenRuns: true, Unbounded: true}
	r := judgeChange("bridge:transfer", "", c, 5)
	if r.Verdict != CannotTell || strings.Contains(r.Line, "Inf") || !strings.Contains(r.Line, "no bounded interval") || !strings.Contains(r.Line, "3.8 % better than the 2 baselines") {
		t.Errorf("got %v %q", r.Verdict, r.Line)
	}
}
