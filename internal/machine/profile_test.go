package machine

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestProfileRoundTrip(t *testing.T) {
	p := prof(map[string]float64{"threads": 2, "network": 3e10})
	p.Repeat, p.Runs = 1, map[string][]float64{"network": {3e10}}
	path := filepath.Join(t.TempDir(), "p.json")
	if err := Write(path, p); err != nil {
		t.Fatal(err)
	}
	q, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if q.Name != path || q.Features["network"] != 3e10 {
		t.Errorf("loaded %+v", q)
	}
	if s, _ := Similarity(p, q); s != 1 {
		t.Errorf("a profile and its file: similarity %v", s)
	}
}

func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{`{"kind":"cnperf-machine-profile","format":2,"features":{"threads":1}}`, "format 2; this cnperf reads format 1"},
		{`{"kind":"cnperf-machine-profile","features":{"threads":1}}`, "format none"},
		{`{"format":1,"status":"complete"}`, "not a machine profile"},
		{`[1,2]`, "not JSON"},
		{`{"kind":"cnperf-machine-profile","format":1,"features":{"colour":1}}`, `unknown feature "colour"`},
		{`{"kind":"cnperf-machine-profile","format":1,"features":{"threads":0}}`, "features.threads: 0"},
		{`{"kind":"cnperf-machine-profile","format":1,"features":{"threads":-1}}`, "features.threads: -1"},
		{`{"kind":"cnperf-machine-profile","format":1,"features":{}}`, "features: none"},
		{`{"kind":"cnperf-machine-profile","format":1,"repeat":21,"features":{"threads":1}}`, "repeat 21"},
		{`{"kind":"cnperf-machine-profile","format":1,"features":{"threads":1},"runs":{"threads":[` + strings.Repeat("1,", 20) + `1]}}`, "21 values"},
	} {
		_, err := Read(strings.NewReader(tc.doc), "x.json")
		if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "profile x.json: ") {
			t.Errorf("%.50s: %v, want %q", tc.doc, err, tc.want)
		}
	}
	big := bytes.Repeat([]byte(" "), MaxFileBytes+1)
	if _, err := Read(bytes.NewReader(big), "big"); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a file over the bound: %v", err)
	}
}

func TestMedian(t *testing.T) {
	for _, tc := range []struct {
		in   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{3, 1, 2}, 2}, {[]float64{4, 1, 3, 2}, 2.5}} {
		if got := Median(tc.in); got != tc.want {
			t.Errorf("Median(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

// TestDiskSpeedLeavesNoFile measures a small file and removes it.
func TestDiskSpeedLeavesNoFile(t *testing.T) {
	dir := t.TempDir()
	d, err := DiskSpeed(dir, MinDiskBytes)
	if err != nil {
		t.Fatal(err)
	}
	if !(d.Read > 0 && d.Write > 0) || d.Method == "" {
		t.Errorf("disk = %+v", d)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left behind: %v", left)
	}
	if _, err := DiskSpeed(dir, MaxDiskBytes+1); err == nil {
		t.Error("a file above the bound was accepted")
	}
}

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{"32K": 32 << 10, "36M": 36 << 20, "512": 512, "x": 0} {
		if got := parseSize(in); got != want {
			t.Errorf("parseSize(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestLoadRefusesWhatIsNotAFile: a named pipe or a device given as a
// profile is refused at once, in one line naming it, never waited on.
func TestLoadRefusesWhatIsNotAFile(t *testing.T) {
	fifo := filepath.Join(t.TempDir(), "p.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]string{fifo: "named pipe", "/dev/zero": "character device"} {
		_, err := Load(path)
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("Load(%s) = %v; want one line saying it is a %s", path, err, want)
		}
	}
}
