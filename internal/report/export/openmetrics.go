package export

import (
	"bufio"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// labelOrder is the order labels are written in; others follow, sorted.
var labelOrder = []string{"run", "series", "mode", "driver", "variant", "instance", "case", "workload", "protocol", "param", "value"}

// sortedKeys are a label set's keys in labelOrder, then the rest sorted.
func sortedKeys(l map[string]string) []string {
	keys := slices.Collect(maps.Keys(l))
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

// omFamily is one metric family: its name, unit and help, and what its
// samples' lines are made of, in the order written: the figures (result
// r's figure f) and which of their lines each gives. The lines are made
// as they are written, never held: every line repeats its result's
// labels, and a family's lines may be many.
type omFamily struct {
	name, unit, help string
	refs             []omRef
}

// omRef is a figure's part of a family: its value (and sd), its
// difference from the reference or its ratio to it (with their bounds).
type omRef struct {
	r, f int
	part omPart
}

type omPart uint8

const (
	omValue omPart = iota
	omDiff
	omRatio
)

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
// seconds; the exposition ends with "# EOF". A family's samples are
// written together, as the format wants, and streamed to w.
func OpenMetrics(w io.Writer, f Feed) error {
	if err := checkLabels(f); err != nil {
		return err
	}
	var families []*omFamily
	byName := map[string]*omFamily{}
	add := func(name, unit, help string, ref omRef) {
		fam := byName[name]
		if fam == nil {
			fam = &omFamily{name: name, unit: unit, help: help}
			byName[name] = fam
			families = append(families, fam)
		}
		fam.refs = append(fam.refs, ref)
	}
	for ri, r := range f.Results {
		for fi, fig := range r.Figures {
			unit := omUnit(fig.Unit)
			what := fig.Title
			if fig.Unit != "" {
				what += " (" + fig.Unit + ")"
			}
			if finite(fig.Value) {
				add(omFamilyName(fig.Key, "", unit), unit, what+"; stat: mean over the repetitions, sd their standard deviation, median over a sweep of message sizes, value a single figure (a percentile of a sweep's samples, a server's CPU or peak memory over the run)", omRef{ri, fi, omValue})
			}
			if d := fig.Diff; d != nil && finite(d.Value) {
				add(omFamilyName(fig.Key, "_difference", unit), unit, what+"; difference from the reference series (bound=estimate) with its 95 % interval (bound=low, high)", omRef{ri, fi, omDiff})
			}
			if finite(fig.Ratio) {
				add(omFamilyName(fig.Key, "", unit)+"_ratio", "ratio", what+"; ratio to the reference series (bound=estimate) with its 95 % interval (bound=low, high)", omRef{ri, fi, omRatio})
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
		for _, ref := range fam.refs {
			r := f.Results[ref.r]
			fig := r.Figures[ref.f]
			stamp := omTimestamp(f.ts(r))
			switch ref.part {
			case omValue:
				stat := fig.Stat
				if stat == "" {
					stat = "mean"
				}
				omSample(bw, fam.name, r.Labels, [][2]string{{"stat", stat}}, fig.Value, stamp)
				if finite(fig.SD) {
					omSample(bw, fam.name, r.Labels, [][2]string{{"stat", "sd"}}, fig.SD, stamp)
				}
			case omDiff:
				omBounded(bw, fam.name, r.Labels, fig.Reference, fig.Diff.Value, fig.Diff.Lo, fig.Diff.Hi, stamp)
			case omRatio:
				omBounded(bw, fam.name, r.Labels, fig.Reference, fig.Ratio, fig.RatioLo, fig.RatioHi, stamp)
			}
		}
	}
	bw.WriteString("# EOF\n")
	return bw.Flush()
}

// omFamilyName is a figure's family: cnperf_KEY_UNIT for its values,
// cnperf_KEY_difference_UNIT (part "_difference") for a count's
// differences.
func omFamilyName(key, part, unit string) string {
	name := "cnperf_" + omName(key) + part
	if unit != "" {
		name += "_" + unit
	}
	return name
}

// omBounded writes an estimate against the reference series and, when
// both are finite, its interval's bounds.
func omBounded(w *bufio.Writer, name string, labels map[string]string, reference string, est, lo, hi float64, stamp string) {
	ref := [2]string{"reference", reference}
	omSample(w, name, labels, [][2]string{ref, {"bound", "estimate"}}, est, stamp)
	if finite(lo) && finite(hi) {
		omSample(w, name, labels, [][2]string{ref, {"bound", "low"}}, lo, stamp)
		omSample(w, name, labels, [][2]string{ref, {"bound", "high"}}, hi, stamp)
	}
}

// omSample writes one sample line: name{labels,extra} value timestamp.
func omSample(b *bufio.Writer, name string, labels map[string]string, extra [][2]string, v float64, stamp string) {
	b.WriteString(name)
	b.WriteByte('{')
	first := true
	label := func(k, v string) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(omEscape(v))
		b.WriteByte('"')
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
}

// omEscape escapes a label value or help text as OpenMetrics wants:
// backslash, double quote and line feed, in UTF-8 (a byte that is not
// becomes U+FFFD).
func omEscape(s string) string {
	return omEscaper.Replace(strings.ToValidUTF8(s, "\uFFFD"))
}

var omEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)

// omTimestamp is t in seconds since the epoch, to the millisecond; "" for
// a zero time (the sample then has none).
func omTimestamp(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', -1, 64)
}
