package record_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
)

// Memory a stored run may cost beyond allocPerByte per byte of its files:
// decoding JSON costs a few times its size, never in proportion to a
// number written in it.
const (
	allocSlack   = 8 << 20
	allocPerByte = 200
)

// FuzzStoredRun feeds any run.json and samples.jsonl to the readers the
// commands use (record.Reader, report.Load) and to the statistics over
// what they return.
func FuzzStoredRun(f *testing.F) {
	meta := `{"format":1,"status":"complete","spec":{"name":"x","modes":["bare","bridge"],"reference":"bare","pingpong":{"chunk":2}},"tcp_receive_window":87380,` +
		`"cells":[{"index":0,"mode":"bare","chunk":0,"start":"2026-01-01T00:00:00Z","end":"2026-01-01T00:00:01Z","samples":2}]}`
	line := `{"workload":"pingpong","mode":"bare","cell":0,"size":1000,"rep":0,"duration_ms":1.5,"latency_ms":2,"length":1000,"code":200}`
	f.Add([]byte(meta), []byte(line+"\n"+strings.Replace(line, "bare", "bridge", 1)+"\n"))
	f.Add([]byte(meta), []byte(line+"\n"+`{"workload":"pingpong","mode":"bare","si`))
	f.Add([]byte(meta), []byte(`{"workload":"pingpong","mode":"bare","size":9223372036854775807,"length":9223372036854775807,"duration_ms":1e-308,"code":200}`+"\n"))
	f.Add([]byte(meta), []byte(`{"workload":"pingpong","mode":"bare","size":-5,"length":-5,"duration_ms":1e308,"code":200}`+"\n"))
	f.Add([]byte(`{"spec":{"modes":["a"]},"tcp_receive_window":1,"cells":[{"mode":"a","chunk":9223372036854775807,"samples":9223372036854775807,"start":"0001-01-01T00:00:00Z","end":"9999-01-01T00:00:00Z"}]}`), []byte("\n\n"))
	f.Add([]byte(`{"spec":{"modes":["a"],"tests":[{"workload":"stream"}]}}`), []byte(`{"workload":"stream","kind":"total","mode":"a","cell":0,"data":{"receiver_bits_per_second":1e308}}`+"\n"+`{"workload":"cost","cell":0}`+"\n"+`{"workload":"cpu","core_busy_percent":[1,2,3]}`+"\n"))
	f.Add([]byte(`{"spec":{"modes":["a"]},"cells":[{"mode":"a","tcp_info":{"connections":9223372036854775807,"retransmits":-1,"rtt_us":1e308,"snd_cwnd":-1e308}},{"mode":"a","tcp_info":null}]}`),
		[]byte(`{"workload":"rr","kind":"total","mode":"a","cell":0,"data":{"rr_mode":"crr","tcp_info":{"retransmits":"x"}}}`+"\n"))
	f.Add([]byte(`{"spec":{"modes":["a"]},"modes":[{"mode":"a","idle":{"window_seconds":-1,"daemons":{"r":{"cpu_percent":1e308,"memory_bytes":-1}}}},{"mode":"a","idle":null}],`+
		`"cells":[{"mode":"a","samples":9223372036854775807,"kernel":{"cpu_seconds":1e308,"user_seconds":1e308,"softirq_seconds":-1,"busiest_softirq_percent":1e9,"net_rx":18446744073709551615,"bytes":-9,"pinned":{"cores":[-1]}}},`+
		`{"mode":"a","kernel":{"cpu_seconds":2,"softirq_seconds":1,"bytes":1}},{"mode":"a","kernel":null}]}`), []byte("\n"))
	f.Add([]byte(`{}`), []byte(``))
	f.Add([]byte(``), []byte(`[]`))
	f.Add([]byte(`null`), []byte(`null`+"\n"+`1e999`))
	// Series run.json does not list: skipped and counted, never a table each.
	var alien strings.Builder
	for i := range 50 {
		alien.WriteString(strings.Replace(line, `"bare"`, `"x`+strings.Repeat("y", i)+`"`, 1) + "\n")
	}
	f.Add([]byte(meta), []byte(alien.String()+line+"\n"))
	// A line past the bound: the file is refused (record.ErrBounds).
	f.Add([]byte(meta), []byte(line+"\n"+strings.Repeat(" ", record.MaxLineBytes+1)+"\n"))
	// Names longer than cnperf writes, which every line of an export
	// would repeat: refused whole (record.ErrBounds).
	long := strings.Repeat("n", record.MaxNameBytes+1)
	f.Add([]byte(strings.Replace(meta, `"bridge"`, `"`+long+`"`, 1)), []byte(line+"\n"))
	f.Add([]byte(strings.Replace(meta, `"format":1`, `"format":1,"id":"`+long+`"`, 1)), []byte(line+"\n"))
	f.Add([]byte(meta), []byte(strings.Replace(line, `"workload"`, `"labels":{"k":"`+long+`"},"workload"`, 1)+"\n"))
	f.Add([]byte(`{"spec":{"modes":["a"],"tests":[{"workload":"stream"}]}}`), []byte(`{"workload":"stream","kind":"total","mode":"a","case":"`+long+`","data":{"protocol":"tcp"}}`+"\n"))
	f.Fuzz(func(t *testing.T, metaJSON, samplesJSONL []byte) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, record.MetaFile), metaJSON, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, record.SamplesFile), samplesJSONL, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)

		rd, err := record.Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var raw map[string]any
		_ = rd.Meta(&raw) // any JSON or an error, never a panic
		c, rep, err := rd.Contents()
		if errors.Is(err, record.ErrBounds) {
			return // refused whole, in one line: TestHostileRunFiles
		}
		if err != nil {
			t.Fatal(err)
		}
		checkReport(t, samplesJSONL, rep, len(c.PingPong)+len(c.Records)+len(c.Costs)+len(c.CPU))
		for _, s := range c.PingPong {
			for k, v := range s.Labels {
				if len(k) > record.MaxNameBytes || len(v) > record.MaxNameBytes {
					t.Fatalf("a label of %d and %d bytes read", len(k), len(v))
				}
			}
		}
		for _, r := range c.Records {
			if len(r.Case) > record.MaxNameBytes {
				t.Fatalf("a case of %d bytes read", len(r.Case))
			}
		}

		runs, notes := report.Load([]string{dir})
		for _, n := range notes {
			if strings.Contains(n, "\n") {
				t.Errorf("note is not one line: %q", n)
			}
		}
		for _, run := range runs {
			statistics(run)
		}
		runtime.ReadMemStats(&after)
		if a, n := after.TotalAlloc-before.TotalAlloc, len(metaJSON)+len(samplesJSONL); a > uint64(allocSlack+allocPerByte*n) {
			t.Errorf("%d bytes of run allocated %d bytes", n, a)
		}
	})
}

