package cost

import (
	"context"
	"math"
	"os"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	cases := []struct {
		line      string
		user, sys float64
		wantErr   bool
	}{
		// utime 250 ticks, stime 75 ticks.
		{"1234 (cnperf) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 8 0 100 0 0", 2.5, 0.75, false},
		// A command name with spaces and parentheses.
		{"99 (a (b) c) R 1 1 1 0 -1 0 0 0 0 0 10 20 0 0 20 0 1 0 1 0 0", 0.1, 0.2, false},
		{"no parens here", 0, 0, true},
		{"1 (x) S 1", 0, 0, true},
	}
	for _, c := range cases {
		u, s, err := parseStat(c.line)
		if (err != nil) != c.wantErr || u != c.user || s != c.sys {
			t.Errorf("parseStat(%q) = %v, %v, %v; want %v, %v, err %v", c.line, u, s, err, c.user, c.sys, c.wantErr)
		}
	}
}

func TestBusyPercentFromProcStat(t *testing.T) {
	// Two readings 1 s apart on a 2-core machine: core 0 fully busy
	// (100 user ticks), core 1 idle; iowait counts as idle, guest is
	// already inside user.
	a := "cpu  1000 0 500 8000 100 0 0 0 0 0\ncpu0 500 0 250 4000 50 0 0 0 0 0\ncpu1 500 0 250 4000 50 0 0 0 0 0\nintr 1\n"
	b := "cpu  1100 0 500 8090 110 0 0 0 5 0\ncpu0 600 0 250 4000 50 0 0 0 5 0\ncpu1 500 0 250 4090 60 0 0 0 0 0\nintr 2\n"
	ta, err := parseProcStat(a)
	if err != nil {
		t.Fatal(err)
	}
	tb, err := parseProcStat(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(ta) != 3 {
		t.Fatalf("%d cpu lines", len(ta))
	}
	// all: busy 100 of 200 ticks; core 0: 100 of 100; core 1: 0 of 100.
	for i, want := range []float64{50, 100, 0} {
		if got := busyPercent(ta[i], tb[i]); math.Abs(got-want) > 1e-9 {
			t.Errorf("cpu line %d: busy %v %%, want %v", i, got, want)
		}
	}
	if _, err := parseProcStat("intr 1\n"); err == nil {
		t.Error("no cpu lines must be an error")
	}
}

func TestStatusKB(t *testing.T) {
	text := "Name:\tcnperf\nVmHWM:\t   12345 kB\nVmRSS:\t    1000 kB\n"
	if got := statusKB(text, "VmHWM:"); got != 12345*1024 {
		t.Errorf("VmHWM = %d", got)
	}
	if got := statusKB(text, "Missing:"); got != 0 {
		t.Errorf("missing key = %d", got)
	}
}

func TestProcUsageOfThisProcess(t *testing.T) {
	deadline := time.Now().Add(50 * time.Millisecond)
	for time.Now().Before(deadline) { // burn a little CPU
	}
	p, err := ProcUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if p.UserSeconds+p.SystemSeconds <= 0 || p.PeakRSS <= 0 || p.PeakRSS < p.RSS {
		t.Errorf("usage = %+v", p)
	}
	if _, err := ProcUsage(-1); err == nil {
		t.Error("a missing process must be an error")
	}
}

func TestSampleEmitsPerCoreIntervals(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	var got []CPUSample
	if err := Sample(ctx, 50*time.Millisecond, func(s CPUSample) { got = append(got, s) }); err != nil {
		t.Fatal(err)
	}
	if len(got) < 3 {
		t.Fatalf("%d samples in 250 ms at 50 ms", len(got))
	}
	for _, s := range got {
		if len(s.Cores) < 1 || s.All < 0 || s.All > 100 || s.Committed <= 0 || s.Workload != "cpu" {
			t.Errorf("sample %+v", s)
		}
	}
}
