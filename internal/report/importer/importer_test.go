package importer

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/analysis/stats"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/report/export"
)

func pp(mode string, size, rep int, dur float64, length, code, retries int, errMsg string) record.Sample {
	return record.Sample{
		Workload: "pingpong", Mode: mode, Labels: map[string]string{"machine": "m3.large", "source": "ppbench"},
		Size: size, Rep: rep, DurationMS: dur, Length: length, Code: code, Retries: retries, Error: errMsg,
	}
}

func ab(mode string, size, rep int, dur float64, code int, errMsg string) record.Sample {
	return record.Sample{
		Workload: "pingpong", Mode: mode, Labels: map[string]string{"source": "apachebench", "concurrency": "10"},
		Size: size, Rep: rep, DurationMS: dur, Length: size, Code: code, Error: errMsg,
	}
}

type reader func(r *strings.Reader, source string) ([]record.Sample, Info, error)

func ppReader(r *strings.Reader, source string) ([]record.Sample, Info, error) {
	return PPBench(r, source)
}

func abReader(r *strings.Reader, source string) ([]record.Sample, Info, error) {
	return ApacheBench(r, source)
}

func readFile(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// checkInfo compares the fields of Info the readers fill.
func checkInfo(t *testing.T, got, want Info) {
	t.Helper()
	got.Source, want.Source = "", ""
	if !reflect.DeepEqual(got, want) {
		t.Errorf("info:\n got %+v\nwant %+v", got, want)
	}
}

func checkSamples(t *testing.T, got, want []record.Sample) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d samples, want %d:\n%+v", len(got), len(want), got)
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("sample %d:\n got %+v\nwant %+v", i, got[i], want[i])
		}
	}
}

func TestTestdata(t *testing.T) {
	tests := []struct {
		file string
		read reader
		want []record.Sample
		info Info
	}{
		{
			file: "ppbench.csv",
			read: ppReader,
			want: []record.Sample{
				pp("bare", 1000, 0, 4, 1000, 200, 0, ""),     // Ruby's "4.0"
				pp("docker", 1000, 0, 5.5, 1000, 200, 2, ""), // "1000.0"
				pp("bare", 250000, 0, 40.2, 250000, 200, 3, ""),
				pp("docker", 250000, 0, 0, 0, 503, 100, "ppbench: 10 failed requests in this row"),
				// line 6 ("4,0") and line 7 (6 fields) are skipped
				pp("docker", 2000, 0, 12.5, 2000, 200, 0, ""), // unquoted
				pp("docker", 300000, 0, 4, 0, 503, 100, ""),   // failed, but timed: kept as is
				pp("bare", 1000, 1, 3, 1000, 200, 0, ""),      // second row of bare/1000
			},
			info: Info{
				Format: "ppbench", Rows: 9, Imported: 7,
				Machines: []string{"m3.large"}, Experiments: []string{"bare", "docker"}, Concurrency: []int{10},
				FailedRequests: 21,
				Skipped: []Skip{
					{6, `Time per request "4,0": not a number`},
					{7, "6 fields, the header has 11"},
				},
			},
		},
		{
			file: "ab.csv",
			read: abReader,
			want: []record.Sample{
				ab("bare", 1000, 0, 5.12, 200, ""),
				ab("bare", 10000, 0, 8.73, 200, ""),
				ab("bare", 100000, 0, 42.1, 200, ""),
				ab("weave", 1000, 0, 9.58, 200, ""),
				ab("weave", 10000, 0, 17.32, 200, ""), // 3 of 1000 failed: still 200
				ab("weave", 100000, 0, 98.55, 200, ""),
			},
			info: Info{
				Format: "apachebench", Rows: 6, Imported: 6, Repeats: true,
				Experiments: []string{"bare", "weave"}, Concurrency: []int{10}, FailedRequests: 3,
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got, info, err := tt.read(strings.NewReader(readFile(t, tt.file)), tt.file)
			if err != nil {
				t.Fatal(err)
			}
			checkSamples(t, got, tt.want)
			checkInfo(t, info, tt.info)
		})
	}
}

const ppHead = `"Machine Tag","Experiment Tag","Document Path","Failed requests","Concurrency Level","Total transferred","Time per request","Transfer rate","Requests per second","Retries","Response Code"` + "\n"

