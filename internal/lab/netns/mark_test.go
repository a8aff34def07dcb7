package netns

import (
	"testing"

	"github.com/cnperf/cnperf/internal/lab/owner"
)

func TestMarkRoundTrip(t *testing.T) {
	for _, m := range []Mark{
		{Lab: "r1ab_bare", Mode: "bare", Owner: owner.ID{PID: 77, Start: 123}},
		{Lab: "demo", Mode: "overlay-userspace", Owner: owner.None},
	} {
		got, ok := parseMark(m.String())
		if !ok || got != m {
			t.Errorf("parseMark(%q) = %+v, %v; want %+v", m.String(), got, ok, m)
		}
	}
}

func TestParseMarkRefusesOthers(t *testing.T) {
	for _, s := range []string{
		"",                                  // a user's namespace: no alias
		"my loopback",                       // someone else's alias
		"cnperf:dev",                        // cnperf's link alias, not a namespace mark
		"cnperf:dev mode=bare",              // no owner
		"cnperf:dev mode=bare owner=x",      // bad owner
		"cnperf:Dev-1 mode=bare owner=none", // not a lab name
		"cnperf:dev mode=bare owner=none extra",
	} {
		if m, ok := parseMark(s); ok {
			t.Errorf("parseMark(%q) = %+v: taken for cnperf's", s, m)
		}
	}
}
