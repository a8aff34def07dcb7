package gate

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/report/gate/gatetest"
	"github.com/cnperf/cnperf/internal/testutil/bounded"
)

// TestReadLimitsBounds: a limits file is capped as a spec is, must be a
// regular file, and its errors are one short line however long the
// values it holds.
func TestReadLimitsBounds(t *testing.T) {
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	huge := strings.Repeat("x", 50<<20)
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	sparse := filepath.Join(dir, "sparse")
	if f, err := os.Create(sparse); err != nil {
		t.Fatal(err)
	} else if err := f.Truncate(68 << 20); err != nil {
		t.Fatal(err)
	} else {
		f.Close()
	}
	manyWrong := "max_cost:\n" + strings.Repeat("  - [a]\n", 10000)
	tests := []struct {
		name, path string
		want       []string
	}{
		{"too large", sparse, []string{"limits file: " + sparse + " is larger than 1 MiB"}},
		{"named pipe", fifo, []string{"limits file: " + fifo + " is a named pipe, not a file"}},
		{"device", "/dev/zero", []string{"/dev/zero is a character device"}},
		{"long percentage", write("pct.yaml", "max_cost: [\"bridge:transfer="+huge[:900<<10]+"\"]\n"), []string{"is not a percentage", "bytes)"}},
		{"long mode", write("mode.yaml", "max_cost: [\""+huge[:900<<10]+"\"]\n"), []string{"want MODE:METRIC=PCT"}},
		{"many wrong values", write("many.yaml", manyWrong), []string{"line 2: max_cost[0]: cannot unmarshal !!seq into string", "; and 9997 more"}},
		{"unknown key", write("key.yaml", "max_cots: [a]\n"), []string{"key.yaml: line 1: unknown field \"max_cots\""}},
		{"unknown key on line 2", write("key2.yaml", "max_cost: [bridge:transfer=5]\nmax_chnage: 5\n"), []string{"key2.yaml: line 2: unknown field \"max_chnage\""}},
		{"long unknown key", write("longkey.yaml", "? "+huge[:900<<10]+"\n: 1\n"), []string{"unknown field \"xxx", "…"}},
		{"syntax error on line 2", write("syntax.yaml", "max_change: 5\nmax_cost: [a\n"), []string{"syntax.yaml: line 2: did not find expected ',' or ']'"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var err error
			alloc, took := bounded.Cost(t, 10*time.Second, func() { _, _, err = ReadLimits(tc.path) })
			if err == nil {
				t.Fatal("accepted")
			}
			msg := err.Error()
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %.300q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "\n") || len(msg) > 1000 {
				t.Errorf("error of %d bytes, not one short line: %.300q", len(msg), msg)
			}
			if alloc > 64<<20 {
				t.Errorf("allocated %d MB in %s", alloc>>20, took)
			}
		})
	}
}

// TestNoReference: a run whose reference is no series of it, or has no
// samples, says so, not "(it has )".
func TestNoReference(t *testing.T) {
	dir := gatetest.WriteRun(t, 6, 1, func(int) float64 { return 0.8 })
	meta := filepath.Join(dir, "run.json")
	b, err := os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(meta, []byte(strings.Replace(string(b), `"reference": "bare"`, `"reference": "nosuch"`, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	run, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = JudgeLimits(run, []Limit{{Mode: "bridge", Metric: "transfer", MaxCost: 20}})
	want := `has no ratio against its reference "nosuch": run.json lists no series of that name (it lists bare, bridge)`
	if !errors.As(err, new(BadInput)) || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "it has )") {
		t.Errorf("err %v, want bad input with %q", err, want)
	}
}

// TestGatherRefusesNonFinite: every percentage check takes, from a flag or
// a limits file, is a finite number; NaN held against nothing ("the limit
// of NaN % worse": cannot tell) and an infinite one against everything.
// A negative one is a limit that demands a gain.
func TestGatherRefusesNonFinite(t *testing.T) {
	dir := t.TempDir()
	n := 0
	file := func(body string) string {
		n++
		p := filepath.Join(dir, strconv.Itoa(n)+".yaml")
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	f := func(v float64) *float64 { return &v }
	base := []string{"runs/old"}
	tests := []struct {
		name      string
		costs     []string
		file      string
		maxChange *float64
		want      string // "" accepted
	}{
		{"max-change NaN", nil, "", f(math.NaN()), "--max-change NaN: want a finite percentage"},
		{"max-change +Inf", nil, "", f(math.Inf(1)), "--max-change +Inf: want a finite percentage"},
		{"max-change -Inf", nil, "", f(math.Inf(-1)), "--max-change -Inf: want a finite percentage"},
		{"max-change negative demands a gain", nil, "", f(-2), ""},
		{"max-change 0", nil, "", f(0), ""},
		{"max_change .nan", nil, file("max_change: .nan\n"), nil, "max_change NaN: want a finite percentage"},
		{"max_change .inf", nil, file("max_change: .inf\n"), nil, "max_change +Inf: want a finite percentage"},
		{"max-cost NaN", []string{"bridge:transfer=NaN"}, "", nil, `"NaN" is not a percentage`},
		{"max-cost Inf", []string{"bridge:transfer=Inf"}, "", nil, `"Inf" is not a percentage`},
		{"max-cost beyond float64", []string{"bridge:transfer=1e400"}, "", nil, `"1e400" is not a percentage`},
		{"max-cost negative demands a gain", []string{"bridge:transfer=-5"}, "", nil, ""},
		{"max_cost NaN in a file", nil, file("max_cost: [bridge:transfer=nan]\n"), nil, `"nan" is not a percentage`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Gather(tc.costs, tc.file, base, tc.maxChange)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want one with %q", err, tc.want)
			}
		})
	}
}
