// Package docgen renders the tables of the docs that the code declares:
// each workload's parameters (its workload.Params, from the registry, and
// ping-pong's) and the conditions (conditions.Fields). A doc marks such a
// table with a comment line before it and one after it:
//
//	<!-- generated: workload-params stream -->
//	...
//	<!-- end generated -->
//
// and Update rewrites what lies between from the declarations. The test of
// this package fails when a doc's region differs from what it renders now;
// `go test ./internal/docgen -update` rewrites them.
package docgen

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// The markers of a generated region, each alone on its line.
const (
	beginPrefix = "<!-- generated: "
	beginSuffix = " -->"
	End         = "<!-- end generated -->"
)

// Render returns the table a region names: "workload-params NAME" (a
// socket workload's parameters), "pingpong-params" (a ping-pong test's),
// "conditions", or from the stored runs under root (FindingsDir)
// "findings" (the papers' findings) and "findings-count" (their tally).
func Render(region, root string) (string, error) {
	kind, arg, _ := strings.Cut(region, " ")
	switch {
	case kind == "workload-params" && arg != "":
		w, ok := registry.Lookup(arg)
		if !ok {
			return "", fmt.Errorf("workload-params %s: no such socket workload (the registry has %s)", arg, strings.Join(registry.All().Names(), ", "))
		}
		return ParamTable(w.Params())
	case region == "pingpong-params":
		return ParamTable(pingpong.Descriptor.Params())
	case region == "conditions":
		return ConditionTable(conditions.Fields), nil
	case region == "findings":
		return FindingsPage(root)
	case region == "findings-count":
		return FindingsCount(root)
	}
	return "", fmt.Errorf("%q: not a region docgen renders (workload-params NAME, pingpong-params, conditions, findings, findings-count)", region)
}

// Regions lists every region the declarations call for: a parameter table
// of each socket workload and of ping-pong, the conditions' table, the
// papers' findings and their tally.
func Regions() []string {
	var out []string
	for _, name := range registry.All().Names() {
		out = append(out, "workload-params "+name)
	}
	return append(out, "pingpong-params", "conditions", "findings", "findings-count")
}

// Update returns text with every generated region rendered anew (from
// the repository at root), and the regions it holds, in order. A region
// opened and not closed, or one Render does not know, is an error naming
// its line.
func Update(text, root string) (string, []string, error) {
	lines := strings.Split(text, "\n")
	var out, found []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		out = append(out, l)
		region, ok := begin(l)
		if !ok {
			if l == End {
				return "", nil, fmt.Errorf("line %d: %s without a region before it", i+1, End)
			}
			continue
		}
		table, err := Render(region, root)
		if err != nil {
			return "", nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		j := i + 1
		for j < len(lines) && lines[j] != End {
			if _, ok := begin(lines[j]); ok {
				return "", nil, fmt.Errorf("line %d: a region inside %q (line %d)", j+1, region, i+1)
			}
			j++
		}
		if j == len(lines) {
			return "", nil, fmt.Errorf("line %d: %q has no %s", i+1, region, End)
		}
		// Blank lines around a table, so that Markdown ends it before the
		// closing comment; a line of prose needs none.
		if table = strings.TrimSuffix(table, "\n"); strings.Contains(table, "\n") {
			out = append(out, "", table, "", End)
		} else {
			out = append(out, table, End)
		}
		found = append(found, region)
		i = j
	}
	return strings.Join(out, "\n"), found, nil
}

var beginRE = regexp.MustCompile(`^` + regexp.QuoteMeta(beginPrefix) + `([a-z][a-z0-9 -]*[a-z0-9])` + regexp.QuoteMeta(beginSuffix) + `$`)

// begin reports whether l opens a region, and which.
func begin(l string) (string, bool) {
	m := beginRE.FindStringSubmatch(l)
	if m == nil {
		return "", false
	}
	return m[1], true
}

