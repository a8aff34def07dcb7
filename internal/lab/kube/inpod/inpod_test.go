package inpod

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/record"
)

func TestSplitTakesOutRunsLines(t *testing.T) {
	var rest bytes.Buffer
	var pid int
	var u record.Usage
	w := Split(&rest, func(p int) { pid = p }, func(x record.Usage) { u = x })
	fmt.Fprintf(w, "%s4242\nserver: listening\n", PIDPrefix)
	fmt.Fprintf(w, `%s{"source":"rusage","cpu_seconds":1.5,"memory_peak":2048}`+"\n", UsagePrefix)
	fmt.Fprint(w, "last line without newline")
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if pid != 4242 || u.CPUSeconds != 1.5 || u.MemoryPeak != 2048 || u.Source != "rusage" {
		t.Errorf("pid %d usage %+v", pid, u)
	}
	if got := rest.String(); got != "server: listening\nlast line without newline\n" {
		t.Errorf("passed on %q", got)
	}
}

func TestSplitIgnoresMangledLines(t *testing.T) {
	var rest bytes.Buffer
	called := false
	w := Split(&rest, func(int) { called = true }, func(record.Usage) { called = true })
	fmt.Fprintf(w, "%sx\n%s{broken\n", PIDPrefix, UsagePrefix)
	_ = w.Close()
	if called || rest.Len() != 0 {
		t.Errorf("called %v, passed on %q", called, rest.String())
	}
}

// FuzzSplit: whatever a pod prints, Split neither panics nor loses a line
// that is not its own.
func FuzzSplit(f *testing.F) {
	f.Add(PIDPrefix + "12\nhello\n" + UsagePrefix + "{}\n")
	f.Add(strings.Repeat("x", 70000) + "\n")
	f.Add(UsagePrefix + `{"cpu_seconds":"NaN"}`)
	f.Fuzz(func(t *testing.T, in string) {
		var rest bytes.Buffer
		w := Split(&rest, func(int) {}, func(record.Usage) {})
		_, _ = w.Write([]byte(in))
		_ = w.Close()
	})
}
