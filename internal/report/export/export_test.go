package export

import (
	"bytes"
	"encoding/csv"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
)

func s(mode string, size, rep int, dur float64, length, code, retries int, errMsg string) record.Sample {
	return record.Sample{
		Workload: "pingpong", Mode: mode, Size: size, Rep: rep, DurationMS: dur,
		LatencyMS: dur + 0.5, Length: length, Code: code, Retries: retries, Error: errMsg,
	}
}

// fixture: 2 modes × 2 sizes × 3 repetitions, in an interleaved order.
// bridge/100 rep 1 got no answer (Error); bridge/2000 rep 0 is a 503.
func fixture() []record.Sample {
	return []record.Sample{
		s("bridge", 2000, 1, 5, 2000, 200, 0, ""), // appears first, but is not rep 0
		s("bare", 100, 0, 1, 100, 200, 0, ""),
		s("bare", 2000, 0, 2, 2000, 200, 0, ""),
		s("bridge", 100, 0, 4, 100, 200, 0, ""),
		s("bridge", 2000, 0, 5, 0, 503, 3, ""),
		s("bare", 100, 1, 2, 100, 200, 1, ""),
		s("bare", 2000, 1, 4, 2000, 200, 0, ""),
		s("bridge", 100, 1, 0, 0, 0, 2, "timeout"),
		s("bare", 100, 2, 3, 100, 200, 0, ""),
		s("bare", 2000, 2, 6, 2000, 200, 0, ""),
		s("bridge", 100, 2, 4, 100, 200, 0, ""),
		s("bridge", 2000, 2, 5, 2000, 200, 0, ""),
	}
}

const ppHeader = `"Machine Tag","Experiment Tag","Document Path","Failed requests","Concurrency Level","Total transferred","Time per request","Transfer rate","Requests per second","Retries","Response Code"` + "\n"

func TestPPBench(t *testing.T) {
	tests := []struct {
		name    string
		samples []record.Sample
		opts    PPBenchOptions
		want    string
	}{
		{
			name:    "fixture",
			samples: fixture(),
			opts:    PPBenchOptions{MachineTag: "m1", Concurrency: 1},
			// bridge/2000: median(0,2000,2000)=2000; 4000·1000/15; code of rep 0
			// bare/100: mean(1,2,3)=2; 300·1000/6=50000; 1000/2=500
			// bare/2000: mean(2,4,6)=4; 6000·1000/12=500000
			// bridge/100: the errored rep only counts as failed: 200·1000/8
			want: ppHeader +
				`"m1","bridge","/mping/2000","1","1","2000.0","5.0","266666.6666666667","200.0","3","503"` + "\n" +
				`"m1","bare","/mping/100","0","1","100.0","2.0","50000.0","500.0","1","200"` + "\n" +
				`"m1","bare","/mping/2000","0","1","2000.0","4.0","500000.0","250.0","0","200"` + "\n" +
				`"m1","bridge","/mping/100","1","1","100.0","4.0","25000.0","250.0","0","200"` + "\n",
		},
		{
			name:    "quoting",
			samples: []record.Sample{s("bare", 10, 0, 0.5, 10, 200, 0, "")},
			opts: PPBenchOptions{
				MachineTag:    `vm "large", eu`,
				Concurrency:   4,
				ExperimentTag: func(record.Sample) string { return `say "hi",` + "\n" + `x` },
			},
			want: ppHeader +
				`"vm ""large"", eu","say ""hi"",` + "\n" + `x","/mping/10","0","4","10.0","0.5","20000.0","2000.0","0","200"` + "\n",
		},
		{
			name: "even median, fractional mean",
			samples: []record.Sample{
				s("host", 7, 0, 1, 6, 200, 0, ""),
				s("host", 7, 1, 1, 7, 200, 0, ""),
				s("host", 7, 2, 2, 8, 200, 0, ""),
				s("host", 7, 3, 4, 9, 200, 0, ""),
			},
			opts: PPBenchOptions{MachineTag: "m", Concurrency: 2},
			// median(6,7,8,9)=7.5; mean(1,1,2,4)=2; 30·1000/8=3750
			want: ppHeader + `"m","host","/mping/7","0","2","7.5","2.0","3750.0","500.0","0","200"` + "\n",
		},
		{
			name: "no answered repetition: row skipped",
			samples: []record.Sample{
				s("bare", 5, 0, 0, 0, 0, 0, "connection refused"),
				s("bare", 5, 1, 0, 0, 0, 0, "connection refused"),
				s("bare", 6, 0, 0, 0, 200, 0, ""), // zero duration: no finite time
				s("bare", 7, 0, 1, 7, 200, 0, ""),
			},
			opts: PPBenchOptions{MachineTag: "m", Concurrency: 1},
			want: ppHeader + `"m","bare","/mping/7","0","1","7.0","1.0","7000.0","1000.0","0","200"` + "\n",
		},
		{
			name:    "custom tag does not merge modes",
			samples: []record.Sample{s("bare", 5, 0, 1, 5, 200, 0, ""), s("host", 5, 0, 2, 5, 200, 0, "")},
			opts:    PPBenchOptions{ExperimentTag: func(record.Sample) string { return "all" }},
			want: ppHeader +
				`"","all","/mping/5","0","0","5.0","1.0","5000.0","1000.0","0","200"` + "\n" +
				`"","all","/mping/5","0","0","5.0","2.0","2500.0","500.0","0","200"` + "\n",
		},
		{
			name:    "no samples",
			samples: nil,
			want:    ppHeader,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := PPBench(&b, tt.samples, tt.opts); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
			// Whatever we write, a CSV parser reads back the same fields count.
			recs, err := csv.NewReader(strings.NewReader(b.String())).ReadAll()
			if err != nil {
				t.Fatalf("output is not valid CSV: %v", err)
			}
			for i, r := range recs {
				if len(r) != len(PPBenchHeader) {
					t.Errorf("record %d has %d fields", i, len(r))
				}
			}
			if tt.name == "quoting" && recs[1][0] != tt.opts.MachineTag {
				t.Errorf("machine tag round trip: %q", recs[1][0])
			}
		})
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, bytes.ErrTooLarge }