// checkReport asserts what a read of samples.jsonl reports about its lines.
func checkReport(t *testing.T, data []byte, rep record.ReadReport, got int) {
	t.Helper()
	lines := 0
	for _, l := range bytes.Split(data, []byte("\n")) {
		if len(bytes.TrimSpace(l)) > 0 {
			lines++
		}
	}
	switch {
	case rep.Lines > lines:
		t.Errorf("read %d lines of %d", rep.Lines, lines)
	case rep.Skipped > rep.Lines || got > rep.Lines-rep.Skipped:
		t.Errorf("%d lines: %d skipped, %d records", rep.Lines, rep.Skipped, got)
	case len(rep.Problems) > record.MaxProblems+1:
		t.Errorf("%d problems listed", len(rep.Problems))
	}
	for _, p := range rep.Problems {
		if strings.Contains(p, "\n") {
			t.Errorf("problem is not one line: %q", p)
		}
	}
}

// statistics computes what summary and report compute from a run, short
// of drawing it.
func statistics(run report.Run) {
	modes := run.Meta.Spec.ModeKeys()
	by := map[string][]record.Sample{}
	for _, s := range run.PingPong {
		by[s.Mode] = append(by[s.Mode], s)
	}
	d, _ := analysis.NewDataset(modes, by, run.Meta.Spec.ReferenceKey())
	split := 3 * run.Meta.ReceiveWindow
	for _, m := range analysis.PingPongMetrics() {
		d.SmallBig(m, split, 100)
		d.Summary(m, 2, 100)
		d.Deviation(m)
		d.Impacts(m, 100)
		for _, s := range d.Series {
			d.Bins(s, m, 100)
			d.Loss(s, m, 100)
		}
	}
	set := analysis.NewSweep(run.PingPong, report.Cells(run.Meta), modes)
	set.Rows(run.Meta.Spec.ReferenceKey())
	analysis.Drivers([]analysis.Case{set.Case(pingpong.Descriptor)}, analysis.DriverPairs(modes, run.Meta.Spec.SplitModeKey))
	report.Cases([]report.Run{run}, run.Meta.Spec.ReferenceKey(), 2)
	report.DriverRows(run, 2)
	analysis.KernelRows(run.Meta)
	analysis.TCPRows(run.Meta)
	report.IdleRows(run.Meta)
}
