package report

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
)

// driverSpec measures bare and bridge on driver, or on drivers side by side.
func driverSpec(label, driver string, drivers []string) spec.Spec {
	s := spec.Default()
	s.Name, s.Driver, s.Drivers, s.Modes = label, driver, drivers, []string{"bare", "bridge"}
	return s
}

// driverModes are the labs of s's series as each driver records them: the
// docker driver's endpoints are its sandboxes.
func driverModes(s spec.Spec) []record.ModeMeta {
	var out []record.ModeMeta
	for _, k := range s.ModeKeys() {
		mode, driver, _ := strings.Cut(k, "@")
		l := &record.Lab{Mode: mode, Driver: "netns", Endpoints: []record.Endpoint{{Host: "server"}}}
		if driver != "" {
			l.Driver, l.Endpoints[0].Docker = driver, &record.DockerEndpoint{}
		}
		out = append(out, record.ModeMeta{Mode: k, Setup: mode, Driver: l.Driver, Lab: l})
	}
	return out
}

// pingPongDriverRun has 2000-byte requests taking dur ms (2/dur MB/s) with
// siege adding 1 ms, and one cell per mode of rps requests in a second.
func pingPongDriverRun(label, driver string, drivers []string) Run {
	s := driverSpec(label, driver, drivers)
	run := Run{Dir: label, Label: label, Meta: record.Meta{Status: "complete", Spec: s, ReceiveWindow: 131072, Started: time.Unix(0, 0), Modes: driverModes(s)}}
	dur := map[string]float64{"bare": 0.5, "bridge": 2, "bridge@docker": 1}
	rps := map[string]int{"bare": 400, "bridge": 200, "bridge@docker": 250}
	t0 := time.Unix(1000, 0)
	for i, k := range s.ModeKeys() {
		for j := 0; j < 4; j++ {
			run.PingPong = append(run.PingPong, record.Sample{Workload: "pingpong", Mode: k, Size: 2000, Length: 2000, Code: 200,
				DurationMS: dur[k], LatencyMS: dur[k] + 1, Rep: j})
		}
		run.Meta.Cells = append(run.Meta.Cells, record.Cell{Index: i, Mode: k, Start: t0, End: t0.Add(time.Second), Samples: rps[k]})
	}
	return run
}

// socketDriverRun has one stream test: bare 1000, bridge 800 and
// bridge@docker 600 Mbit/s.
func socketDriverRun(label, driver string, drivers []string) Run {
	s := driverSpec(label, driver, drivers)
	run := Run{Dir: label, Label: label, Meta: record.Meta{Status: "complete", Spec: s, Started: time.Unix(0, 0), Modes: driverModes(s)}}
	mbps := map[string]float64{"bare": 1000, "bridge": 800, "bridge@docker": 600}
	for i, k := range s.ModeKeys() {
		data := fmt.Sprintf(`{"workload":"stream","protocol":"tcp","receiver_bits_per_second":%g,"retransmits":1}`, mbps[k]*1e6)
		run.Records = append(run.Records, record.Record{Workload: "stream", Kind: "total", Mode: k, Cell: i, Case: "stream", Data: json.RawMessage(data)})
	}
	return run
}

// cellTexts renders rows as "text/class" cells joined by " | ".
func cellTexts(rows [][]Cell) []string {
	var out []string
	for _, row := range rows {
		var cs []string
		for _, c := range row {
			cs = append(cs, c.Text+"/"+c.Class)
		}
		out = append(out, strings.Join(cs, " | "))
	}
	return out
}

