// Package profile attributes the CPU a run's cells spent, as their
// sampled stacks (record.Stacks) show it, to named parts of the network
// path (parts.txt), per series and against the reference.
package profile

import (
	_ "embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
)

//go:embed parts.txt
var partsFile string

// What a sample is attributed to besides the map's parts.
const (
	Other   = "other (unattributed)" // no frame matched a rule
	Outside = "outside the lab"      // other processes' and the runner's own work, outside softirq
	Idle    = "idle"
)

// Where a sample ran, besides its context's name (server, client, router,
// delayline): in softirq whatever its context, a daemon's, or outside.
const (
	InSoftirq = "softirq"
	InDaemons = "daemons"
)

// Map says which part of the path a stack's frames belong to.
type Map struct {
	parts   []string
	rules   []rule
	softirq *regexp.Regexp
}

type rule struct {
	part     int
	kernel   bool
	contexts []string // a user rule's contexts; none: any
	re       *regexp.Regexp
}

// Bounds of a parts file: it is compiled in, but read like any file.
const (
	maxRules   = 1000
	maxPattern = 4096
)

// Default is the map compiled into cnperf (parts.txt), which its tests
// hold valid.
func Default() *Map {
	m, err := Parse(partsFile)
	if err != nil {
		panic("profile: parts.txt: " + err.Error())
	}
	return m
}

// Parse reads a parts file (parts.txt says its syntax); an error names the
// line.
func Parse(text string) (*Map, error) {
	m := &Map{}
	for n, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		key, arg, _ := strings.Cut(line, " ")
		arg = strings.TrimSpace(arg)
		if arg == "" {
			return nil, fmt.Errorf("line %d: %q without a value", n+1, key)
		}
		if key == "part" {
			m.parts = append(m.parts, arg)
			continue
		}
		if len(arg) > maxPattern || len(m.rules) == maxRules {
			return nil, fmt.Errorf("line %d: past %d rules or a pattern past %d bytes", n+1, maxRules, maxPattern)
		}
		re, err := regexp.Compile("^(?:" + arg + ")$")
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n+1, err)
		}
		kind, ctx, scoped := strings.Cut(key, "@")
		switch {
		case key == "softirq" && m.softirq == nil:
			m.softirq = re
		case len(m.parts) == 0:
			return nil, fmt.Errorf("line %d: a rule before the first part", n+1)
		case kind == "kernel" && !scoped, kind == "user":
			r := rule{part: len(m.parts) - 1, kernel: kind == "kernel", re: re}
			if scoped {
				r.contexts = strings.Split(ctx, ",")
			}
			m.rules = append(m.rules, r)
		default:
			return nil, fmt.Errorf("line %d: %q is not part, kernel, user, user@CONTEXTS or one softirq", n+1, key)
		}
	}
	if m.softirq == nil || len(m.parts) == 0 {
		return nil, fmt.Errorf("no softirq line or no part")
	}
	return m, nil
}

// Parts are the map's parts in its file's order.
func (m *Map) Parts() []string { return m.parts }

// attributor classifies one set of stacks, remembering each frame's part:
// a cell's stacks share most of their frames.
type attributor struct {
	m     *Map
	parts map[string]int // kernel frame, or context and user frame: part, -1 none
	soft  map[string]bool
}

func (m *Map) attributor() *attributor {
	return &attributor{m: m, parts: map[string]int{}, soft: map[string]bool{}}
}

// Attribute sums stacks by part and by where the samples ran.
func (m *Map) Attribute(s record.Stacks) (parts, where map[string]uint64) {
	a := m.attributor()
	parts, where = map[string]uint64{}, map[string]uint64{}
	for stack, n := range s {
		p, w := a.classify(stack)
		parts[p] += n
		where[w] += n
	}
	return parts, where
}

// classify returns a stack's part and where it ran. The part is that of
// the leaf-most frame that matches a rule: the sample's own work, with the
// helpers every layer calls (locks, allocation, skb handling) charged to
// the layer that called them.
func (a *attributor) classify(stack string) (part, where string) {
	frames := strings.Split(stack, ";")
	ctx, frames := frames[0], frames[1:]
	softirq := false
	for _, f := range frames {
		if name, ok := strings.CutSuffix(f, record.KernelFrame); ok && a.isSoftirq(name) {
			softirq = true
			break
		}
	}
	switch {
	case softirq:
		where = InSoftirq
	case ctx == record.StackIdle:
		return Idle, Idle
	case strings.HasPrefix(ctx, record.StackDaemon):
		where = InDaemons
	case ctx == record.StackServer, ctx == record.StackClient, ctx == record.StackRouter, ctx == record.StackDelayline:
		where = ctx
	default: // other processes, the runner itself
		return Outside, Outside
	}
	for i := len(frames) - 1; i >= 0; i-- {
		if frames[i] == record.TruncatedFrame {
			return Other, where // stacks a cap cut: unknown
		}
		if p := a.part(ctx, frames[i]); p >= 0 {
			return a.m.parts[p], where
		}
	}
	return Other, where
}

func (a *attributor) isSoftirq(name string) bool {
	s, ok := a.soft[name]
	if !ok {
		s = a.m.softirq.MatchString(name)
		a.soft[name] = s
	}
	return s
}

// part is the part of a frame in a sample of context ctx, -1 for none.
func (a *attributor) part(ctx, frame string) int {
	name, kernel := strings.CutSuffix(frame, record.KernelFrame)
	key := frame
	if !kernel {
		key = ctx + ";" + frame
	}
	if p, ok := a.parts[key]; ok {
		return p
	}
	p := -1
	for _, r := range a.m.rules {
		if r.kernel == kernel && (r.contexts == nil || inContexts(ctx, r.contexts)) && r.re.MatchString(name) {
			p = r.part
			break
		}
	}
	a.parts[key] = p
	return p
}

// inContexts reports whether ctx is one of cs; "daemon:" stands for every
// daemon.
func inContexts(ctx string, cs []string) bool {
	for _, c := range cs {
		if c == ctx || c == record.StackDaemon && strings.HasPrefix(ctx, c) {
			return true
		}
	}
	return false
}
