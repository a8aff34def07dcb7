package report

import (
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/figure"
	"github.com/cnperf/cnperf/internal/spec"
)

// abRun is an imported-like run of apachebench's sizes (10 B … 1 MB, nine
// per decade), one sample per mode and size.
func abRun(modes ...string) Run {
	s := spec.Default()
	s.Name, s.Modes, s.Reference = "ab", modes, modes[0]
	r := Run{Dir: "ab", Label: "ab", Meta: record.Meta{Status: "imported", Spec: s, ReceiveWindow: 87380, Started: time.Unix(0, 0)}}
	for i, m := range modes {
		for p := 10; p <= 1000000; p *= 10 {
			for k := 1; k <= 9 && k*p <= 1000000; k++ {
				size := k * p
				ms := (0.5 + float64(size)/1e5) * (1 + 0.5*float64(i))
				r.PingPong = append(r.PingPong, record.Sample{Workload: "pingpong", Mode: m, Size: size, Length: size, Code: 200, DurationMS: ms})
			}
		}
	}
	return r
}

func dataset(t *testing.T, r Run) analysis.Dataset {
	t.Helper()
	by := map[string][]record.Sample{}
	for _, s := range r.PingPong {
		by[s.Mode] = append(by[s.Mode], s)
	}
	d, _ := analysis.NewDataset(r.Meta.Spec.Modes, by, r.Meta.Spec.Modes[0])
	return d
}

// TestSizeAxis: the size axis is logarithmic when the measured sizes span
// more than two decades (ab's five), linear otherwise (a uniform draw
// from 1 B to 400 kB lies mostly within one), and the user's choice wins.
func TestSizeAxis(t *testing.T) {
	uniform := synthetic([]string{"bare", "overlay"}, 500, 3) // sizes 1 … 500 000 at random
	narrow := abRun("bare", "overlay")
	narrow.PingPong = narrow.PingPong[:0]
	for _, m := range []string{"bare", "overlay"} {
		for size := 1000; size <= 90000; size += 1000 { // 1 kB … 90 kB: under two decades
			narrow.PingPong = append(narrow.PingPong, record.Sample{Mode: m, Size: size, Length: size, Code: 200, DurationMS: 1})
		}
	}
	tests := []struct {
		name string
		run  Run
		axis string
		want bool
	}{
		{"ab sizes, auto", abRun("bare", "overlay"), "auto", true},
		{"ab sizes, default", abRun("bare", "overlay"), "", true},
		{"ab sizes, linear asked", abRun("bare", "overlay"), "linear", false},
		{"uniform sizes, auto", uniform, "auto", false},
		{"uniform sizes, log asked", uniform, "log", true},
		{"under two decades", narrow, "auto", false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := logSizes(tc.axis, dataset(t, tc.run)); got != tc.want {
				lo, hi := dataset(t, tc.run).SizeSpan()
				t.Errorf("logSizes(%q) = %v, want %v (sizes %g … %g)", tc.axis, got, tc.want, lo, hi)
			}
			o := DefaultOptions()
			o.SizeAxis = tc.axis
			r, err := Build([]Run{tc.run}, nil, o)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			for _, f := range r.Figures {
				c, ok := f.Chart.(figure.Chart)
				if !ok || !strings.HasPrefix(c.XLabel, "Message size") {
					continue
				}
				n++
				if c.XLog != tc.want || strings.Contains(c.XLabel, "log scale") != tc.want {
					t.Errorf("%s: XLog %v, label %q; want log %v", f.ID, c.XLog, c.XLabel, tc.want)
				}
			}
			if n < 5 {
				t.Errorf("%d figures against message size, want every size figure", n)
			}
		})
	}
}

// TestGroupingCaptions: the tables say how sizes were grouped: one point
// per measured size for ab's sizes, groups of equally many sizes for a
// range drawn at random.
func TestGroupingCaptions(t *testing.T) {
	for _, tc := range []struct {
		run  Run
		want string
	}{
		{abRun("bare", "overlay"), "per message size, each of the 46 measured sizes one point"},
		{synthetic([]string{"bare", "overlay"}, 500, 5), "per size group, 100 groups holding equally many of the"},
	} {
		r, err := Build([]Run{tc.run}, nil, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range []string{"tab-summary-transfer", "tab-smallbig"} {
			found := false
			for _, tb := range r.Tables {
				if tb.ID == id {
					found = true
					if !strings.Contains(tb.Caption, tc.want) {
						t.Errorf("%s caption %q lacks %q", id, tb.Caption, tc.want)
					}
				}
			}
			if !found {
				t.Errorf("no table %s", id)
			}
		}
	}
}
