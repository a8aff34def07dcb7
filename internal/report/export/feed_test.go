package export_test

import (
	"bytes"
	"encoding/json"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/report/export/exporttest"
)

var end = time.Date(2026, 11, 27, 10, 0, 0, 123_000_000, time.UTC)

func fig(key, unit string, v, sd, ratio, lo, hi float64) export.Figure {
	return export.Figure{Key: key, Title: strings.ToUpper(key[:1]) + key[1:], Unit: unit, Value: v, SD: sd, N: 2,
		Ratio: ratio, RatioLo: lo, RatioHi: hi, Reference: "bare"}
}

// feed: two series of an rr case, the second against the first, and a
// result whose labels need escaping.
func feed() export.Feed {
	nan := math.NaN()
	return export.Feed{RunID: "r1", Start: end.Add(-time.Minute), End: end, Results: []export.Result{
		{Labels: map[string]string{"run": "r1", "series": "bare", "mode": "bare", "instance": "all", "case": "rr"}, End: end,
			Figures: []export.Figure{fig("trans_per_s", "1/s", 1000, 10, nan, nan, nan), fig("rtt_p50", "µs", 5, nan, nan, nan, nan), fig("rtt_p99", "µs", 9, nan, nan, nan, nan)}},
		{Labels: map[string]string{"run": "r1", "series": "bridge", "mode": "bridge", "instance": "all", "case": "rr"},
			Figures: []export.Figure{fig("trans_per_s", "1/s", 500, 5, 0.5, 0.4, 0.6), fig("rtt_p50", "µs", 10, nan, 2, nan, nan), fig("fairness", "1 = equal", nan, nan, nan, nan, nan),
				{Key: "retransmits", Title: "Retransmits", Unit: "segments", Value: 7, SD: nan, Ratio: math.Inf(1), RatioLo: nan, RatioHi: nan, Reference: "bare", Diff: &export.Difference{Value: 7, Lo: -1, Hi: 15}}}},
		{Labels: map[string]string{"run": "r1", "series": "say \"hi\"\\\nbye", "instance": "all", "case": "rr", "variant": ""},
			Figures: []export.Figure{fig("trans_per_s", "1/s", 1, nan, nan, nan, nan)}},
	}}
}