const abHead = "Tag,Document Path,Document Length,Time taken for tests,Complete requests,Failed requests,Concurrency Level,Total transferred,Requests per second (mean),Transfer rate,Time per request\n"

func TestRows(t *testing.T) {
	noMachine := func(s record.Sample) record.Sample {
		s.Labels = map[string]string{"source": "ppbench"}
		return s
	}
	conc := func(s record.Sample, c string) record.Sample {
		s.Labels = map[string]string{"source": "apachebench", "concurrency": c}
		return s
	}
	tests := []struct {
		name  string
		read  reader
		in    string
		want  []record.Sample
		skips []Skip
		notes []string
	}{
		{
			name: "ppbench unquoted, CRLF, byte order mark",
			read: ppReader,
			in: "\ufeff" + strings.ReplaceAll(strings.ReplaceAll(ppHead, `"`, ""), "\n", "\r\n") +
				"m3.large,bare,/mping/10,0,1,10,0.5,20000,2000,0,200\r\n",
			want: []record.Sample{pp("bare", 10, 0, 0.5, 10, 200, 0, "")},
		},
		{
			name: "ppbench early log: a single Tag column, no machine, transfer rate or rps",
			read: ppReader,
			in: `"Tag","Document Path","Failed requests","Concurrency Level","Total transferred","Time per request","Retries","Response Code"` + "\n" +
				`"Test","/mping/1961","1","10","0","4","100","503"` + "\n",
			want: []record.Sample{noMachine(pp("Test", 1961, 0, 4, 0, 503, 100, ""))},
		},
		{
			name: "ppbench empty tags, path without size, 0 ms without failures",
			read: ppReader,
			in: ppHead +
				`"","","/","0","1","300","2","150000","500","0","200"` + "\n" +
				`"m3.large","bare","/mping/7","0","1","7","0.0","0","Infinity","0","200"` + "\n",
			want: []record.Sample{
				noMachine(pp(Untagged, 300, 0, 2, 300, 200, 0, "")),
				pp("bare", 7, 0, 0, 7, 200, 0, "ppbench: time per request is 0 ms"),
			},
			notes: []string{"1 rows: Document Path is not /mping/SIZE; the size is their Total transferred"},
		},
		{
			name: "ppbench concatenated files: repeated header, even median, mixed concurrency",
			read: ppReader,
			in: ppHead + `"m3.large","bare","/mping/8","0","1","7.5","1","7500","1000","0","200"` + "\n" +
				ppHead + `"m3.large","bare","/mping/8","0","4","8","2","4000","500","0","200"` + "\n",
			want: []record.Sample{
				pp("bare", 8, 0, 1, 8, 200, 0, ""), // 7.5 rounds to 8
				pp("bare", 8, 1, 2, 8, 200, 0, ""),
			},
			skips: []Skip{{3, "repeated header line"}},
			notes: []string{"the rows have different concurrency levels [1 4]"},
		},
		{
			name: "ppbench bad values",
			read: ppReader,
			in: ppHead +
				`"m","bare","/mping/1","0","1","1","-1","0","0","0","200"` + "\n" +
				`"m","bare","/mping/1","0","1","1","NaN","0","0","0","200"` + "\n" +
				`"m","bare","/mping/1","0","1","1","1","0","0","0.5","200"` + "\n" +
				`"m","bare","/mping/1","0","1","1","1","0","0","0",""` + "\n" +
				`"m","bare","/mping/1","0","1","1","1","0","0","0","200"` + "\n" +
				`"m","bare","/mping/1","0","1","1","1","0","0","0","2"00"` + "\n",
			want: []record.Sample{{Workload: "pingpong", Mode: "bare", Labels: map[string]string{"machine": "m", "source": "ppbench"},
				Size: 1, DurationMS: 1, Length: 1, Code: 200}},
			skips: []Skip{
				{2, `Time per request "-1": negative`},
				{3, `Time per request "NaN": not a finite number`},
				{4, `Retries "0.5": not a whole number`},
				{5, `Response Code "": empty`},
				{7, `not valid CSV: extraneous or missing " in quoted-field`},
			},
		},
		{
			// A tag names a series of the run, a machine tag labels every
			// sample: no longer than a run's reader takes a name.
			name: "ppbench tags longer than a name",
			read: ppReader,
			in: ppHead +
				`"m","` + strings.Repeat("t", record.MaxNameBytes+1) + `","/mping/1","0","1","1","1","0","0","0","200"` + "\n" +
				`"` + strings.Repeat("m", record.MaxNameBytes+1) + `","bare","/mping/1","0","1","1","1","0","0","0","200"` + "\n" +
				`"m","` + strings.Repeat("t", record.MaxNameBytes) + `","/mping/1","0","1","1","1","0","0","0","200"` + "\n",
			want: []record.Sample{{Workload: "pingpong", Mode: strings.Repeat("t", record.MaxNameBytes), Labels: map[string]string{"machine": "m", "source": "ppbench"},
				Size: 1, DurationMS: 1, Length: 1, Code: 200}},
			skips: []Skip{
				{2, `Experiment Tag "` + strings.Repeat("t", 40) + `…": 1025 bytes, longer than 1024`},
				{3, `Machine Tag "` + strings.Repeat("m", 40) + `…": 1025 bytes, longer than 1024`},
			},
		},
		{
			name: "ab tag longer than a name",
			read: abReader,
			in: abHead + strings.Repeat("t", record.MaxNameBytes+1) + ",/pong/100,100,0.500,1000,0,4,260000,2000.00,507.81,0.500\n" +
				"bare,/pong/100,100,0.500,1000,0,4,260000,2000.00,507.81,0.500\n",
			want:  []record.Sample{conc(ab("bare", 100, 0, 2, 200, ""), "4")},
			skips: []Skip{{2, `Tag "` + strings.Repeat("t", 40) + `…": 1025 bytes, longer than 1024`}},
			notes: []string{"1 rows (lines 3): Time per request is ab's mean across all concurrent requests; multiplied by the concurrency"},
		},
		{
			name: "ab: Time per request across all concurrent requests",
			read: abReader,
			in:   abHead + "bare,/pong/100,100,0.500,1000,0,4,260000,2000.00,507.81,0.500\n",
			want: []record.Sample{conc(ab("bare", 100, 0, 2, 200, ""), "4")},
			notes: []string{"1 rows (lines 2): Time per request is ab's mean across all concurrent requests; " +
				"multiplied by the concurrency"},
		},
		{
			name: "ab: Time per request per request, matching neither, without time taken",
			read: abReader,
			in: abHead +
				"bare,/pong/100,100,0.500,1000,0,4,260000,2000.00,507.81,2.000\n" +
				"bare,/pong/200,200,0.500,1000,0,4,260000,2000.00,507.81,7\n" +
				"bare,/pong/300,300,,1000,0,4,260000,2000.00,507.81,0.5\n",
			want: []record.Sample{
				conc(ab("bare", 100, 0, 2, 200, ""), "4"),
				conc(ab("bare", 200, 0, 7, 200, ""), "4"),
				conc(ab("bare", 300, 0, 0.5, 200, ""), "4"),
			},
			notes: []string{"1 rows (lines 3): Time per request matches neither concurrency × time taken / complete requests " +
				"nor time taken / complete requests; used as given"},
		},
		{
			name: "ab: failures and bad rows",
			read: abReader,
			in: abHead +
				"docker,/pong/100,100,1.000,10,10,1,0,10.00,0.00,100.000\n" + // all failed
				"docker,/pong/100,100,0,0,0,1,0,0,0,0\n" + // nothing completed
				"docker,/pong/100,100,1.000,10,11,1,0,10.00,0.00,100.000\n" +
				"docker,/pong/100,100,1.000,10,0,0,0,10.00,0.00,100.000\n" +
				"docker,/mping/100,128,1.000,10,0,1,0,10.00,0.00,100.000\n",
			want: []record.Sample{
				conc(ab("docker", 100, 0, 100, 0, "apachebench: all 10 requests failed"), "1"),
				conc(ab("docker", 100, 1, 0, 0, "apachebench: no complete requests"), "1"),
				conc(ab("docker", 128, 0, 100, 200, ""), "1"),
			},
			skips: []Skip{
				{4, "Failed requests 11 exceeds Complete requests 10"},
				{5, `Concurrency Level "0": must be at least 1`},
			},
			notes: []string{"1 rows: the size in Document Path differs from Document Length; size and length are Document Length"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, info, err := tt.read(strings.NewReader(tt.in), "x.csv")
			if err != nil {
				t.Fatal(err)
			}
			checkSamples(t, got, tt.want)
			if !reflect.DeepEqual(info.Skipped, tt.skips) {
				t.Errorf("skipped:\n got %q\nwant %q", info.Skipped, tt.skips)
			}
			if info.Rows != len(tt.want)+len(tt.skips) || info.Imported != len(tt.want) {
				t.Errorf("rows %d, imported %d", info.Rows, info.Imported)
			}
			if !reflect.DeepEqual(info.Notes, tt.notes) {
				t.Errorf("notes:\n got %q\nwant %q", info.Notes, tt.notes)
			}
		})
	}
}

