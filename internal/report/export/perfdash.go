package export

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"regexp"
	"strings"
)

// DataItem is one of perfdash's points: buckets ("Perc50", "Average") to
// values in Unit, and labels saying what was measured. perfdash wants the
// items with the same labels to have the same buckets and unit.
type DataItem struct {
	Data   map[string]float64 `json:"data"`
	Unit   string             `json:"unit"`
	Labels map[string]string  `json:"labels,omitempty"`
}

// percentileKey is a metric key that is a percentile: rtt_p50, latency_p99.
var percentileKey = regexp.MustCompile(`^(.+)_p(\d{1,2})$`)

// PerfDash writes the feed's latency percentiles and throughputs as
// perfdash's JSON: per result, one item per group of percentiles of one
// quantity (rtt_p50 and rtt_p99 become {"Perc50", "Perc99"} of "rtt") and
// one per rate (a unit per second: Mbit/s, 1/s, req/s, MB/s) with its mean
// as "Average". Each item is labelled with its result's labels and
// "Metric", the quantity's key; µs is written "us". The document is
// perfdash's input, kubernetes/perf-tests' perftype.PerfData (as
// ClusterLoader2 and cilium-cli's connectivity perf write it:
// {"version": "v1", "dataItems": [...]}), indented as json.Encoder
// would, written result by result: each
// item repeats its result's labels, and the items are never held all at
// once.
func PerfDash(w io.Writer, f Feed) error {
	if err := checkLabels(f); err != nil {
		return err
	}
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n  \"version\": \"v1\",\n  \"dataItems\": [")
	var item bytes.Buffer
	enc := json.NewEncoder(&item)
	enc.SetEscapeHTML(false)
	enc.SetIndent("    ", "  ") // as an element of dataItems
	written := 0
	for _, r := range f.Results {
		for _, it := range perfDashItems(r) {
			item.Reset()
			if err := enc.Encode(it); err != nil {
				return err
			}
			if written > 0 {
				bw.WriteByte(',')
			}
			bw.WriteString("\n    ")
			bw.Write(bytes.TrimSuffix(item.Bytes(), []byte("\n")))
			written++
		}
	}
	if written > 0 {
		bw.WriteString("\n  ")
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

// perfDashItems are one result's items.
func perfDashItems(r Result) []DataItem {
	var items []DataItem
	labels := func(metric string) map[string]string {
		l := map[string]string{"Metric": metric}
		for k, v := range r.Labels {
			if v != "" {
				l[k] = v
			}
		}
		return l
	}
	groups := map[string]int{} // quantity → its item's index in items
	for _, fig := range r.Figures {
		if !finite(fig.Value) {
			continue
		}
		unit := strings.ReplaceAll(fig.Unit, "µ", "u")
		if m := percentileKey.FindStringSubmatch(fig.Key); m != nil {
			name, bucket := m[1], "Perc"+m[2]
			if i, ok := groups[name+" "+unit]; ok {
				items[i].Data[bucket] = fig.Value
				continue
			}
			groups[name+" "+unit] = len(items)
			items = append(items, DataItem{Data: map[string]float64{bucket: fig.Value}, Unit: unit, Labels: labels(name)})
			continue
		}
		if strings.HasSuffix(fig.Unit, "/s") {
			items = append(items, DataItem{Data: map[string]float64{"Average": fig.Value}, Unit: unit, Labels: labels(fig.Key)})
		}
	}
	return items
}
