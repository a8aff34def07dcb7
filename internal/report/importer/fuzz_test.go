package importer

import (
	"bytes"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
)

// allocSlack is what a fuzz input may allocate beyond allocPerByte per
// input byte: the CSV reader's buffers, the analysis's bins.
const (
	allocSlack   = 8 << 20
	allocPerByte = 200
)

// checkImport asserts what must hold for any input: no panic (the fuzzer
// catches it), every row accounted for, sane samples, errors on one line,
// and memory in proportion to the input, not to the numbers in it.
func checkImport(t *testing.T, data []byte, read func(io.Reader, string) ([]record.Sample, Info, error)) {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	samples, info, err := read(bytes.NewReader(data), "fuzz.csv")
	if err == nil {
		// What the report and summary do with an import must hold too.
		modes := Modes(samples)
		by := map[string][]record.Sample{}
		for _, s := range samples {
			by[s.Mode] = append(by[s.Mode], s)
		}
		d, _ := analysis.NewDataset(modes, by, modes[0])
		for _, m := range analysis.PingPongMetrics() {
			d.SmallBig(m, 3*87380, 100)
			d.Summary(m, 2, 100)
			for _, s := range modes {
				d.Bins(s, m, 100)
			}
		}
		analysis.NewPingPongSet(samples, nil, modes).Rows(modes[0])
	}
	runtime.ReadMemStats(&after)
	if a := after.TotalAlloc - before.TotalAlloc; a > uint64(allocSlack+allocPerByte*len(data)) {
		t.Errorf("%d bytes of input allocated %d bytes", len(data), a)
	}

	if err != nil {
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("error is not one line: %q", err)
		}
		if len(samples) != 0 {
			t.Errorf("error %v with %d samples", err, len(samples))
		}
		return
	}
	if len(samples) == 0 || info.Imported != len(samples) {
		t.Fatalf("no error, %d samples, Imported %d", len(samples), info.Imported)
	}
	if info.Rows != info.Imported+len(info.Skipped) {
		t.Errorf("Rows %d != Imported %d + Skipped %d", info.Rows, info.Imported, len(info.Skipped))
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	for _, s := range info.Skipped {
		if s.Line < 2 || s.Line > lines {
			t.Errorf("skip at line %d of %d: %s", s.Line, lines, s)
		}
		if strings.Contains(s.Reason, "\n") || len(s.Reason) > 400 {
			t.Errorf("skip reason is not one short line: %q", s.Reason)
		}
	}
	for _, s := range samples {
		switch {
		case s.Workload != "pingpong" || s.Mode == "":
			t.Errorf("sample %+v: workload or mode", s)
		case s.Size < 0 || s.Size > maxBytes || s.Length < 0 || s.Length > maxBytes:
			t.Errorf("sample %+v: size or length out of 0..%d", s, maxBytes)
		case math.IsNaN(s.DurationMS) || math.IsInf(s.DurationMS, 0) || s.DurationMS < 0:
			t.Errorf("sample %+v: duration", s)
		case s.OK() && s.DurationMS == 0:
			t.Errorf("sample %+v: OK without a duration", s)
		}
	}
}

// seeds adds the testdata file and some hostile inputs.
func seeds(f *testing.F, file string, extra ...string) {
	b, err := os.ReadFile(filepath.Join("testdata", file))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	for _, e := range extra {
		f.Add([]byte(e))
	}
}

func FuzzPPBench(f *testing.F) {
	h := `"Machine Tag","Experiment Tag","Document Path","Failed requests","Concurrency Level","Total transferred","Time per request","Transfer rate","Requests per second","Retries","Response Code"` + "\n"
	seeds(f, "ppbench.csv",
		"",
		h,
		h+`m,bare,/mping/99999999999999999999,0,1,1000,4,0,0,0,200`+"\n",
		h+`m,bare,/mping/1000,0,1,1e308,4,0,0,0,200`+"\n",
		h+`m,bare,/mping/1000,9223372036854775807,9223372036854775807,1000,1e-300,0,0,9223372036854775807,200`+"\n",
		h+`m,=HYPERLINK("x"),/mping/1000,0,1,1000,4,0,0,0,200`+"\n",
		"\ufeffTag,Document Path,Total transferred,Time per request,Response Code\nbare,/mping/1,1,0.001,200\r\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, PPBench) })
}

func FuzzApacheBench(f *testing.F) {
	h := "Tag,Document Path,Document Length,Time taken for tests,Complete requests,Failed requests,Concurrency Level,Total transferred,Requests per second (mean),Transfer rate,Time per request\n"
	seeds(f, "ab.csv",
		"",
		h,
		h+"bare,/pong/1,2147483647,1e-300,1,0,2147483647,0,0,0,1e308\n",
		h+"bare,/pong/1,9999999999999,0.5,1,0,1,0,0,0,5\n",
		h+"bare,/pong/1,100,0.5,0,0,1,0,0,0,5\n",
		h+"bare,/pong/1,100,0.5,10,10,1,0,0,0,0\n",
	)
	f.Fuzz(func(t *testing.T, data []byte) { checkImport(t, data, ApacheBench) })
}

// TestHugeNumbers: numbers past what a message or a count can be are
// skipped with a short reason, not turned into garbage ints.
func TestHugeNumbers(t *testing.T) {
	pp := `"Machine Tag","Experiment Tag","Document Path","Failed requests","Concurrency Level","Total transferred","Time per request","Transfer rate","Requests per second","Retries","Response Code"` + "\n"
	ab := "Tag,Document Path,Document Length,Time taken for tests,Complete requests,Failed requests,Concurrency Level,Total transferred,Requests per second (mean),Transfer rate,Time per request\n"
	long := strings.Repeat("9", 100000)
	tests := []struct {
		name   string
		read   func(io.Reader, string) ([]record.Sample, Info, error)
		row    string
		reason string
	}{
		{"ppbench total 1e308", PPBench, `m,bare,/mping/1000,0,1,1e308,4,0,0,0,200`, `Total transferred "1e308": above 4294967296 bytes`},
		{"ppbench path size past int", PPBench, `m,bare,/mping/99999999999999999999,0,1,1000,4,0,0,0,200`, "size out of range"},
		{"ppbench path size past pong's limit", PPBench, `m,bare,/mping/4294967297,0,1,1000,4,0,0,0,200`, "size out of range"},
		{"ppbench retries past int32", PPBench, `m,bare,/mping/1000,0,1,1000,4,0,0,9223372036854775807,200`, `Retries "9223372036854775807": above 2147483647`},
		{"ppbench a 100 kB number", PPBench, `m,bare,/mping/1000,0,1,` + long + `,4,0,0,0,200`, `Total transferred "9999999999999999999999999999999999999999…"`},
		{"ab length past int32", ApacheBench, "bare,/pong/1,9999999999999,0.5,1,0,1,0,0,0,5", `Document Length "9999999999999": above 2147483647`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			head := pp
			if strings.HasPrefix(tc.name, "ab") {
				head = ab
			}
			_, info, err := tc.read(strings.NewReader(head+tc.row+"\n"), "x.csv")
			if err == nil || len(info.Skipped) != 1 {
				t.Fatalf("err %v, skipped %v: want the one row skipped", err, info.Skipped)
			}
			if r := info.Skipped[0].Reason; !strings.Contains(r, tc.reason) || len(r) > 200 {
				t.Errorf("reason %q, want it short and containing %q", r, tc.reason)
			}
		})
	}
}