func TestFatal(t *testing.T) {
	tests := []struct {
		name string
		read reader
		in   string
		want string
	}{
		{"ppbench empty file", ppReader, "", "x.csv: empty file: no header line"},
		{"ab empty file", abReader, "", "x.csv: empty file: no header line"},
		{"ppbench header only", ppReader, ppHead, "x.csv: no data rows after the header"},
		{"ppbench missing column", ppReader, strings.Replace(ppHead, `"Time per request",`, "", 1), `x.csv: missing column "Time per request"`},
		{"ab missing column", abReader, strings.Replace(abHead, "Document Length,", "", 1), `x.csv: missing column "Document Length"`},
		{"ab file as ppbench", ppReader, abHead, `x.csv: missing column "Response Code" (this looks like an apachebench CSV: use --format ab)`},
		{"ppbench file as ab", abReader, ppHead, `x.csv: missing column "Tag" (this looks like a ppbench CSV: use --format ppbench)`},
		{"nothing usable", ppReader, ppHead + `"m","bare","/mping/1","0","1","1","x","0","0","0","200"` + "\n",
			`x.csv: none of the 1 data rows is usable (first problem: line 2: Time per request "x": not a number: skipped)`},
		{"bad header", ppReader, `"Machine Tag,"x` + "\n", "x.csv: header: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, _, err := tt.read(strings.NewReader(tt.in), "x.csv")
			if err == nil {
				t.Fatalf("no error, %d samples", len(got))
			}
			if !strings.HasPrefix(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q, want one line starting with %q", err, tt.want)
			}
			if got != nil {
				t.Errorf("samples with an error: %v", got)
			}
		})
	}
}

