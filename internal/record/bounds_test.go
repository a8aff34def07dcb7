package record

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/testutil/bounded"
)

// boundedCall runs fn and fails the test when it allocates more than 64 MB or
// takes more than 10 s: a refusal must cost neither.
func boundedCall(t *testing.T, fn func()) {
	t.Helper()
	if a, _ := bounded.Cost(t, 10*time.Second, fn); a > 64<<20 {
		t.Errorf("allocated %d MB", a>>20)
	}
}

// sparseFile makes a file of size bytes that takes no disk: a hole, after
// head.
func sparseFile(t *testing.T, path, head string, size int64) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteString(head); err != nil {
		t.Fatal(err)
	}
	if err := f.Truncate(size); err != nil {
		t.Fatal(err)
	}
}

const goodMeta = `{"format":1,"status":"complete","spec":{"name":"x","modes":["bare","bridge"]}}`

// TestHostileRunFiles: run.json and samples.jsonl that are not regular
// files, too large, or hold a line too long are refused in one line naming
// the file, reading little and quickly.
func TestHostileRunFiles(t *testing.T) {
	line := `{"workload":"pingpong","mode":"bare","size":1,"length":1,"code":200,"duration_ms":1}` + "\n"
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) // makes run.json and samples.jsonl
		file  string                         // the one refused
		want  string
	}{
		{"sparse line of 2 GB", func(t *testing.T, dir string) {
			sparseFile(t, filepath.Join(dir, SamplesFile), line+line, 2<<30)
		}, SamplesFile, "line 3: longer than 1 MiB"},
		{"line one byte too long", func(t *testing.T, dir string) {
			long := `{"workload":"pingpong","mode":"bare","error":"` + strings.Repeat("x", MaxLineBytes) + `"}`
			write(t, filepath.Join(dir, SamplesFile), line+long[:MaxLineBytes+1]+"\n")
		}, SamplesFile, "line 2: longer than 1 MiB"},
		{"sparse samples past the cap", func(t *testing.T, dir string) {
			sparseFile(t, filepath.Join(dir, SamplesFile), line, MaxSamplesBytes+1)
		}, SamplesFile, "is larger than 64 GiB"},
		{"samples a link to /dev/zero", func(t *testing.T, dir string) {
			link(t, "/dev/zero", filepath.Join(dir, SamplesFile))
		}, SamplesFile, "is a character device, not a file"},
		{"samples a named pipe", func(t *testing.T, dir string) {
			fifo(t, filepath.Join(dir, SamplesFile))
		}, SamplesFile, "is a named pipe, not a file"},
		{"samples a directory", func(t *testing.T, dir string) {
			if err := os.Mkdir(filepath.Join(dir, SamplesFile), 0o755); err != nil {
				t.Fatal(err)
			}
		}, SamplesFile, "is a directory, not a file"},
		{"sparse run.json of 2 GB", func(t *testing.T, dir string) {
			sparseFile(t, filepath.Join(dir, MetaFile), goodMeta, 2<<30)
		}, MetaFile, "is larger than 256 MiB"},
		{"run.json a link to /dev/zero", func(t *testing.T, dir string) {
			link(t, "/dev/zero", filepath.Join(dir, MetaFile))
		}, MetaFile, "is a character device, not a file"},
		{"run.json a named pipe", func(t *testing.T, dir string) {
			fifo(t, filepath.Join(dir, MetaFile))
		}, MetaFile, "is a named pipe, not a file"},
		{"run.json a sparse file of zeros", func(t *testing.T, dir string) {
			sparseFile(t, filepath.Join(dir, MetaFile), "", 32<<20)
		}, MetaFile, "not a JSON object"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.setup(t, dir)
			if _, err := os.Lstat(filepath.Join(dir, MetaFile)); err != nil {
				write(t, filepath.Join(dir, MetaFile), goodMeta)
			}
			if _, err := os.Lstat(filepath.Join(dir, SamplesFile)); err != nil {
				write(t, filepath.Join(dir, SamplesFile), line)
			}
			var err error
			boundedCall(t, func() { err = readAll(dir) })
			if err == nil {
				t.Fatal("read")
			}
			msg := err.Error()
			path := filepath.Join(dir, tc.file)
			if !strings.Contains(msg, path) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || len(msg) > 300 {
				t.Errorf("error %q, want one line naming %s with %q", msg, path, tc.want)
			}
			if tc.file != MetaFile || !strings.Contains(tc.want, "not a JSON") {
				if !errors.Is(err, ErrBounds) {
					t.Errorf("error %q is not ErrBounds", msg)
				}
			}
		})
	}
}

