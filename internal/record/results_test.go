package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
)

type testMeta struct {
	Name  string `json:"name"`
	Cells int    `json:"cells"`
}

func sample(mode string, size, rep int) Sample {
	return Sample{
		Workload: "pingpong", Mode: mode, Labels: map[string]string{"host": "a"},
		Cell: rep, Size: size, Rep: rep, DurationMS: 1.5 + float64(rep), LatencyMS: 2.25,
		Length: size, Code: 200, Retries: rep, Time: time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC),
	}
}

func mustCreate(t *testing.T, dir string) *Run {
	t.Helper()
	r, err := Create(dir)
	if err != nil {
		t.Fatalf("Create: %v", err)
	}
	return r
}

// mustOpen opens a run for reading, as the report and export commands do.
func mustOpen(t *testing.T, dir string) *Reader {
	t.Helper()
	rd, err := Open(dir)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	return rd
}

func TestRoundTrip(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run1")
	r := mustCreate(t, dir)
	if r.Dir() != dir {
		t.Errorf("Dir() = %q, want %q", r.Dir(), dir)
	}
	if err := r.WriteMeta(testMeta{Name: "first", Cells: 1}); err != nil {
		t.Fatal(err)
	}
	want := []Sample{sample("bare", 100, 0), sample("bridge", 200, 1)}
	want[1].Error = "timeout"
	want[1].Labels = nil
	for _, s := range want {
		if err := r.Append(s); err != nil {
			t.Fatal(err)
		}
	}
	// Another workload's line is skipped silently by PingPong.
	if err := r.Append(map[string]any{"workload": "iperf", "bps": 1e9}); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMeta(testMeta{Name: "updated", Cells: 2}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if err := r.Append(want[0]); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Append after Close: err = %v, want os.ErrClosed", err)
	}

	// No temporary files are left behind by WriteMeta.
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !reflect.DeepEqual(names, []string{MetaFile, SamplesFile}) {
		t.Errorf("dir holds %v", names)
	}

	rd, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var m testMeta
	if err := rd.Meta(&m); err != nil {
		t.Fatal(err)
	}
	if m != (testMeta{Name: "updated", Cells: 2}) {
		t.Errorf("Meta = %+v", m)
	}
	raw, _ := os.ReadFile(filepath.Join(dir, MetaFile))
	if !strings.Contains(string(raw), "\n  \"name\"") {
		t.Errorf("run.json is not indented:\n%s", raw)
	}

	c, rep, err := mustOpen(t, dir).Contents()
	got := c.PingPong
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PingPong samples =\n%+v\nwant\n%+v", got, want)
	}
	if rep.Lines != 3 || rep.Skipped != 0 || len(rep.Problems) != 0 {
		t.Errorf("report = %+v, want 3 lines, nothing skipped", rep)
	}
}

func TestDamagedLines(t *testing.T) {
	good := func(size int) string {
		b, _ := json.Marshal(sample("bare", size, 0))
		return string(b)
	}
	full := good(300)
	tests := []struct {
		name      string
		content   string
		wantSizes []int
		lines     int
		skipped   int
		problem   string // substring of the first problem
	}{
		{"clean", good(1) + "\n" + good(2) + "\n", []int{1, 2}, 2, 0, ""},
		{"truncated last line", good(1) + "\n" + good(2) + "\n" + full[:len(full)/2], []int{1, 2}, 3, 1, "truncated last line"},
		{"last line without newline but complete", good(1) + "\n" + good(2), []int{1, 2}, 2, 0, ""},
		{"corrupt middle line", good(1) + "\n{\"workload\":\"pingpong\",\x00}\n" + good(2) + "\n", []int{1, 2}, 3, 1, ":2: not valid JSON"},
		{"wrong type", good(1) + "\n{\"workload\":\"pingpong\",\"size\":\"big\"}\n", []int{1}, 2, 1, "bad pingpong sample"},
		{"not an object", "42\n" + good(1) + "\n", []int{1}, 2, 1, "not a JSON object"},
		{"blank lines ignored", "\n" + good(1) + "\n\n  \n", []int{1}, 1, 0, ""},
		{"empty file", "", nil, 0, 0, ""},
		{"other workload", "{\"workload\":\"iperf\"}\n" + good(1) + "\n", []int{1}, 2, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, MetaFile), []byte("{}\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, SamplesFile), []byte(tt.content), 0o644); err != nil {
				t.Fatal(err)
			}
			c, rep, err := mustOpen(t, dir).Contents()
			got := c.PingPong
			if err != nil {
				t.Fatalf("Contents: %v", err)
			}
			var sizes []int
			for _, s := range got {
				sizes = append(sizes, s.Size)
			}
			if !reflect.DeepEqual(sizes, tt.wantSizes) {
				t.Errorf("sizes = %v, want %v", sizes, tt.wantSizes)
			}
			if rep.Lines != tt.lines || rep.Skipped != tt.skipped {
				t.Errorf("report = %+v, want Lines %d Skipped %d", rep, tt.lines, tt.skipped)
			}
			if len(rep.Problems) != tt.skipped {
				t.Errorf("problems = %q, want %d", rep.Problems, tt.skipped)
			}
			if tt.problem != "" && (len(rep.Problems) == 0 || !strings.Contains(rep.Problems[0], tt.problem)) {
				t.Errorf("problems = %q, want one containing %q", rep.Problems, tt.problem)
			}
		})
	}
}