// TestRoundTrip exports samples as ppbench's CSV and imports them back:
// each row gives back the size's aggregated values.
func TestRoundTrip(t *testing.T) {
	var in []record.Sample
	add := func(mode string, size int, durs []float64, retries, code int) {
		for rep, d := range durs {
			in = append(in, record.Sample{Workload: "pingpong", Mode: mode, Size: size, Rep: rep,
				DurationMS: d, LatencyMS: d + 1, Length: size, Code: code, Retries: retries})
		}
	}
	add("bare", 1000, []float64{1, 2, 3.5}, 0, 200)
	add("bridge", 1000, []float64{2.25, 2.5, 2.75}, 1, 200)
	add("bare", 87381, []float64{7.1, 6.9, 7.3}, 0, 200)
	add("bridge", 87381, []float64{9.7, 11.1, 10.3}, 2, 200)
	add("bridge", 250000, []float64{30.3, 29.9, 31.7}, 0, 200)

	var buf bytes.Buffer
	if err := export.PPBench(&buf, in, export.PPBenchOptions{MachineTag: "lab", Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	csvText := buf.String()
	got, info, err := PPBench(strings.NewReader(csvText), "export.csv")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(strings.NewReader(csvText)).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	rows = rows[1:]
	if len(got) != len(rows) || len(got) != 5 {
		t.Fatalf("%d samples from %d rows, want 5", len(got), len(rows))
	}
	type key struct {
		mode string
		size int
	}
	group := map[key][]record.Sample{}
	for _, s := range in {
		group[key{s.Mode, s.Size}] = append(group[key{s.Mode, s.Size}], s)
	}
	for i, s := range got {
		reps := group[key{s.Mode, s.Size}]
		if len(reps) == 0 {
			t.Fatalf("sample %d: %s/%d not in the input", i, s.Mode, s.Size)
		}
		var durs []float64
		var retries int
		for _, r := range reps {
			durs = append(durs, r.DurationMS)
			retries += r.Retries
		}
		mean := stats.Mean(durs)
		if s.Length != reps[0].Length || s.DurationMS != mean || s.Retries != retries || s.Code != reps[0].Code ||
			s.Rep != 0 || s.LatencyMS != 0 || s.Error != "" || s.Labels["machine"] != "lab" || !s.OK() {
			t.Errorf("sample %d: %+v; want length %d, duration %v, retries %d, code %d", i, s, reps[0].Length, mean, retries, reps[0].Code)
		}
		rate, _ := strconv.ParseFloat(rows[i][7], 64)
		if math.Abs(s.TransferRate()-rate) > 1e-9*rate {
			t.Errorf("sample %d: transfer rate %v, the row's %v", i, s.TransferRate(), rate)
		}
	}
	if !reflect.DeepEqual(info.Concurrency, []int{3}) || !reflect.DeepEqual(info.Experiments, []string{"bare", "bridge"}) {
		t.Errorf("info %+v", info)
	}

	// Exporting the imported samples again gives the same sizes, lengths,
	// times, retries and codes.
	var again bytes.Buffer
	if err := export.PPBench(&again, got, export.PPBenchOptions{MachineTag: "lab", Concurrency: 3}); err != nil {
		t.Fatal(err)
	}
	rows2, err := csv.NewReader(&again).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range rows2[1:] {
		for _, c := range []int{0, 1, 2, 3, 4, 5, 6, 8, 9, 10} {
			if r[c] != rows[i][c] {
				t.Errorf("re-export row %d column %q: %q, first export %q", i, export.PPBenchHeader[c], r[c], rows[i][c])
			}
		}
	}
}

func TestWriteRun(t *testing.T) {
	samples, info, err := PPBench(strings.NewReader(readFile(t, "ppbench.csv")), "testdata/ppbench.csv")
	if err != nil {
		t.Fatal(err)
	}
	info.Cnperf = "test"
	dir := filepath.Join(t.TempDir(), "run")
	if err := WriteRun(dir, samples, info, ""); err != nil {
		t.Fatal(err)
	}

	rd, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	var meta record.Meta
	if err := rd.Meta(&meta); err != nil {
		t.Fatal(err)
	}
	back, rep, err := rd.Contents()
	if err != nil || rep.Skipped != 0 {
		t.Fatalf("read back: %v %+v", err, rep)
	}
	want := make([]record.Sample, len(samples))
	for i, s := range samples {
		s.Cell = map[string]int{"bare": 0, "docker": 1}[s.Mode]
		want[i] = s
	}
	checkSamples(t, back.PingPong, want)

	if meta.Format != 1 || meta.Status != "imported" || meta.Cnperf != "test" || meta.ID == "" ||
		meta.Finished == nil || !meta.Finished.Equal(meta.Started) || meta.Started.IsZero() ||
		meta.Machine.Hostname != "imported" || meta.Machine.CPUs != 0 || meta.Sizes != 4 || meta.ReceiveWindow != 0 {
		t.Errorf("meta %+v", meta)
	}
	s := meta.Spec
	if s.Name != "ppbench" || s.Description != "imported from ppbench file testdata/ppbench.csv" || s.Driver != "import" ||
		!reflect.DeepEqual(s.Modes, []string{"bare", "docker"}) || s.Reference != "bare" ||
		!reflect.DeepEqual(s.Labels, map[string]string{"machine": "m3.large", "source": "ppbench"}) ||
		s.PingPong.Concurrency != 10 || s.PingPong.MinSize != 1000 || s.PingPong.MaxSize != 300000 {
		t.Errorf("spec %+v", s)
	}
	wantCells := []struct {
		mode            string
		samples, failed int
	}{{"bare", 3, 0}, {"docker", 4, 2}}
	if len(meta.Cells) != 2 || len(meta.Modes) != 2 {
		t.Fatalf("cells %+v, modes %+v", meta.Cells, meta.Modes)
	}
	for i, w := range wantCells {
		c := meta.Cells[i]
		if c.Index != i || c.Mode != w.mode || c.Samples != w.samples || c.Failed != w.failed || meta.Modes[i].Mode != w.mode {
			t.Errorf("cell %d: %+v, want %+v", i, c, w)
		}
	}

	// What `cnperf summary` does with it.
	rows := analysis.NewSweep(back.PingPong, nil, meta.Spec.Modes).Rows(meta.Spec.Reference) // imported cells have no duration: no rates
	if len(rows) != 2 || rows[0].Samples != 3 || rows[1].Samples != 2 || rows[1].Failed != 2 ||
		rows[0].InnerMS != 4 || rows[1].InnerMS != 9 || rows[0].TransferRatio != 1 {
		b, _ := json.Marshal(rows)
		t.Errorf("summary rows %s", b)
	}
	var table bytes.Buffer
	if err := report.WriteSweepTable(&table, rows, meta.Spec.Reference); err != nil {
		t.Fatal(err)
	}

	// A second import into the same directory is refused and leaves it alone.
	if err := WriteRun(dir, samples, info, "ppbench"); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("second import: %v", err)
	}
	if _, err := record.Open(dir); err != nil {
		t.Errorf("after the refused import: %v", err)
	}
}

func TestWriteRunReference(t *testing.T) {
	samples, info, err := ApacheBench(strings.NewReader(readFile(t, "ab.csv")), "/data/Kratzke 2015 (ab).csv")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// No "bare"... there is one here: bare is the default reference.
	info.Reference = "weave"
	if err := WriteRun(dir, samples, info, "apachebench"); err != nil {
		t.Fatal(err)
	}
	var meta record.Meta
	rd, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := rd.Meta(&meta); err != nil {
		t.Fatal(err)
	}
	if meta.Spec.Reference != "weave" || meta.Spec.Name != "Kratzke-2015-ab-" || meta.Spec.PingPong.Concurrency != 10 ||
		meta.Spec.Labels["machine"] != "" {
		t.Errorf("spec %+v", meta.Spec)
	}

	info.Reference = "nosuch"
	if err := WriteRun(filepath.Join(t.TempDir(), "x"), samples, info, "apachebench"); err == nil ||
		err.Error() != `reference mode "nosuch" is not in the data (modes: bare, weave)` {
		t.Errorf("unknown reference: %v", err)
	}
	if err := WriteRun(t.TempDir(), nil, info, "ppbench"); err == nil {
		t.Error("no samples: no error")
	}
}

func TestReferenceAndName(t *testing.T) {
	for _, tt := range []struct {
		modes     []string
		want, ref string
		named     bool
		wantErr   bool
	}{
		{[]string{"docker", "bare"}, "", "bare", true, false},
		// Kratzke's ab data starts with the slowest setup: never the default.
		{[]string{"weave-encrypted", "weave", "docker", "native"}, "", "native", true, false},
		{[]string{"overlay", "Reference"}, "", "Reference", true, false}, // as the file spells it
		{[]string{"vm", "docker", "native"}, "", "native", true, false},  // native before vm
		{[]string{"docker", "VM"}, "", "VM", true, false},
		{[]string{"bare-metal", "docker"}, "", "bare-metal", false, false}, // only the names themselves
		{[]string{"docker", "weave"}, "", "docker", false, false},
		{[]string{"docker", "weave"}, "weave", "weave", true, false},
		{[]string{"docker"}, "bare", "", false, true},
		{nil, "", "", false, false},
	} {
		got, named, err := Reference(tt.modes, tt.want)
		if got != tt.ref || named != tt.named || (err != nil) != tt.wantErr {
			t.Errorf("Reference(%v, %q) = %q, %v, %v; want %q, %v", tt.modes, tt.want, got, named, err, tt.ref, tt.named)
		}
	}
	for in, want := range map[string]string{
		"m3.large.csv":                   "m3.large",
		"/x/.hidden.csv":                 "hidden",
		"-":                              "imported",
		"_a b.csv":                       "a-b",
		strings.Repeat("a", 70) + ".csv": strings.Repeat("a", 64),
	} {
		if got := runName(in); got != want {
			t.Errorf("runName(%q) = %q, want %q", in, got, want)
		}
	}
}
