package progress

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// step drives a bar: samples samples (failed of them failed), then cells cells.
func step(b *Bar, samples, failed, cells int) {
	for i := 0; i < samples; i++ {
		b.Sample(i < failed)
	}
	for i := 0; i < cells; i++ {
		b.Cell()
	}
}

func TestLine(t *testing.T) {
	tests := []struct {
		name                   string
		cells, samples         int
		doSamples, fail, doCel int
		elapsed                time.Duration // how long ago the bar started
		want                   string
	}{
		{"fresh", 2, 10, 0, 0, 0, 0,
			"[                        ]   0%  cells 0/2  samples 0/10  ETA ?"},
		{"half done", 2, 10, 5, 0, 1, 10 * time.Second,
			"[============            ]  50%  cells 1/2  samples 5/10  ETA 10s"},
		{"quarter done with failures", 4, 100, 25, 3, 1, 30 * time.Second,
			"[======                  ]  25%  cells 1/4  samples 25/100  failed 3  ETA 1m30s"},
		{"all done", 2, 10, 10, 0, 2, 10 * time.Second,
			"[========================] 100%  cells 2/2  samples 10/10  ETA 0s"},
		{"more samples than planned", 1, 10, 12, 12, 1, time.Second,
			"[========================] 100%  cells 1/1  samples 12/10  failed 12  ETA 0s"},
		{"nothing planned", 0, 0, 0, 0, 0, 0,
			"[                        ]   0%  cells 0/0  records 0  ETA ?"},
		{"counted by cells", 4, 0, 7, 0, 1, 30 * time.Second,
			"[======                  ]  25%  cells 1/4  records 7  ETA 1m30s"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			b := New(&buf, tc.cells, tc.samples)
			b.start = time.Now().Add(-tc.elapsed)
			step(b, tc.doSamples, tc.fail, tc.doCel)
			if got := b.Line(); !sameLine(got, tc.want) {
				t.Errorf("Line() =\n%q\nwant\n%q", got, tc.want)
			}
		})
	}
}

// sameLine compares two bar lines exactly, except that an ETA may be off by
// a second from a slow test machine's delay.
func sameLine(got, want string) bool {
	if got == want {
		return true
	}
	g, ge, ok1 := strings.Cut(got, "  ETA ")
	w, we, ok2 := strings.Cut(want, "  ETA ")
	if !ok1 || !ok2 || g != w {
		return false
	}
	gd, err1 := time.ParseDuration(ge)
	wd, err2 := time.ParseDuration(we)
	return err1 == nil && err2 == nil && wd > 0 && (gd-wd).Abs() <= time.Second
}

// The public behaviour without touching internals: half done shows 50 %,
// the counts and a duration as ETA.
func TestLineHalfDonePublic(t *testing.T) {
	b := New(&bytes.Buffer{}, 2, 10)
	step(b, 5, 2, 1)
	line := b.Line()
	for _, want := range []string{"50%", "cells 1/2", "samples 5/10", "failed 2"} {
		if !strings.Contains(line, want) {
			t.Errorf("Line() = %q, missing %q", line, want)
		}
	}
	if !regexp.MustCompile(`  ETA ([0-9]+[hms])+$`).MatchString(line) {
		t.Errorf("Line() = %q, want a duration as ETA", line)
	}
	if fresh := New(&bytes.Buffer{}, 2, 10).Line(); strings.Contains(fresh, "failed") {
		t.Errorf("fresh bar shows failures: %q", fresh)
	}
}

func checkLines(t *testing.T, out string, want []string) {
	t.Helper()
	if strings.Contains(out, "\r") {
		t.Errorf("non-terminal output contains a carriage return: %q", out)
	}
	if out != "" && !strings.HasSuffix(out, "\n") {
		t.Errorf("output does not end in a newline: %q", out)
	}
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	if len(lines) != len(want) {
		t.Fatalf("got %d lines, want %d:\n%s", len(lines), len(want), out)
	}
	for i, w := range want {
		if !regexp.MustCompile(w).MatchString(lines[i]) {
			t.Errorf("line %d = %q, want match for %q", i, lines[i], w)
		}
	}
}

// Off a terminal the bar prints whole lines, at most one per interval, and
// Done always prints the final state.
func TestNonTTYWholeLines(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 2, 10)
	if b.tty {
		t.Fatal("a bytes.Buffer taken for a terminal")
	}
	step(b, 10, 1, 2) // only the first sample draws: the rest fall within 5 s
	b.Done()
	checkLines(t, buf.String(), []string{
		`^\[==                      \]  10%  cells 0/2  samples 1/10  failed 1  ETA [0-9hms]+$`,
		`^\[========================\] 100%  cells 2/2  samples 10/10  failed 1  ETA 0s$`,
	})
}

func TestNonTTYFile(t *testing.T) {
	f, err := os.Create(filepath.Join(t.TempDir(), "log"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b := New(f, 1, 2)
	if b.tty {
		t.Fatal("a regular file taken for a terminal")
	}
	step(b, 2, 0, 1)
	b.Done()
	out, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	checkLines(t, string(out), []string{
		`^\[============            \]  50%  cells 0/1  samples 1/2  ETA [0-9hms]+$`,
		`^\[========================\] 100%  cells 1/1  samples 2/2  ETA 0s$`,
	})
}

func TestNonTTYRedrawsAfterInterval(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 1, 4)
	b.every = 0 // every event draws
	step(b, 2, 0, 0)
	checkLines(t, buf.String(), []string{
		`  25%  cells 0/1  samples 1/4  ETA`,
		`  50%  cells 0/1  samples 2/4  ETA`,
	})
}

func TestDoneAtFull(t *testing.T) {
	var buf bytes.Buffer
	b := New(&buf, 3, 6)
	step(b, 6, 0, 3)
	b.Done()
	if got := b.Line(); !strings.HasSuffix(got, "ETA 0s") || !strings.Contains(got, "100%") {
		t.Errorf("Line() after Done = %q, want 100%% and ETA 0s", got)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	if last := lines[len(lines)-1]; last != "[========================] 100%  cells 3/3  samples 6/6  ETA 0s" {
		t.Errorf("last line = %q", last)
	}
}
