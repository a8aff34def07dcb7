package export

import (
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Feed is a run's figures flattened for other tools' pipelines
// (Prometheus, OpenSearch, perfdash): one Result per case and series, and
// per case, series and lab instance when the run had several instances.
// The report package builds it from a stored run (report.Feed); the
// writers here only format it, so each format says the same numbers.
type Feed struct {
	RunID      string
	Start, End time.Time // the run's; End is zero for a run that never finished
	Results    []Result
}

// Result is one case of a run on one series (and, with Labels["instance"]
// other than "all", on one lab instance of it).
type Result struct {
	// Labels name the result: run, series, mode, driver, variant,
	// instance, case, workload, protocol, param and value where they
	// apply; an empty label is left out. Each Result of a Feed has its own
	// label set.
	Labels map[string]string
	// Start and End bound the cells the result's figures come from; End
	// is the timestamp every format gives the result.
	Start, End time.Time
	Figures    []Figure // in the order the report's tables list them
}

// Figure is one metric of a result.
type Figure struct {
	Key, Title, Unit string // the report's metric: "throughput", "Throughput", "Mbit/s"
	// Value is the mean over the repetitions (a case) or the median over
	// the samples (a sweep of message sizes, its per-cell rate the median
	// over cells).
	Value float64
	// Stat says which statistic Value is: "mean" (over the repetitions,
	// or a lab instance's units), "median" (a sweep's) or "value" (a
	// single figure: a percentile over a sweep's samples, a server's CPU
	// or peak memory over the run); "" is "mean".
	Stat string
	SD   float64 // sample standard deviation over the repetitions; NaN when not known
	N    int     // repetitions (a case) or samples (a sweep); 0 when not known
	// Ratio is Value's ratio to the reference series' on like work, with
	// the 95 % interval's bounds (docs/report.md); NaN when the result has
	// no reference or the run cannot give an interval. Reference names
	// the series it is compared with.
	Ratio, RatioLo, RatioHi float64
	Reference               string
	// Diff is, for a count (retransmits, lost datagrams), Value's
	// difference from the reference's with its 95 % interval, which the
	// report's tables show instead of the ratio; nil for other metrics.
	Diff *Difference
}

// Difference is a count's difference from the reference series, with its
// 95 % interval's bounds (NaN when the run cannot give one).
type Difference struct {
	Value, Lo, Hi float64
}

// feedFormats are the formats WriteFeed writes.
var feedFormats = []string{"openmetrics", "opensearch", "perfdash"}

// IsFeed reports whether format is written from a Feed (WriteFeed) rather
// than from the samples (Run).
func IsFeed(format string) bool { return slices.Contains(feedFormats, format) }

// FeedOptions are what the formats take besides the feed.
type FeedOptions struct {
	Index string // opensearch: the index every document goes to
	// NoTimestamps leaves OpenMetrics samples without timestamps, for a
	// Pushgateway, which refuses pushed samples that have one (Prometheus'
	// importer needs them).
	NoTimestamps bool
}

// DefaultIndex is the OpenSearch index documents go to unless told.
const DefaultIndex = "cnperf-results"

// WriteFeed writes the feed in one of the feed formats.
func WriteFeed(w io.Writer, format string, f Feed, o FeedOptions) error {
	switch format {
	case "openmetrics":
		if o.NoTimestamps {
			f = withoutTimes(f)
		}
		return OpenMetrics(w, f)
	case "opensearch":
		if o.Index == "" {
			o.Index = DefaultIndex
		}
		return Bulk(w, f, o.Index)
	case "perfdash":
		return PerfDash(w, f)
	}
	return ValidateFormat(format)
}

// withoutTimes is f with every time zero, so no sample is stamped.
func withoutTimes(f Feed) Feed {
	out := Feed{RunID: f.RunID, Results: make([]Result, len(f.Results))}
	for i, r := range f.Results {
		r.Start, r.End = time.Time{}, time.Time{}
		out.Results[i] = r
	}
	return out
}

// finite reports whether x can be written as a number by every format
// (JSON has no NaN or infinity; a missing figure is left out instead).
func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// ts is a result's timestamp: its last cell's end, else the run's end,
// else the run's start.
func (f Feed) ts(r Result) time.Time {
	for _, t := range []time.Time{r.End, f.End, f.Start} {
		if !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

// checkLabels refuses a feed in which two results share a label set: a
// time series database would take the second for a new value of the first.
func checkLabels(f Feed) error {
	seen := map[string]bool{}
	for _, r := range f.Results {
		k := labelKey(r.Labels)
		if seen[k] {
			return fmt.Errorf("two results with the labels %s", k)
		}
		seen[k] = true
	}
	return nil
}

func labelKey(l map[string]string) string {
	var b []byte
	for _, k := range sortedKeys(l) {
		b = fmt.Appendf(b, "%s=%q,", k, l[k])
	}
	return string(b)
}