func TestOpenMetrics(t *testing.T) {
	var b bytes.Buffer
	if err := export.OpenMetrics(&b, feed()); err != nil {
		t.Fatal(err)
	}
	if err := exporttest.CheckOpenMetrics(b.Bytes()); err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	out := b.String()
	for _, want := range []string{
		"# TYPE cnperf_trans_per_s_per_second gauge\n# UNIT cnperf_trans_per_s_per_second per_second\n# HELP cnperf_trans_per_s_per_second Trans_per_s (1/s); stat:",
		`cnperf_trans_per_s_per_second{run="r1",series="bare",mode="bare",instance="all",case="rr",stat="mean"} 1000 1795773600.123` + "\n",
		`cnperf_trans_per_s_per_second{run="r1",series="bare",mode="bare",instance="all",case="rr",stat="sd"} 10 1795773600.123` + "\n",
		// The second result has no end of its own: the run's.
		`cnperf_trans_per_s_per_second_ratio{run="r1",series="bridge",mode="bridge",instance="all",case="rr",reference="bare",bound="low"} 0.4 1795773600.123` + "\n",
		`cnperf_rtt_p50_microseconds_ratio{run="r1",series="bridge",mode="bridge",instance="all",case="rr",reference="bare",bound="estimate"} 2 `,
		`series="say \"hi\"\\\nbye"`,
		`cnperf_retransmits_difference_segments{run="r1",series="bridge",mode="bridge",instance="all",case="rr",reference="bare",bound="high"} 15 `,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	for _, not := range []string{"fairness", `bound="high"} 2`, "NaN", `variant=""`} {
		if strings.Contains(out, not) {
			t.Errorf("%q in\n%s", not, out)
		}
	}
	if strings.Count(out, "# TYPE cnperf_trans_per_s_per_second gauge") != 1 {
		t.Error("a family written twice")
	}
}

func TestFeedRefusesDuplicateLabels(t *testing.T) {
	f := feed()
	f.Results = append(f.Results, f.Results[0])
	for _, format := range []string{"openmetrics", "opensearch", "perfdash"} {
		if err := export.WriteFeed(&bytes.Buffer{}, format, f, export.FeedOptions{}); err == nil || !strings.Contains(err.Error(), "two results") {
			t.Errorf("%s: %v", format, err)
		}
	}
}

func TestEmptyFeed(t *testing.T) {
	for format, want := range map[string]string{"openmetrics": "# EOF\n", "opensearch": "", "perfdash": "{\n  \"version\": \"v1\",\n  \"dataItems\": []\n}\n"} {
		var b bytes.Buffer
		if err := export.WriteFeed(&b, format, export.Feed{}, export.FeedOptions{}); err != nil || b.String() != want {
			t.Errorf("%s: %q, %v; want %q", format, b.String(), err, want)
		}
	}
}

func TestBulk(t *testing.T) {
	var b bytes.Buffer
	if err := export.Bulk(&b, feed(), "cnperf-x"); err != nil {
		t.Fatal(err)
	}
	n, err := exporttest.CheckBulk(b.Bytes(), "cnperf-x")
	if err != nil || n != 3 {
		t.Fatalf("%d documents, %v\n%s", n, err, b.String())
	}
	lines := strings.Split(b.String(), "\n")
	if lines[0] != `{"index":{"_index":"cnperf-x"}}` {
		t.Errorf("action %s", lines[0])
	}
	dec := json.NewDecoder(strings.NewReader(lines[3]))
	dec.DisallowUnknownFields()
	var doc export.BulkDoc
	if err := dec.Decode(&doc); err != nil {
		t.Fatal(err)
	}
	if doc.UUID != "r1" || doc.Timestamp != "2026-11-27T10:00:00.123Z" || doc.EndTime != "" || doc.Labels["series"] != "bridge" ||
		doc.Values["trans_per_s"] != 500 || doc.Ratios["trans_per_s"].Low == nil || *doc.Ratios["trans_per_s"].Low != 0.4 ||
		doc.Ratios["rtt_p50"].Low != nil || doc.Units["rtt_p50"] != "µs" || doc.Stats["rtt_p50"] != "mean" {
		t.Errorf("document %+v", doc)
	}
	if d := doc.Differences["retransmits"]; d.Difference != 7 || d.Low == nil || *d.Low != -1 || d.Reference != "bare" {
		t.Errorf("difference %+v", d)
	}
	if _, ok := doc.Ratios["retransmits"]; ok {
		t.Error("an infinite ratio written")
	}
	if _, ok := doc.Values["fairness"]; ok {
		t.Error("a NaN figure written")
	}
}

func TestValidateIndex(t *testing.T) {
	for _, tc := range []struct {
		index, err string
	}{
		{"cnperf-results", ""}, {"cnperf.2026-11", ""},
		{"", "empty"}, {"Cnperf", "lower case"}, {"-x", "cannot start"}, {"_x", "cannot start"}, {"a b", "cannot hold"},
		{"a/b", "cannot hold"}, {"a\xffb", "not UTF-8"}, {"a:b", "cannot hold"}, {"..", "not an index"}, {strings.Repeat("a", 256), "longer than 255"},
	} {
		err := export.ValidateIndex(tc.index)
		if (err == nil) != (tc.err == "") || err != nil && (!strings.Contains(err.Error(), tc.err) || !strings.HasPrefix(err.Error(), "--index ")) {
			t.Errorf("ValidateIndex(%q) = %v, want %q", tc.index, err, tc.err)
		}
	}
}

func TestPerfDash(t *testing.T) {
	var b bytes.Buffer
	if err := export.PerfDash(&b, feed()); err != nil {
		t.Fatal(err)
	}
	pd, err := exporttest.DecodePerfDash(b.Bytes())
	if err != nil {
		t.Fatalf("%v\n%s", err, b.String())
	}
	// bare: trans/s and rtt {50, 99}; bridge: trans/s and rtt {50}; the third: trans/s.
	if len(pd.DataItems) != 5 {
		t.Fatalf("%d items\n%s", len(pd.DataItems), b.String())
	}
	rtt := pd.DataItems[1]
	if rtt.Unit != "us" || rtt.Labels["Metric"] != "rtt" || rtt.Labels["series"] != "bare" || rtt.Data["Perc50"] != 5 || rtt.Data["Perc99"] != 9 || len(rtt.Data) != 2 {
		t.Errorf("rtt item %+v", rtt)
	}
	if tp := pd.DataItems[0]; tp.Unit != "1/s" || tp.Data["Average"] != 1000 || tp.Labels["Metric"] != "trans_per_s" {
		t.Errorf("throughput item %+v", tp)
	}
}

// TestCheckOpenMetricsRefuses: the checker the tests trust refuses what
// breaks OpenMetrics' rules, so that output breaking them fails.
func TestCheckOpenMetricsRefuses(t *testing.T) {
	for name, text := range map[string]string{
		"no EOF":            "# TYPE a gauge\na 1 1\n",
		"EOF not last":      "# TYPE a gauge\n# EOF\na 1 1\n# EOF\n",
		"unit not a suffix": "# TYPE a gauge\n# UNIT a seconds\na 1 1\n# EOF\n",
		"metadata twice":    "# TYPE a gauge\n# TYPE a gauge\na 1 1\n# EOF\n",
		"metadata late":     "# TYPE a gauge\na 1 1\n# HELP a x\n# EOF\n",
		"family resumed":    "# TYPE a gauge\na 1 1\n# TYPE b gauge\nb 1 1\n# TYPE a gauge\na{x=\"2\"} 1 1\n# EOF\n",
		"sample of another": "# TYPE a gauge\nb 1 1\n# EOF\n",
		"no TYPE":           "a 1 1\n# EOF\n",
		"bad escape":        "# TYPE a gauge\na{x=\"\\q\"} 1 1\n# EOF\n",
		"raw quote":         "# TYPE a gauge\na{x=\"\"\"} 1 1\n# EOF\n",
		"label twice":       "# TYPE a gauge\na{x=\"1\",x=\"2\"} 1 1\n# EOF\n",
		"same labels":       "# TYPE a gauge\na{x=\"1\",y=\"2\"} 1 1\na{y=\"2\",x=\"1\"} 2 1\n# EOF\n",
		"bad number":        "# TYPE a gauge\na 1,5 1\n# EOF\n",
		"other comment":     "# TYPE a gauge\n# hello\na 1 1\n# EOF\n",
	} {
		if err := exporttest.CheckOpenMetrics([]byte(text)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if err := exporttest.CheckOpenMetrics([]byte("# TYPE a_seconds gauge\n# UNIT a_seconds seconds\n# HELP a_seconds x \\\" y\na_seconds{x=\"\\\\\\n\"} -1.5e-3 1.5\n# EOF\n")); err != nil {
		t.Errorf("a good exposition refused: %v", err)
	}
}

// FuzzOpenMetricsLabels: whatever a label value or title holds (spec
// labels and mode names come from users), the exposition keeps the rules.
func FuzzOpenMetricsLabels(f *testing.F) {
	f.Add("bare", "Throughput", "Mbit/s")
	f.Add("a\"b\\c\nd", "x\ny", "µs/GB ✓")
	f.Add("", "", "")
	f.Fuzz(func(t *testing.T, series, title, unit string) {
		fd := export.Feed{RunID: "r", End: end, Results: []export.Result{{
			Labels:  map[string]string{"run": "r", "series": series, "instance": "all"},
			Figures: []export.Figure{{Key: "k", Title: title, Unit: unit, Value: 1, SD: math.NaN(), Ratio: 1, RatioLo: 0.5, RatioHi: 2}},
		}}}
		var b bytes.Buffer
		if err := export.OpenMetrics(&b, fd); err != nil {
			t.Fatal(err)
		}
		if err := exporttest.CheckOpenMetrics(b.Bytes()); err != nil {
			t.Fatalf("%v\n%s", err, b.String())
		}
	})
}

// TestOpenMetricsNoTimestamps: for a Pushgateway, no sample is stamped and
// the exposition keeps the rules.
func TestOpenMetricsNoTimestamps(t *testing.T) {
	var b bytes.Buffer
	if err := export.WriteFeed(&b, "openmetrics", feed(), export.FeedOptions{NoTimestamps: true}); err != nil {
		t.Fatal(err)
	}
	if err := exporttest.CheckOpenMetrics(b.Bytes()); err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(b.String(), "\n") {
		if strings.HasPrefix(line, "cnperf_") && strings.Count(line[strings.LastIndex(line, "}"):], " ") != 1 {
			t.Errorf("a timestamp: %s", line)
		}
	}
	if !strings.Contains(b.String(), `stat="mean"} 1000`+"\n") {
		t.Errorf("no unstamped sample in\n%s", b.String())
	}
}

// FuzzValidateIndex: --index comes from the user: never a panic, and a
// name it lets through is one the bulk checker reads back.
func FuzzValidateIndex(f *testing.F) {
	for _, s := range []string{"cnperf-results", "", "A", "_x", "a b", "é", "a\xffb"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, index string) {
		if export.ValidateIndex(index) != nil {
			return
		}
		var b bytes.Buffer
		if err := export.Bulk(&b, feed(), index); err != nil {
			t.Fatal(err)
		}
		if _, err := exporttest.CheckBulk(b.Bytes(), index); err != nil {
			t.Fatal(err)
		}
	})
}

// heldWriter notes the live heap when it is first written to, and counts
// what it is given.
type heldWriter struct {
	first bool
	heap  uint64
	n     int64
}

func (w *heldWriter) Write(p []byte) (int, error) {
	if !w.first {
		w.first = true
		runtime.GC()
		var m runtime.MemStats
		runtime.ReadMemStats(&m)
		w.heap = m.HeapAlloc
	}
	w.n += int64(len(p))
	return len(p), nil
}

// TestFeedsStream: OpenMetrics and perfdash are written as they are made,
// not built first: every line (item) repeats its result's labels, so a
// feed of a few hundred results with long names is tens of MB, which the
// writers held whole (926 MB of OpenMetrics for a stored run's 1 MB mode
// name).
func TestFeedsStream(t *testing.T) {
	long := strings.Repeat("v", 1000)
	var f export.Feed
	for i := range 300 {
		r := export.Result{Labels: map[string]string{"run": long, "series": long + strconv.Itoa(i), "case": long, "instance": "all"}, End: end}
		for k := range 10 {
			r.Figures = append(r.Figures, fig("metric"+strconv.Itoa(k)+"_p50", "ms", 1, 0.1, 2, 1, 3), fig("rate"+strconv.Itoa(k), "1/s", 1, 0.1, 2, 1, 3))
		}
		f.Results = append(f.Results, r)
	}
	for _, format := range []string{"openmetrics", "perfdash"} {
		t.Run(format, func(t *testing.T) {
			runtime.GC()
			var before runtime.MemStats
			runtime.ReadMemStats(&before)
			var w heldWriter
			if err := export.WriteFeed(&w, format, f, export.FeedOptions{}); err != nil {
				t.Fatal(err)
			}
			held := int64(w.heap) - int64(before.HeapAlloc)
			t.Logf("%d MB written, %d KB held when the first bytes went out", w.n>>20, held>>10)
			if w.n < 10<<20 || held > 2<<20 {
				t.Errorf("%d MB written, %d MB held before the first were: want the lines streamed", w.n>>20, held>>20)
			}
		})
	}
}
