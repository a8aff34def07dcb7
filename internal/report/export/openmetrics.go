package export

import (
	"bufio"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"
)

// labelOrder is the order labels are written in; others follow, sorted.
var labelOrder = []string{"run", "series", "mode", "driver", "variant", "instance", "case", "workload", "protocol", "param", "value"}

// sortedKeys are a label set's keys in labelOrder, then the rest sorted.
func sortedKeys(l map[string]string) []string {
	keys := make([]string, 0, len(l))
	for k := range l {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int {
		ia, ib := slices.Index(labelOrder, a), slices.Index(labelOrder, b)
		switch {
		case ia >= 0 && ib >= 0:
			return ia - ib
		case ia >= 0:
			return -1
		case ib >= 0:
			return 1
		}
		return strings.Compare(a, b)
	})
	return keys
}

// omUnits names cnperf's units as OpenMetrics units: lower case words a
// metric name can end in. A unit not listed is made one (omName).
var omUnits = map[string]string{
	"Mbit/s": "megabits_per_second",
	"MB/s":   "megabytes_per_second",
	"ms":     "milliseconds",
	"µs":     "microseconds",
	"s":      "seconds",
	"1/s":    "per_second",
	"req/s":  "requests_per_second",
	"%":      "percent",
	"% busy": "percent",
	"s/GB":   "seconds_per_gigabyte",
	"ms/GB":  "milliseconds_per_gigabyte",
	"MB":     "megabytes",
	"bits/s": "bits_per_second",
	// Counts and indices have no unit: a gauge named ..._count would read
	// as a summary's or histogram's count.
	"count":     "",
	"1 = equal": "",
}

// omUnit is the OpenMetrics unit of a cnperf unit ("" for none).
func omUnit(unit string) string {
	if u, ok := omUnits[unit]; ok {
		return u
	}
	return omName(strings.ToLower(unit))
}

// omName makes s a metric name's part: letters, digits and underscores,
// runs of anything else one underscore, none at either end.
func omName(s string) string {
	var b strings.Builder
	under := false
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			if under && b.Len() > 0 {
				b.WriteByte('_')
			}
			under = false
			b.WriteRune(r)
			continue
		}
		under = true
	}
	return b.String()
}

// omFamily is one metric family: its name, unit and help, and its
// samples' lines in the order written.
type omFamily struct {
	name, unit, help string
	lines            []string
}