// TestTooManySeries: a run.json of a few MB naming 100,000 modes and
// 1,000 variants (10⁸ series) is refused before its series are listed;
// a thousand series, as an import of a thousand tags has, are read; so
// are instances beyond the spec's bound, which readers lay out one by one.
func TestTooManySeries(t *testing.T) {
	list := func(n int, f string) string {
		var b strings.Builder
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, f, i)
		}
		return b.String()
	}
	for _, tc := range []struct {
		name, meta, err string
	}{
		{"modes × variants", `{"spec":{"modes":[` + list(100000, `"m%d"`) + `],"variants":[` + list(1000, `{"name":"v%d"}`) + `]}}`, "names 100000000 series, more than 1024"},
		{"modes[] of the run", `{"spec":{"modes":["bare"]},"modes":[` + list(2000, `{"mode":"m%d"}`) + `]}`, "names 2001 series, more than 1024"},
		{"a thousand tags", `{"spec":{"modes":[` + list(1000, `"m%d"`) + `]}}`, ""},
		// A number, not a size: 2e9 instances ran every reader out of memory.
		{"instances", `{"spec":{"modes":["bare"],"instances":2000000000}}`, "spec.instances 2000000000 is outside 0..8"},
		{"negative instances", `{"spec":{"modes":["bare"],"instances":-1}}`, "spec.instances -1 is outside 0..8"},
		{"eight instances", `{"spec":{"modes":["bare"],"instances":8}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, MetaFile), tc.meta)
			write(t, filepath.Join(dir, SamplesFile), "")
			var err error
			boundedCall(t, func() { err = readAll(dir) })
			if tc.err == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.err) || !errors.Is(err, ErrBounds) {
				t.Errorf("err %v, want %q", err, tc.err)
			}
		})
	}
}

// readAll reads a run as the commands do: Open, Meta, every line.
func readAll(dir string) error {
	rd, err := Open(dir)
	if err != nil {
		return err
	}
	var m Meta
	if err := rd.Meta(&m); err != nil {
		return err
	}
	_, _, err = rd.Contents()
	return err
}

// TestLineBounds: a line of exactly MaxLineBytes is read, a longer one is
// not; a file that grows past its first size is read only to the bound.
func TestLineBounds(t *testing.T) {
	pad := func(n int) string {
		head := `{"workload":"pingpong","mode":"bare","error":"`
		return head + strings.Repeat("x", n-len(head)-2) + `"}`
	}
	for _, tc := range []struct {
		name, body string
		lines      int
		err        string
	}{
		{"at the bound", pad(MaxLineBytes) + "\n" + pad(60) + "\n", 2, ""},
		{"at the bound, CRLF", pad(MaxLineBytes-1) + "\r\n", 1, ""},
		{"at the bound, no newline", pad(MaxLineBytes), 1, ""},
		{"one byte over, no newline", pad(MaxLineBytes + 1), 0, "line 1: longer than 1 MiB"},
		{"blank lines", "\n\n\n" + pad(100) + "\n\n", 1, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, MetaFile), goodMeta)
			write(t, filepath.Join(dir, SamplesFile), tc.body)
			rd, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			rep, err := rd.lines(func([]byte) error { return nil })
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Errorf("err %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil || rep.Lines != tc.lines || rep.Skipped != 0 {
				t.Errorf("err %v, %d lines (%d skipped), want %d", err, rep.Lines, rep.Skipped, tc.lines)
			}
		})
	}
}