func TestDriversSection(t *testing.T) {
	both := []string{"netns", "docker"}
	pingPongRows := []string{
		// transfer 2/2 = 1 → 2/1 = 2 MB/s; latency 2 → 1 ms; siege 3 → 2 ms; cells 200 → 250 req/s.
		"bridge/ | Transfer rate, median (MB/s)/ | 1.00/ | 2.00/ | 2.00/better",
		"bridge/ | Latency ping→pong, median (ms)/ | 2.00/ | 1.00/ | 0.50/better",
		"bridge/ | Siege latency, median (ms)/ | 3.00/ | 2.00/ | 0.67/better",
		"bridge/ | Requests per second, median over cells (req/s)/ | 200.0/ | 250.0/ | 1.25/better",
	}
	tests := []struct {
		name    string
		runs    []Run
		want    map[string][]string // table ID → rows; none: no section
		columns []string            // of the first table
		summary []string            // in the text summary
		data    []float64           // tables.json ratios, in order
	}{
		{"ping-pong on netns and docker", []Run{pingPongDriverRun("pp", "netns", both)},
			map[string][]string{"tab-drivers": pingPongRows},
			[]string{"mode", "metric", "on netns", "on docker", "docker ÷ netns"},
			[]string{"drivers: each mode on docker against netns", "bridge  transfer MB/s    1.0     2.0          2.00", "bridge  req/s            200     250          1.25"},
			[]float64{2, 0.5, 2.0 / 3, 1.25}},
		{"ping-pong on docker only", []Run{pingPongDriverRun("pp", "docker", nil)}, nil, nil, nil, nil},
		{"sockets on netns and docker", []Run{socketDriverRun("so", "netns", both)},
			map[string][]string{"tab-drivers": {"stream/ | bridge/ | Throughput (Mbit/s)/ | 800.0/ | 600.0/ | 0.75/worse"}},
			[]string{"test", "mode", "metric", "on netns", "on docker", "docker ÷ netns"},
			[]string{"stream  bridge  Mbit/s    800     600          0.75"},
			[]float64{0.75}},
		{"sockets on netns only", []Run{socketDriverRun("so", "netns", nil)}, nil, nil, nil, nil},
		{"two runs: a table for the one comparing drivers", []Run{pingPongDriverRun("a", "netns", nil), pingPongDriverRun("b", "netns", both)},
			map[string][]string{"tab-drivers-1": pingPongRows},
			[]string{"mode", "metric", "on netns", "on docker", "docker ÷ netns"},
			[]string{"run b:", "drivers: each mode on docker against netns"},
			[]float64{2, 0.5, 2.0 / 3, 1.25}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := Build(tc.runs, nil, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			dt := r.SectionTables(driversSection)
			got := map[string][]string{}
			for _, tb := range dt {
				got[tb.ID] = cellTexts(tb.Rows)
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) && !(len(got) == 0 && len(tc.want) == 0) {
				t.Errorf("driver tables\n%q\nwant\n%q", got, tc.want)
			}
			for _, tb := range r.SectionTables("") {
				if strings.HasPrefix(tb.ID, "tab-drivers") {
					t.Errorf("%s is in the Tables section", tb.ID)
				}
			}
			if len(dt) > 0 && strings.Join(dt[0].Columns, ",") != strings.Join(tc.columns, ",") {
				t.Errorf("columns %q, want %q", dt[0].Columns, tc.columns)
			}

			dir := t.TempDir()
			html := filepath.Join(dir, "r.html")
			if err := r.WriteHTML(html); err != nil {
				t.Fatal(err)
			}
			page, _ := os.ReadFile(html)
			hasSection := strings.Contains(string(page), `<h2 id="drivers">Drivers</h2>`)
			if hasSection != (len(tc.want) > 0) {
				t.Errorf("page has the Drivers section: %v, want %v", hasSection, len(tc.want) > 0)
			}
			if hasSection && !strings.Contains(string(page), "network namespaces (netns) and on real Docker Engines (docker)") {
				t.Errorf("the caption does not say what the drivers are")
			}

			if _, err := r.WriteTables(dir); err != nil {
				t.Fatal(err)
			}
			for id := range tc.want {
				b, err := os.ReadFile(filepath.Join(dir, id+".csv"))
				if err != nil || !strings.HasPrefix(string(b), strings.Join(tc.columns, ",")+"\n") {
					t.Errorf("%s.csv: %v\n%s", id, err, b)
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, "tables.json"))
			if err != nil {
				t.Fatal(err)
			}
			var data struct {
				Drivers []struct {
					Run   string   `json:"run"`
					Ratio *float64 `json:"ratio"`
				} `json:"drivers"`
			}
			if err := json.Unmarshal(b, &data); err != nil {
				t.Fatal(err)
			}
			if len(data.Drivers) != len(tc.data) {
				t.Fatalf("tables.json has %d driver rows, want %d", len(data.Drivers), len(tc.data))
			}
			for i, want := range tc.data {
				if d := data.Drivers[i]; d.Ratio == nil || fmt.Sprintf("%.6f", *d.Ratio) != fmt.Sprintf("%.6f", want) || d.Run != tc.runs[len(tc.runs)-1].Label {
					t.Errorf("tables.json driver row %d = %+v, want ratio %g", i, d, want)
				}
			}

			var sb strings.Builder
			r.WriteSummary(&sb)
			for _, want := range tc.summary {
				if !strings.Contains(sb.String(), want) {
					t.Errorf("summary lacks %q:\n%s", want, sb.String())
				}
			}
			if len(tc.want) == 0 && strings.Contains(sb.String(), "drivers:") {
				t.Errorf("a single-driver summary shows drivers:\n%s", sb.String())
			}
		})
	}
}
