package importer

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

// --series names tags as series; a tag the data lacks, a name given twice
// or taken by another tag, or a bad pair is refused naming the pair.
func TestRename(t *testing.T) {
	samples := func() []record.Sample {
		return []record.Sample{{Mode: "Reference"}, {Mode: "Docker"}, {Mode: "Docker+SDN"}}
	}
	s := samples()
	if err := Rename(s, []string{"Reference=bare", "Docker=bridge"}); err != nil || s[0].Mode != "bare" || s[1].Mode != "bridge" || s[2].Mode != "Docker+SDN" {
		t.Fatalf("%v %+v", err, s)
	}
	for _, bad := range [][]string{
		{"Weave=overlay"}, {"Reference"}, {"Reference="}, {"Reference=a b"}, {"Reference=x", "Docker=x"},
		{"Reference=Docker"}, {"Reference=" + strings.Repeat("x", record.MaxNameBytes+1)},
	} {
		if err := Rename(samples(), bad); err == nil || !strings.HasPrefix(err.Error(), "--series") {
			t.Errorf("%q: %v", bad, err)
		}
	}
	s = samples()
	if err := Rename(s, []string{"Reference=Docker", "Docker=Reference"}); err != nil || s[0].Mode != "Docker" {
		t.Errorf("a swap: %v %+v", err, s)
	}
}