// OpenMetrics writes the feed in the OpenMetrics 1.0 text format, for
// Prometheus' importer (promtool tsdb create-blocks-from openmetrics) or a
// Pushgateway: per metric (key and unit) a gauge family
// cnperf_KEY_UNIT with the result's value (stat="mean", "median" or
// "value", Figure.Stat) and its standard deviation (stat="sd"), and where the result has a reference a family
// cnperf_KEY_UNIT_ratio with the ratio to the reference (bound="estimate")
// and its 95 % interval's bounds (bound="low", "high"), and for a count
// (Figure.Diff) a family cnperf_KEY_difference_UNIT with the difference
// from the reference, bounded alike. Each sample is
// labelled with its result's labels and stamped with the result's end in
// seconds; the exposition ends with "# EOF".
func OpenMetrics(w io.Writer, f Feed) error {
	if err := checkLabels(f); err != nil {
		return err
	}
	var families []*omFamily
	byName := map[string]*omFamily{}
	family := func(name, unit, help string) *omFamily {
		if fam := byName[name]; fam != nil {
			return fam
		}
		fam := &omFamily{name: name, unit: unit, help: help}
		byName[name] = fam
		families = append(families, fam)
		return fam
	}
	for _, r := range f.Results {
		stamp := omTimestamp(f.ts(r))
		for _, fig := range r.Figures {
			unit := omUnit(fig.Unit)
			name := "cnperf_" + omName(fig.Key)
			if unit != "" {
				name += "_" + unit
			}
			what := fig.Title
			if fig.Unit != "" {
				what += " (" + fig.Unit + ")"
			}
			if finite(fig.Value) {
				stat := fig.Stat
				if stat == "" {
					stat = "mean"
				}
				fam := family(name, unit, what+"; stat: mean over the repetitions, sd their standard deviation, median over a sweep of message sizes, value a single figure (a percentile of a sweep's samples, a server's CPU or peak memory over the run)")
				fam.lines = append(fam.lines, omSample(name, r.Labels, [][2]string{{"stat", stat}}, fig.Value, stamp))
				if finite(fig.SD) {
					fam.lines = append(fam.lines, omSample(name, r.Labels, [][2]string{{"stat", "sd"}}, fig.SD, stamp))
				}
			}
			if d := fig.Diff; d != nil && finite(d.Value) {
				dname := "cnperf_" + omName(fig.Key) + "_difference"
				if unit != "" {
					dname += "_" + unit
				}
				fam := family(dname, unit, what+"; difference from the reference series (bound=estimate) with its 95 % interval (bound=low, high)")
				ref := [2]string{"reference", fig.Reference}
				fam.lines = append(fam.lines, omSample(dname, r.Labels, [][2]string{ref, {"bound", "estimate"}}, d.Value, stamp))
				if finite(d.Lo) && finite(d.Hi) {
					fam.lines = append(fam.lines,
						omSample(dname, r.Labels, [][2]string{ref, {"bound", "low"}}, d.Lo, stamp),
						omSample(dname, r.Labels, [][2]string{ref, {"bound", "high"}}, d.Hi, stamp))
				}
			}
			if !finite(fig.Ratio) {
				continue
			}
			rname := name + "_ratio"
			fam := family(rname, "ratio", what+"; ratio to the reference series (bound=estimate) with its 95 % interval (bound=low, high)")
			ref := [2]string{"reference", fig.Reference}
			fam.lines = append(fam.lines, omSample(rname, r.Labels, [][2]string{ref, {"bound", "estimate"}}, fig.Ratio, stamp))
			if finite(fig.RatioLo) && finite(fig.RatioHi) {
				fam.lines = append(fam.lines,
					omSample(rname, r.Labels, [][2]string{ref, {"bound", "low"}}, fig.RatioLo, stamp),
					omSample(rname, r.Labels, [][2]string{ref, {"bound", "high"}}, fig.RatioHi, stamp))
			}
		}
	}
	bw := bufio.NewWriter(w)
	for _, fam := range families {
		bw.WriteString("# TYPE " + fam.name + " gauge\n")
		if fam.unit != "" {
			bw.WriteString("# UNIT " + fam.name + " " + fam.unit + "\n")
		}
		bw.WriteString("# HELP " + fam.name + " " + omEscape(fam.help) + "\n")
		for _, l := range fam.lines {
			bw.WriteString(l)
		}
	}
	bw.WriteString("# EOF\n")
	return bw.Flush()
}

// omSample is one sample line: name{labels,extra} value timestamp.
func omSample(name string, labels map[string]string, extra [][2]string, v float64, stamp string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	first := true
	label := func(k, v string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(k + `="` + omEscape(v) + `"`)
	}
	for _, k := range sortedKeys(labels) {
		if labels[k] != "" {
			label(omName(k), labels[k])
		}
	}
	for _, kv := range extra {
		label(kv[0], kv[1])
	}
	b.WriteString("} ")
	b.WriteString(strconv.FormatFloat(v, 'g', -1, 64))
	if stamp != "" {
		b.WriteString(" " + stamp)
	}
	b.WriteByte('\n')
	return b.String()
}

// omEscape escapes a label value or help text as OpenMetrics wants:
// backslash, double quote and line feed, in UTF-8 (a byte that is not
// becomes U+FFFD).
func omEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`).Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

// omTimestamp is t in seconds since the epoch, to the millisecond; "" for
// a zero time (the sample then has none).
func omTimestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', -1, 64)
}