// ParamTable is a workload's parameters as a Markdown table: the spec's
// field, its kind and unit, its bounds (per protocol where they differ),
// the client's default and flag, whether a sweep may vary it, and the
// flag's help. Every parameter must say its help: the docs repeat it.
func ParamTable(ps []workload.Param) (string, error) {
	var b strings.Builder
	b.WriteString("| field | takes | bounds | default | client flag | sweep | meaning |\n|---|---|---|---|---|---|---|\n")
	for _, p := range ps {
		if p.Help == "" {
			return "", fmt.Errorf("parameter %s: no Help; the docs' table repeats it", p.Name)
		}
		flag := "(the runner)"
		if p.Flag != "" {
			flag = "`" + p.Flag + "`"
			if p.Short != "" {
				flag += ", `-" + p.Short + "`"
			}
			if p.FlagSets != "" {
				flag += " (sets " + p.FlagSets + ")"
			}
		}
		def := p.Default
		if def == "" && p.Kind == workload.Choice {
			def = p.Choices[0]
		}
		if def == "" {
			def = "–"
		} else {
			def = "`" + def + "`"
		}
		sweep := ""
		if p.Sweep {
			sweep = "yes"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %s | %s |\n",
			p.Name, takes(p), bounds(p), def, flag, sweep, cell(p.Help))
	}
	return b.String(), nil
}

// takes says what kind of value a parameter takes.
func takes(p workload.Param) string {
	switch p.Kind {
	case workload.Whole:
		if p.Unit == "" {
			return "whole number"
		}
		return p.Unit
	case workload.Duration:
		return "duration"
	case workload.Switch:
		return "`true`, `false`"
	case workload.Rate:
		return "bits/s: k, M, G, T"
	case workload.Choice:
		return "`" + strings.Join(p.Choices, "`, `") + "`"
	case workload.Fraction:
		return "fraction"
	}
	return "?"
}

// bounds says what Param.Validate accepts of a set value, bound by bound
// in the order it picks them (a protocol's own first).
func bounds(p workload.Param) string {
	switch p.Kind {
	case workload.Rate:
		return "0.." + number(workload.MaxRate/1_000_000_000_000) + "T"
	case workload.Switch, workload.Choice:
		return ""
	case workload.Fraction:
		return "(0, 1]"
	}
	if len(p.Bounds) == 0 {
		if p.Kind == workload.Duration {
			return "≥ 0s"
		}
		return "≥ 0"
	}
	var parts []string
	for _, bd := range p.Bounds {
		var r string
		switch {
		case p.Kind == workload.Duration && bd.Min == 1: // any duration above 0
			r = "(0s, " + conditions.ShortDuration(time.Duration(bd.Max)) + "]"
		case p.Kind == workload.Duration:
			r = "0s.." + conditions.ShortDuration(time.Duration(bd.Max))
		case bd.Min == math.MinInt64 && bd.Max == math.MaxInt64:
			r = "any"
		default:
			r = number(bd.Min) + ".." + number(bd.Max)
			if bd.What != "" {
				r += " (" + bd.What + ")"
			}
		}
		switch {
		case bd.Protocol != "":
			r = bd.Protocol + ": " + r
		case len(p.Bounds) > 1:
			r = "else " + r
		}
		parts = append(parts, r)
	}
	return strings.Join(parts, "; ")
}

// number writes a bound: whole MiB as such, large numbers grouped.
func number(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return strconv.FormatInt(n>>20, 10) + " MiB"
	}
	s := strconv.FormatInt(n, 10)
	if n < 100_000 {
		return s
	}
	var out []byte
	for i := range len(s) {
		if i > 0 && (len(s)-i)%3 == 0 {
			out = append(out, ',')
		}
		out = append(out, s[i])
	}
	return string(out)
}

// ConditionTable is the conditions as a Markdown table.
func ConditionTable(fs []conditions.Field) string {
	var b strings.Builder
	b.WriteString("| condition | takes | what it does |\n|---|---|---|\n")
	for _, f := range fs {
		fmt.Fprintf(&b, "| `%s` | %s | %s |\n", f.Name, cell(f.Values), cell(f.Meaning))
	}
	return b.String()
}

// cell escapes what would end a table cell.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
