package report_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/report/export/exporttest"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// feedGoldens are the stored runs whose exports for other tools' pipelines
// are kept byte for byte: a run of every socket workload and a ping-pong
// sweep, both with two lab instances per mode. CNPERF_UPDATE_GOLDEN=1
// rewrites them (then read the diff).
var feedGoldens = map[string]bool{
	"testdata/written-2026-11/sockets":  true,
	"testdata/written-2026-11/pingpong": true,
}

var feedFiles = []struct{ format, ext string }{
	{"openmetrics", ".openmetrics"},
	{"opensearch", ".opensearch.ndjson"},
	{"perfdash", ".perfdash.json"},
}

// TestStoredRunsFeed: every stored run exports in each feed format as that
// format's rules read it (exporttest), and the two golden runs export as
// they did.
func TestStoredRunsFeed(t *testing.T) {
	for _, dir := range report.StoredRunDirs() {
		t.Run(strings.TrimPrefix(dir, "testdata/"), func(t *testing.T) {
			runs, notes := report.Load([]string{dir})
			if len(runs) != 1 {
				t.Fatalf("Load: %v", notes)
			}
			feed := report.Feed(runs[0], "")
			if len(feed.Results) == 0 {
				t.Fatal("no results")
			}
			for _, ff := range feedFiles {
				var b bytes.Buffer
				if err := export.WriteFeed(&b, ff.format, feed, export.FeedOptions{}); err != nil {
					t.Fatalf("%s: %v", ff.format, err)
				}
				switch ff.format {
				case "openmetrics":
					if err := exporttest.CheckOpenMetrics(b.Bytes()); err != nil {
						t.Errorf("openmetrics: %v", err)
					}
				case "opensearch":
					if n, err := exporttest.CheckBulk(b.Bytes(), export.DefaultIndex); err != nil || n != len(feed.Results) {
						t.Errorf("opensearch: %d documents for %d results, %v", n, len(feed.Results), err)
					}
				case "perfdash":
					if _, err := exporttest.DecodePerfDash(b.Bytes()); err != nil {
						t.Errorf("perfdash: %v", err)
					}
				}
				if !feedGoldens[dir] {
					continue
				}
				golden := dir + ff.ext
				if os.Getenv("CNPERF_UPDATE_GOLDEN") == "1" {
					if err := os.WriteFile(golden, b.Bytes(), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(golden)
				if err != nil {
					t.Fatal(err)
				}
				if b.String() != string(want) {
					t.Errorf("%s differs from what cnperf wrote before (%d bytes, want %d)%s", golden, b.Len(), len(want), firstDifference(b.String(), string(want)))
				}
			}
		})
	}
}

// TestFeedFigures: the feed says what the summary says, labelled as the
// brief of each format asks: the sockets run's tcp case on bridge, every
// instance, has the summary's mean throughput and its ratio to bare with
// the interval's bounds; the ping-pong run's sweep has latency percentiles
// in order.
func TestFeedFigures(t *testing.T) {
	runs, _ := report.Load([]string{"testdata/written-2026-11/sockets"})
	feed := report.Feed(runs[0], "")
	var found bool
	for _, r := range feed.Results {
		l := r.Labels
		if l["case"] != "tcp" || l["series"] != "bridge" || l["instance"] != "all" {
			continue
		}
		found = true
		for _, want := range [][2]string{{"run", "refhy"}, {"mode", "bridge"}, {"driver", "netns"}, {"workload", "stream"}, {"protocol", "tcp"}} {
			if l[want[0]] != want[1] {
				t.Errorf("label %s = %q, want %q", want[0], l[want[0]], want[1])
			}
		}
		fig := r.Figures[0]
		// The summary prints "bridge  50433 ±1783 (-45.5%)" and the interval [-66.8 %, -10.4 %].
		if fig.Key != "throughput" || int(fig.Value) != 50433 || int(fig.SD) != 1783 || fig.N != 2 {
			t.Errorf("throughput figure %+v", fig)
		}
		// ... and "retrans +3076 [-25596, +31747]": a count's difference.
		for _, rf := range r.Figures {
			if rf.Key != "retransmits" {
				continue
			}
			if d := rf.Diff; d == nil || int(math.Round(d.Value)) != 3076 || int(math.Round(d.Lo)) != -25596 || int(math.Round(d.Hi)) != 31747 {
				t.Errorf("retransmits difference %+v", rf.Diff)
			}
		}
		if fig.Reference != "bare" || !(fig.Ratio > 0.544 && fig.Ratio < 0.546) || !(fig.RatioLo > 0.331 && fig.RatioLo < 0.333) || !(fig.RatioHi > 0.895 && fig.RatioHi < 0.897) {
			t.Errorf("throughput ratio %v [%v, %v] against %q", fig.Ratio, fig.RatioLo, fig.RatioHi, fig.Reference)
		}
	}
	if !found {
		t.Error("no result for tcp on bridge, all instances")
	}

	runs, _ = report.Load([]string{"testdata/written-2026-11/pingpong"})
	feed = report.Feed(runs[0], "")
	costs := 0
	for _, r := range feed.Results {
		for _, f := range r.Figures {
			// The cost table (pingpong.tables/tab-cost.csv) prints bare's
			// first instance at 17.67 servers' CPU s per GB.
			if f.Key == "servers_cpu_per_gb" && r.Labels["series"] == "bare" && r.Labels["instance"] == "0" {
				costs++
				if f.Value < 17.665 || f.Value >= 17.675 {
					t.Errorf("bare, instance 0: %v servers' CPU s/GB, want 17.67", f.Value)
				}
			}
		}
		p := map[string]float64{}
		for _, f := range r.Figures {
			p[f.Key] = f.Value
		}
		if !(p["latency_p50"] > 0 && p["latency_p50"] <= p["latency_p90"] && p["latency_p90"] <= p["latency_p99"]) {
			t.Errorf("%v: latency percentiles %v %v %v", r.Labels, p["latency_p50"], p["latency_p90"], p["latency_p99"])
		}
	}
	if costs != 1 {
		t.Errorf("%d results for bare's first instance's cost, want 1", costs)
	}
}

// The NDJSON golden's documents decode into BulkDoc with nothing left over.
func TestBulkGoldenDocuments(t *testing.T) {
	f, err := os.Open("testdata/written-2026-11/sockets.opensearch.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for i := 0; sc.Scan(); i++ {
		if i%2 == 0 {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		var doc export.BulkDoc
		if err := dec.Decode(&doc); err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if doc.UUID != "refhy" || doc.MetricName != export.MetricName || doc.Timestamp == "" || len(doc.Values) == 0 {
			t.Errorf("line %d: %+v", i+1, doc)
		}
		if _, err := dec.Token(); err != io.EOF {
			t.Errorf("line %d: more than one document", i+1)
		}
	}
}

// TestFeedSweepKernelAndTCP: a ping-pong run whose cells recorded the
// kernel's time and TCP_INFO exports them per series, as tab-kernel,
// tab-tcpinfo and tab-tcpservers show them; a run without says nothing.
func TestFeedSweepKernelAndTCP(t *testing.T) {
	runs, err := report.Load([]string{"testdata/written-2026-11/pingpong"})
	if err != nil {
		t.Fatal(err)
	}
	run := runs[0]
	keys := func(f export.Feed, series string) map[string]float64 {
		out := map[string]float64{}
		for _, r := range f.Results {
			if r.Labels["series"] == series && r.Labels["instance"] == "all" {
				for _, fig := range r.Figures {
					out[fig.Key] = fig.Value
				}
			}
		}
		return out
	}
	before := keys(report.Feed(run, ""), "bare")
	for _, k := range []string{"softirq_per_gb", "siege_retransmits", "pong_retransmits"} {
		if _, ok := before[k]; ok {
			t.Fatalf("a run without kernel time or TCP_INFO exports %s", k)
		}
	}
	cells := slices.Clone(run.Meta.Cells)
	for i := range cells {
		if cells[i].Mode != "bare" {
			continue
		}
		cells[i].Kernel = &record.CellKernel{CPUSeconds: 2, UserSeconds: 0.5, SystemSeconds: 0.25, SoftirqSeconds: 0.5, BusiestSoftirqPercent: 30, NetRX: 50, NetTX: 5, Bytes: 1e9}
		cells[i].TCP = &tcpinfo.Stats{Connections: 1, Retransmits: 1, RTTUS: 40, Cwnd: 10}
		cells[i].ServerTCP = map[string]*tcpinfo.Stats{"pong": {Connections: 2, Retransmits: 3, RTTUS: 60, Cwnd: 10}}
	}
	run.Meta.Cells = cells
	after := keys(report.Feed(run, ""), "bare")
	n := 0
	for _, c := range cells {
		if c.Mode == "bare" {
			n++
		}
	}
	want := map[string]float64{"softirq_per_gb": 0.5, "system_per_gb": 0.25, "busiest_softirq": 30, "net_rx": 50,
		"siege_retransmits": float64(n), "siege_srtt": 40, "pong_retransmits": float64(3 * n), "pong_srtt": 60}
	for k, v := range want {
		if got, ok := after[k]; !ok || math.Abs(got-v) > 1e-9 {
			t.Errorf("%s = %v (exported %v), want %v", k, got, ok, v)
		}
	}
	if _, ok := keys(report.Feed(run, ""), "bridge")["pong_retransmits"]; ok {
		t.Error("bridge, whose cells recorded none, exports the servers' retransmits")
	}
}