func TestProblemsCapped(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, MetaFile), []byte("{}"), 0o644)
	os.WriteFile(filepath.Join(dir, SamplesFile), []byte(strings.Repeat("garbage\n", 100)), 0o644)
	_, rep, err := mustOpen(t, dir).Contents()
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lines != 100 || rep.Skipped != 100 || len(rep.Problems) != MaxProblems+1 {
		t.Errorf("Lines %d Skipped %d Problems %d", rep.Lines, rep.Skipped, len(rep.Problems))
	}
}

func TestConcurrentAppend(t *testing.T) {
	const goroutines, perG = 8, 200
	dir := t.TempDir()
	r := mustCreate(t, filepath.Join(dir, "run"))
	// Large lines make interleaving visible if writes were split.
	pad := strings.Repeat("x", 16<<10)
	type line struct {
		Workload string `json:"workload"`
		G, I     int
		Pad      string
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range perG {
				if err := r.Append(line{"test", g, i, pad}); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.WriteMeta(map[string]int{"goroutines": goroutines}); err != nil {
		t.Fatal(err)
	}

	seen := map[[2]int]bool{}
	rep, err := mustOpen(t, r.Dir()).lines(func(b []byte) error {
		var l line
		if err := json.Unmarshal(b, &l); err != nil {
			return err
		}
		if l.Pad != pad {
			return fmt.Errorf("line %d/%d has a damaged pad", l.G, l.I)
		}
		seen[[2]int{l.G, l.I}] = true
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Lines != goroutines*perG || rep.Skipped != 0 {
		t.Errorf("report = Lines %d Skipped %d %q", rep.Lines, rep.Skipped, rep.Problems)
	}
	if len(seen) != goroutines*perG {
		t.Errorf("saw %d distinct lines, want %d", len(seen), goroutines*perG)
	}
}

func TestCreate(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr string
	}{
		{"new dir", func(*testing.T, string) {}, ""},
		{"existing empty dir", func(t *testing.T, dir string) {
			if err := os.Mkdir(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}, ""},
		{"existing non-empty dir", func(t *testing.T, dir string) {
			os.Mkdir(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "old.txt"), nil, 0o644)
		}, "not empty"},
		{"earlier run", func(t *testing.T, dir string) {
			r := mustCreate(t, dir)
			r.Close()
		}, "not empty"},
		{"a file", func(t *testing.T, dir string) {
			os.WriteFile(dir, nil, 0o644)
		}, "create run directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "run")
			os.MkdirAll(filepath.Dir(dir), 0o755)
			tt.setup(t, dir)
			r, err := Create(dir)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Create: %v", err)
				}
				r.Close()
				if _, err := os.Stat(filepath.Join(dir, SamplesFile)); err != nil {
					t.Errorf("no %s: %v", SamplesFile, err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Create err = %v, want one containing %q", err, tt.wantErr)
			}
		})
	}
}

func TestOpen(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(t *testing.T, dir string)
		wantErr string
	}{
		{"run", func(t *testing.T, dir string) {
			r := mustCreate(t, dir)
			r.WriteMeta(testMeta{})
			r.Close()
		}, ""},
		{"no run.json", func(t *testing.T, dir string) {
			r := mustCreate(t, dir)
			r.Close()
		}, "is not a cnperf run: no run.json"},
		{"empty dir", func(t *testing.T, dir string) { os.Mkdir(dir, 0o755) }, "is not a cnperf run: no run.json"},
		{"missing dir", func(*testing.T, string) {}, "no such file"},
		{"a file", func(t *testing.T, dir string) { os.WriteFile(dir, nil, 0o644) }, "not a directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "run")
			tt.setup(t, dir)
			rd, err := Open(dir)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("Open: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("Open err = %v, want one containing %q", err, tt.wantErr)
			}
			if rd != nil {
				t.Errorf("Open failed but returned a Reader")
			}
		})
	}
}

func TestMetaErrors(t *testing.T) {
	dir := t.TempDir()
	r := mustCreate(t, filepath.Join(dir, "run"))
	defer r.Close()
	if err := r.WriteMeta(func() {}); err == nil {
		t.Error("WriteMeta of a func succeeded")
	}
	if _, err := os.Stat(filepath.Join(r.Dir(), MetaFile)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("failed WriteMeta left run.json: %v", err)
	}
	if err := r.Append(make(chan int)); err == nil {
		t.Error("Append of a chan succeeded")
	}
	os.WriteFile(filepath.Join(r.Dir(), MetaFile), []byte("{bad"), 0o644)
	rd, err := Open(r.Dir())
	if err != nil {
		t.Fatal(err)
	}
	var m testMeta
	if err := rd.Meta(&m); err == nil {
		t.Error("Meta of corrupt run.json succeeded")
	}
}
