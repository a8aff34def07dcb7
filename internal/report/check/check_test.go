package check

import (
	"bytes"
	"encoding/xml"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report/check/checktest"
)

func TestLimits(t *testing.T) {
	steady := checktest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })                          // bridge costs 20 % of transfer rate
	lucky := checktest.WriteRun(t, 18, 3, func(i int) float64 { return []float64{0.7, 0.8, 0.9}[i] }) // 20 %, give or take an instance
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
			rs, err := Limits(run, []Limit{l})
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
	dir := checktest.WriteRun(t, 6, 1, func(int) float64 { return 0.8 })
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
		_, err := Limits(run, []Limit{l})
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

func TestReadFile(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "limits.yaml")
	os.WriteFile(good, []byte("max_cost:\n  - bridge:transfer=25\n  - bridge:latency=30\nmax_change: 3\n"), 0o644)
	ls, change, err := ReadFile(good)
	if err != nil || len(ls) != 2 || ls[1].Metric != "latency" || change == nil || *change != 3 {
		t.Errorf("ReadFile: %+v, %v, %v", ls, change, err)
	}
	for name, doc := range map[string]string{"unknown key": "max_costs: []\n", "bad limit": "max_cost: [bridge]\n", "not yaml": "max_cost: [\n"} {
		p := filepath.Join(dir, strings.ReplaceAll(name, " ", "_"))
		os.WriteFile(p, []byte(doc), 0o644)
		if _, _, err := ReadFile(p); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestBaseline(t *testing.T) {
	old := checktest.WriteRun(t, 20, 1, func(int) float64 { return 0.8 })
	same := checktest.WriteRun(t, 21, 1, func(int) float64 { return 0.8 })
	worse := checktest.WriteRun(t, 22, 1, func(int) float64 { return 0.6 })
	o, _ := Load(old)
	for _, c := range []struct {
		name string
		dir  string
		want Verdict
	}{{"the same", same, Holds}, {"25 % slower", worse, Broken}} {
		r, _ := Load(c.dir)
		rs, err := Baseline(r, o, 5)
		if err != nil {
			t.Fatal(err)
		}
		var transfer *Result
		for i := range rs {
			if strings.HasPrefix(rs[i].Name, "bridge:transfer") {
				transfer = &rs[i]
			}
		}
		if transfer == nil || transfer.Verdict != c.want {
			t.Errorf("%s: %+v, want %s", c.name, transfer, c.want)
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
