package export

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// BulkAction is a bulk request's action line: index the document that
// follows into Index.
type BulkAction struct {
	Index struct {
		Index string `json:"_index"`
	} `json:"index"`
}

// BulkDoc is one result as an OpenSearch or Elasticsearch document. Its
// names follow kube-burner's and k8s-netperf's documents where they mean
// the same thing (uuid, metricName, timestamp, labels), so a dashboard of
// theirs finds a cnperf run by its uuid and time.
type BulkDoc struct {
	UUID       string            `json:"uuid"` // the run's id, as kube-burner's uuid
	RunID      string            `json:"runId"`
	MetricName string            `json:"metricName"` // always "cnperfResult": one document per result
	Timestamp  string            `json:"timestamp"`  // the result's end (RFC 3339, UTC)
	StartTime  string            `json:"startTime,omitempty"`
	EndTime    string            `json:"endTime,omitempty"`
	Labels     map[string]string `json:"labels"`
	// Per metric key: the value, its unit, its title, the standard
	// deviation and repetitions, and the ratio to the reference with its
	// 95 % interval. A metric without a finite value is left out.
	Values map[string]float64   `json:"values"`
	Units  map[string]string    `json:"units"`
	Titles map[string]string    `json:"titles"`
	Stats  map[string]string    `json:"stats"` // which statistic each value is: mean, median or value (Figure.Stat)
	SD     map[string]float64   `json:"sd,omitempty"`
	N      map[string]int       `json:"n,omitempty"`
	Ratios map[string]BulkRatio `json:"ratios,omitempty"`
	// Differences are a count's difference from the reference series.
	Differences map[string]BulkDifference `json:"differences,omitempty"`
}

// BulkDifference is a count's difference from its reference series.
type BulkDifference struct {
	Reference  string   `json:"reference"`
	Difference float64  `json:"difference"`
	Low        *float64 `json:"low,omitempty"`
	High       *float64 `json:"high,omitempty"`
}

// BulkRatio is a metric's ratio to its reference series.
type BulkRatio struct {
	Reference string   `json:"reference"`
	Ratio     float64  `json:"ratio"`
	Low       *float64 `json:"low,omitempty"`
	High      *float64 `json:"high,omitempty"`
}

// MetricName is every cnperf document's metricName.
const MetricName = "cnperfResult"

// ValidateIndex refuses an index name OpenSearch and Elasticsearch
// refuse, in the words of `cnperf export --index`.
func ValidateIndex(index string) error {
	bad := func(why string) error { return fmt.Errorf("--index %q: %s", index, why) }
	switch {
	case index == "":
		return bad("empty")
	case len(index) > 255:
		return bad("longer than 255 bytes")
	case !utf8.ValidString(index):
		return bad("not UTF-8")
	case index == "." || index == "..":
		return bad("not an index name")
	case strings.ToLower(index) != index:
		return bad("index names are lower case")
	case strings.ContainsAny(index[:1], "-_+"):
		return bad("an index name cannot start with -, _ or +")
	case strings.ContainsAny(index, `\/*?"<>| ,#:`):
		return bad(`an index name cannot hold \ / * ? " < > | space , # or :`)
	}
	return nil
}

// Bulk writes the feed as a bulk-ingest request body (NDJSON): per result
// an action line indexing into index and the result's document (BulkDoc),
// each line ending in a newline, the last one too, as the _bulk API wants.
func Bulk(w io.Writer, f Feed, index string) error {
	if err := ValidateIndex(index); err != nil {
		return err
	}
	if err := checkLabels(f); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	var action BulkAction
	action.Index.Index = index
	for _, r := range f.Results {
		doc := BulkDoc{UUID: f.RunID, RunID: f.RunID, MetricName: MetricName, Timestamp: rfc3339(f.ts(r)),
			StartTime: rfc3339(r.Start), EndTime: rfc3339(r.End), Labels: map[string]string{},
			Values: map[string]float64{}, Units: map[string]string{}, Titles: map[string]string{}, Stats: map[string]string{}}
		for k, v := range r.Labels {
			if v != "" {
				doc.Labels[k] = v
			}
		}
		for _, fig := range r.Figures {
			if !finite(fig.Value) {
				continue
			}
			doc.Values[fig.Key], doc.Units[fig.Key], doc.Titles[fig.Key] = fig.Value, fig.Unit, fig.Title
			doc.Stats[fig.Key] = fig.Stat
			if fig.Stat == "" {
				doc.Stats[fig.Key] = "mean"
			}
			if finite(fig.SD) {
				if doc.SD == nil {
					doc.SD = map[string]float64{}
				}
				doc.SD[fig.Key] = fig.SD
			}
			if fig.N > 0 {
				if doc.N == nil {
					doc.N = map[string]int{}
				}
				doc.N[fig.Key] = fig.N
			}
			if d := fig.Diff; d != nil && finite(d.Value) {
				if doc.Differences == nil {
					doc.Differences = map[string]BulkDifference{}
				}
				bd := BulkDifference{Reference: fig.Reference, Difference: d.Value}
				if finite(d.Lo) && finite(d.Hi) {
					lo, hi := d.Lo, d.Hi
					bd.Low, bd.High = &lo, &hi
				}
				doc.Differences[fig.Key] = bd
			}
			if finite(fig.Ratio) {
				if doc.Ratios == nil {
					doc.Ratios = map[string]BulkRatio{}
				}
				br := BulkRatio{Reference: fig.Reference, Ratio: fig.Ratio}
				if finite(fig.RatioLo) && finite(fig.RatioHi) {
					lo, hi := fig.RatioLo, fig.RatioHi
					br.Low, br.High = &lo, &hi
				}
				doc.Ratios[fig.Key] = br
			}
		}
		if err := enc.Encode(action); err != nil {
			return err
		}
		if err := enc.Encode(doc); err != nil {
			return fmt.Errorf("result %s: %w", labelKey(r.Labels), err)
		}
	}
	return bw.Flush()
}

// rfc3339 is t in UTC to the nanosecond, "" for a zero time.
func rfc3339(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}