func TestWriteErrors(t *testing.T) {
	if err := PPBench(failWriter{}, fixture(), PPBenchOptions{}); err == nil {
		t.Error("PPBench: no error from a failing writer")
	}
	if err := Samples(failWriter{}, fixture()); err == nil {
		t.Error("Samples: no error from a failing writer")
	}
}

func TestSamples(t *testing.T) {
	ts := time.Date(2024, 5, 6, 7, 8, 9, 120000000, time.UTC)
	tests := []struct {
		name    string
		samples []record.Sample
		want    string
	}{
		{
			name: "labels and errors",
			samples: []record.Sample{
				{Workload: "pingpong", Mode: "bare", Labels: map[string]string{"mtu": "1500", "host": "a"}, Cell: 0, Size: 100, Rep: 0,
					DurationMS: 1.25, LatencyMS: 2.5, Length: 100, Code: 200, Retries: 0, Time: ts},
				{Workload: "pingpong", Mode: "bridge", Labels: map[string]string{"zone": "x,y"}, Cell: 3, Size: 2000, Rep: 2,
					DurationMS: 0, LatencyMS: 30000, Length: 0, Code: 0, Retries: 2, Time: ts.Add(time.Second), Error: `dial "pong": refused`},
				{Workload: "pingpong", Mode: "host", Cell: 4, Size: 1, Rep: 1, DurationMS: 0.001, LatencyMS: 1e-4, Code: 503},
			},
			want: "mode,cell,size,rep,duration_ms,latency_ms,length,code,retries,ts,error,label:host,label:mtu,label:zone\n" +
				"bare,0,100,0,1.25,2.5,100,200,0,2024-05-06T07:08:09.12Z,,a,1500,\n" +
				`bridge,3,2000,2,0,30000,0,0,2,2024-05-06T07:08:10.12Z,"dial ""pong"": refused",,,"x,y"` + "\n" +
				"host,4,1,1,0.001,0.0001,0,503,0,,,,,\n",
		},
		{
			name:    "no samples",
			samples: nil,
			want:    "mode,cell,size,rep,duration_ms,latency_ms,length,code,retries,ts,error\n",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			if err := Samples(&b, tt.samples); err != nil {
				t.Fatal(err)
			}
			if got := b.String(); got != tt.want {
				t.Errorf("got:\n%s\nwant:\n%s", got, tt.want)
			}
		})
	}
}

func TestRubyFloat(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{1062, "1062.0"}, {0, "0.0"}, {math.Copysign(0, -1), "-0.0"}, {1.5, "1.5"}, {-2, "-2.0"},
		{0.0001, "0.0001"}, {0.00012, "0.00012"}, {0.00001, "1.0e-05"}, {0.0000123, "1.23e-05"},
		{9999999999999998, "9999999999999998.0"}, {1e16, "1.0e+16"}, {1.5e16, "1.5e+16"}, {1e100, "1.0e+100"},
		{1.1897550000000001, "1.1897550000000001"}, {266666.6666666667, "266666.6666666667"}, {1e-300, "1.0e-300"},
		{math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"}, {math.NaN(), "NaN"},
	}
	for _, tt := range tests {
		if got := rubyFloat(tt.f); got != tt.want {
			t.Errorf("rubyFloat(%v) = %q, want %q", tt.f, got, tt.want)
		}
	}
}