// TestUnlistedSeries: lines of series run.json does not list are skipped
// cheaply and counted, in one note naming a few of them.
func TestUnlistedSeries(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, MetaFile), goodMeta)
	var b strings.Builder
	const n = 10000
	for i := range n {
		fmt.Fprintf(&b, `{"workload":"pingpong","mode":"x%d","size":1,"length":1,"code":200,"duration_ms":1}`+"\n", i)
	}
	b.WriteString(`{"workload":"pingpong","mode":"bare","size":1,"length":1,"code":200,"duration_ms":1}` + "\n")
	b.WriteString(`{"workload":"stream","kind":"total","mode":"y","data":{}}` + "\n")
	b.WriteString(`{"workload":"cost","mode":"` + strings.Repeat("z", 1000) + `"}` + "\n")
	b.WriteString(`{"workload":"cpu","core_busy_percent":[1]}` + "\n") // between cells: kept
	write(t, filepath.Join(dir, SamplesFile), b.String())

	var c Contents
	var rep ReadReport
	boundedCall(t, func() {
		rd, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		var m Meta
		if err := rd.Meta(&m); err != nil {
			t.Fatal(err)
		}
		if c, rep, err = rd.Contents(); err != nil {
			t.Fatal(err)
		}
	})
	if len(c.PingPong) != 1 || len(c.Records) != 0 || len(c.Costs) != 0 || len(c.CPU) != 1 {
		t.Errorf("kept %d samples, %d records, %d costs, %d cpu; want 1, 0, 0, 1", len(c.PingPong), len(c.Records), len(c.Costs), len(c.CPU))
	}
	if rep.Unlisted != n+2 || rep.Skipped != 0 {
		t.Errorf("%d unlisted, %d skipped; want %d, 0", rep.Unlisted, rep.Skipped, n+2)
	}
	notes := rep.Notes()
	want := fmt.Sprintf(`samples.jsonl: %d lines of series that run.json does not list ("x0", "x1", "x2", …): skipped`, n+2)
	if len(notes) != 1 || notes[0] != want {
		t.Errorf("notes %q, want %q", notes, want)
	}

	// Without run.json's series (a reader that did not decode a Meta),
	// every line is read.
	rd, _ := Open(dir)
	all, rep, err := rd.Contents()
	if err != nil || len(all.PingPong) != n+1 || rep.Unlisted != 0 {
		t.Errorf("unfiltered: %d samples, %d unlisted, %v", len(all.PingPong), rep.Unlisted, err)
	}
}

// TestWriterBounds: the writer refuses what its readers would.
func TestWriterBounds(t *testing.T) {
	r := mustCreate(t, filepath.Join(t.TempDir(), "run"))
	defer r.Close()
	if err := r.Append(map[string]string{"workload": "x", "v": strings.Repeat("x", MaxLineBytes)}); err == nil || !strings.Contains(err.Error(), "above the 1 MiB") {
		t.Errorf("Append of a long line: %v", err)
	}
	r.size = MaxSamplesBytes - 10
	if err := r.Append(map[string]string{"workload": "x"}); err == nil || !strings.Contains(err.Error(), "would pass 64 GiB") {
		t.Errorf("Append past the file's bound: %v", err)
	}
	if r.maxMeta != MaxMetaBytes {
		t.Errorf("run.json's bound is %d", r.maxMeta)
	}
	r.maxMeta = 1 << 10 // MaxMetaBytes of JSON takes seconds to marshal
	if err := r.WriteMeta(map[string]string{"v": strings.Repeat("x", 1<<10)}); err == nil || !strings.Contains(err.Error(), "above the 1 KiB") {
		t.Errorf("WriteMeta past its bound: %v", err)
	}
	if err := r.WriteMeta(map[string]string{"v": "x"}); err != nil {
		t.Errorf("WriteMeta within its bound: %v", err)
	}
}

func TestQuote(t *testing.T) {
	for _, tc := range []struct {
		in   string
		max  int
		want string
	}{
		{"bare", 40, `"bare"`},
		{"aaaaé", 5, `"aaaa"… (6 bytes)`}, // not cut inside a rune
		{strings.Repeat("a", 100), 3, `"aaa"… (100 bytes)`},
	} {
		if got := Quote(tc.in, tc.max); got != tc.want {
			t.Errorf("Quote(%q, %d) = %s, want %s", tc.in, tc.max, got, tc.want)
		}
	}
}

func write(t *testing.T, path, body string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, path string) {
	t.Helper()
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
}

func fifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestLongNames: a name longer than any cnperf writes (a series, a run
// id, a case, a label), which every reader would copy into each line of
// its output, is refused in one line naming the file and the field; a
// name at the bound is read; lines that carry more label keys in all
// than a spec may have are refused too.
func TestLongNames(t *testing.T) {
	long := strings.Repeat("x", 1_000_000)
	atBound := strings.Repeat("y", MaxNameBytes)
	meta := func(id, mode, cellCase string) string {
		return `{"format":1,"id":"` + id + `","status":"complete","spec":{"name":"x","modes":["bare","` + mode + `"]},` +
			`"modes":[{"mode":"bare"},{"mode":"` + mode + `"}],"cells":[{"mode":"` + mode + `","case":"` + cellCase + `"}]}`
	}
	sample := func(mode, labels string) string {
		return `{"workload":"pingpong","mode":"` + mode + `","size":1,"length":1,"code":200,"duration_ms":1,"labels":{` + labels + `}}` + "\n"
	}
	record := func(field, v string) string {
		return `{"workload":"stream","kind":"total","mode":"bare","` + field + `":"` + v + `","data":{"protocol":"tcp"}}` + "\n"
	}
	var keys strings.Builder
	for i := range MaxLabelKeys + 1 {
		keys.WriteString(sample("bare", fmt.Sprintf(`"k%d":"v"`, i)))
	}
	for _, tc := range []struct {
		name, meta, samples string
		file, want          string // "" for a run that is read
	}{
		{"names at the bound", meta(atBound, atBound, atBound), sample(atBound, `"`+atBound+`":"`+atBound+`"`) + record("case", atBound), "", ""},
		{"a run id of 1 MB", meta(long, "bridge", "c"), "", MetaFile, "id is 1000000 bytes, longer than 1 KiB: not a name cnperf writes"},
		{"a mode name of 1 MB", meta("r1", long, "c"), sample(long, ""), MetaFile, "spec.modes[1] is 1000000 bytes"},
		{"a series of the run of 1 MB", `{"spec":{"modes":["bare"]},"modes":[{"mode":"` + long + `"}]}`, "", MetaFile, "modes[0].mode is 1000000 bytes"},
		{"a cell's case of 1 MB", meta("r1", "bridge", long), "", MetaFile, "cells[0].case is 1000000 bytes"},
		{"a variant's label of 1 MB", `{"spec":{"modes":["bare"],"variants":[{"tcp_rmem":"` + long + `"}]}}`, "", MetaFile, "spec.variants[0] (its label) is 1000005 bytes"},
		{"a spec label of 1 MB", `{"spec":{"modes":["bare"],"labels":{"k":"` + long + `"}}}`, "", MetaFile, "spec.labels.k is 1000000 bytes"},
		{"a sample's label of 1 MB", meta("r1", "bridge", "c"), sample("bare", `"k":"`+long+`"`), SamplesFile, "line 1: labels.k is 1000000 bytes"},
		{"a record's case of 1 MB", meta("r1", "bridge", "c"), sample("bare", "") + record("case", long), SamplesFile, "line 2: case is 1000000 bytes"},
		{"a record's protocol of 1 MB", meta("r1", "bridge", "c"), `{"workload":"rr","kind":"total","mode":"bare","data":{"protocol":"` + long + `"}}` + "\n", SamplesFile, "line 1: data.protocol is 1000000 bytes"},
		{"label keys past a spec's", meta("r1", "bridge", "c"), keys.String(), SamplesFile, fmt.Sprintf("line %d: labels: more than %d label keys", MaxLabelKeys+1, MaxLabelKeys)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			write(t, filepath.Join(dir, MetaFile), tc.meta)
			write(t, filepath.Join(dir, SamplesFile), tc.samples)
			var err error
			boundedCall(t, func() { err = readAll(dir) })
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("read")
			}
			msg := err.Error()
			path := filepath.Join(dir, tc.file)
			if !strings.HasPrefix(msg, path) || !strings.Contains(msg, tc.want) || strings.Contains(msg, "\n") || len(msg) > 300 || !errors.Is(err, ErrBounds) {
				t.Errorf("error %q, want one line naming %s with %q (ErrBounds)", msg, path, tc.want)
			}
		})
	}
}
