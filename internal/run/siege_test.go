package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/run/progress"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong/server"
	"github.com/cnperf/cnperf/internal/workload/pingpong/siege"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// inProcess is a Launcher whose "pods" are goroutines: a client is
// `cnperf siege` run in this process, as a cluster's pod would run it.
type inProcess struct{}

func (inProcess) StartServer(lab.Endpoint, lab.Server) (lab.Proc, error) {
	return nil, errors.New("no servers here")
}

func (inProcess) StartClient(_ lab.Endpoint, _ string, args []string, stdout, stderr io.Writer) (lab.Proc, error) {
	if len(args) < 2 || args[0] != "cnperf" || args[1] != "siege" {
		return nil, errors.New("only cnperf siege runs here")
	}
	var cmd *cobra.Command = siege.Command(workload.Console{Stdout: stdout, Stderr: stderr})
	cmd.SetArgs(args[2:])
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	p := &goProc{done: make(chan struct{})}
	go func() { p.err = cmd.Execute(); close(p.done) }()
	return p, nil
}

type goProc struct {
	done chan struct{}
	err  error
}

func (p *goProc) PID() int                      { return 0 }
func (p *goProc) Done() <-chan struct{}         { return p.done }
func (p *goProc) Usage() (process.Usage, error) { return process.Usage{}, nil }
func (p *goProc) Stop(time.Duration) error      { <-p.done; return nil }
func (p *goProc) Exited() (bool, error)         { <-p.done; return true, p.err }

// servePingPong serves pong and a ping in front of it on loopback until
// the test ends, and returns ping's address.
func servePingPong(t *testing.T) string {
	t.Helper()
	serve := func(h func(context.Context, net.Listener) error) string {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- h(ctx, ln) }()
		t.Cleanup(func() { cancel(); <-done })
		return ln.Addr().String()
	}
	pong := serve(func(ctx context.Context, ln net.Listener) error { return server.ServePong(ctx, ln, 1<<20) })
	ping, err := server.NewPingHandler(server.PingConfig{PongURL: "http://" + pong, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	return serve(func(ctx context.Context, ln net.Listener) error { return server.Serve(ctx, ln, ping) })
}

// inProcessRuntime is inProcess as a lab's runtime.
type inProcessRuntime struct {
	lab.BaseRuntime
	inProcess
}

func (inProcessRuntime) Alive() error     { return nil }
func (inProcessRuntime) Sight() lab.Sight { return lab.Sight{Local: true, Own: true} }

// siegeEnv is a lab whose client host runs siege in this process (as a
// cluster's pod would run it) against ping at addr.
func siegeEnv(t *testing.T, addr string) *env {
	l := &lab.Lab{Runtime: inProcessRuntime{}}
	l.Hosts = []lab.Host{{Name: "siege"}}
	l.Endpoints = []lab.Endpoint{{Role: "ping", Host: "ping", External: addr, Internal: addr}}
	return &env{key: "m", lab: l, procs: map[string]proc{}, exe: "cnperf", logs: t.TempDir()}
}

// TestSiegeCellThroughLauncher: a ping-pong cell runs as every cell does:
// the runner starts the descriptor's siege command line through the
// lab's launcher, reads its envelope lines and stores one sample per
// request (in the fields runs have always stored), then the cell's cost
// line; the readiness probe is the same siege, one request.
func TestSiegeCellThroughLauncher(t *testing.T) {
	ping := servePingPong(t)
	s := spec.Default()
	s.PingPong.Repetitions, s.PingPong.Concurrency, s.PingPong.Timeout = 2, 2, 5*time.Second
	sizes := []int{0, 5, 300, 70000}
	s.PingPong.Chunk = len(sizes)
	p := newPingPong(s)
	p.sizes = sizes
	e := siegeEnv(t, ping)
	if err := p.ready(context.Background(), e); err != nil {
		t.Fatalf("ready: %v", err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	run, err := record.Create(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer run.Close()
	app := &appender{run: run, bar: progress.New(io.Discard, 1, len(sizes)*2), bytes: map[string]int64{}}
	cell := record.Cell{Index: 3, Mode: "m", Start: time.Now()}
	cr, err := p.cell(e, 0, &cell, app)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.runCell(context.Background(), cr, &cell, app, nil); err != nil {
		t.Fatal(err)
	}
	if cell.Samples != len(sizes)*2 || cell.Failed != 0 || cell.Error != "" || app.total != len(sizes)*2 {
		t.Fatalf("cell %+v, %d stored: want %d good samples", cell, app.total, len(sizes)*2)
	}
	b, err := os.ReadFile(filepath.Join(dir, record.SamplesFile))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]int{}
	costs := 0
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		var probe struct {
			Workload string `json:"workload"`
			Kind     string `json:"kind"`
		}
		if err := json.Unmarshal(line, &probe); err != nil || probe.Kind != "" {
			t.Fatalf("stored line %s: not a bare sample or cost line (%v)", line, err)
		}
		if probe.Workload == "cost" {
			var c record.Cost
			if err := json.Unmarshal(line, &c); err != nil || c.Test != "pingpong" || c.Cell != 3 || c.Mode != "m" {
				t.Errorf("cost line %s", line)
			}
			costs++
			continue
		}
		var smp record.Sample
		if err := json.Unmarshal(line, &smp); err != nil {
			t.Fatal(err)
		}
		seen[smp.Size]++
		if !smp.OK() || smp.Workload != "pingpong" || smp.Time.IsZero() || smp.Mode != "m" || smp.Cell != 3 {
			t.Errorf("sample %+v: want a whole exchange of mode m, cell 3", smp)
		}
	}
	for _, n := range sizes {
		if seen[n] != 2 {
			t.Errorf("size %d: %d samples, want 2", n, seen[n])
		}
	}
	if costs != 1 {
		t.Errorf("%d cost lines, want 1", costs)
	}
}

// TestSiegeLineStoresTheSample: an envelope's interval line and the bare
// line of the same sample are stored byte for byte alike; start and end
// lines are no samples; a line of another workload is an error.
func TestSiegeLineStoresTheSample(t *testing.T) {
	smp := record.Sample{Workload: "pingpong", Mode: "m", Size: 5, Rep: 1, DurationMS: 0.25, LatencyMS: 0.5, Length: 5, Code: 200,
		Time: time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)}
	bare, _ := json.Marshal(smp)
	var env bytes.Buffer
	pr := workload.NewPrinter(&env, "pingpong")
	if err := pr.Print(workload.KindStart, workload.Start{Server: "http://x"}); err != nil {
		t.Fatal(err)
	}
	if err := pr.Print(workload.KindInterval, smp); err != nil {
		t.Fatal(err)
	}
	if err := pr.Print(workload.KindEnd, siege.End{Requests: 1}); err != nil {
		t.Fatal(err)
	}
	lines := bytes.Split(bytes.TrimSpace(env.Bytes()), []byte("\n"))
	var stored [][]byte
	for _, line := range append(lines, bare) {
		got, ok, err := sampleLine("pingpong", line)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		if ok {
			b, _ := json.Marshal(got)
			stored = append(stored, b)
		}
	}
	if len(stored) != 2 || !bytes.Equal(stored[0], bare) || !bytes.Equal(stored[1], bare) {
		t.Errorf("stored %q, want the bare sample %s twice", stored, bare)
	}
	for _, other := range []string{`{"workload":"rr","kind":"interval"}`, `{"workload":"rr","size":4}`, `{"size":4}`} {
		if _, _, err := sampleLine("pingpong", []byte(other)); err == nil {
			t.Errorf("%s was taken for a ping-pong sample", other)
		}
	}
}

// TestSiegeTCP: the TCP_INFO siege's end line carries reaches the cell;
// an end line without it, or any other line, carries none.
func TestSiegeTCP(t *testing.T) {
	tcp := &tcpinfo.Stats{Connections: 2, Retransmits: 5, RTTUS: 120, Cwnd: 10, CwndMin: 4}
	line := func(kind string, v any) []byte {
		var b bytes.Buffer
		if err := workload.NewPrinter(&b, "pingpong").Print(kind, v); err != nil {
			t.Fatal(err)
		}
		return bytes.TrimSpace(b.Bytes())
	}
	pong := &tcpinfo.Stats{Connections: 1, Retransmits: 7, RTTUS: 90, Cwnd: 20, CwndMin: 20}
	many := map[string]*tcpinfo.Stats{}
	for i := range maxServerSides + 1 {
		many[fmt.Sprint("side", i)] = pong
	}
	tests := []struct {
		name    string
		line    []byte
		want    *tcpinfo.Stats
		servers map[string]*tcpinfo.Stats
	}{
		{"end with TCP_INFO", line(workload.KindEnd, siege.End{Requests: 3, TCP: tcp}), tcp, nil},
		{"end with the servers' sides", line(workload.KindEnd, siege.End{Requests: 3, TCP: tcp, Servers: map[string]*tcpinfo.Stats{siege.SidePong: pong}}),
			tcp, map[string]*tcpinfo.Stats{siege.SidePong: pong}},
		{"a side without numbers", []byte(`{"workload":"pingpong","kind":"end","server_tcp_info":{"pong":null}}`), nil, nil},
		{"more sides than siege names", line(workload.KindEnd, siege.End{Requests: 3, Servers: many}), nil, nil},
		{"end without", line(workload.KindEnd, siege.End{Requests: 3}), nil, nil},
		{"interval", line(workload.KindInterval, struct {
			TCP *tcpinfo.Stats `json:"tcp_info"`
		}{tcp}), nil, nil},
		{"not json", []byte(`{"kind":"end","tcp_info":`), nil, nil},
	}
	for _, tt := range tests {
		got, servers := endTCP(tt.line)
		if (got == nil) != (tt.want == nil) || got != nil && *got != *tt.want {
			t.Errorf("%s: %+v, want %+v", tt.name, got, tt.want)
		}
		if len(servers) != len(tt.servers) {
			t.Errorf("%s: servers %v, want %v", tt.name, servers, tt.servers)
		}
		for k, v := range tt.servers {
			if servers[k] == nil || *servers[k] != *v {
				t.Errorf("%s: side %s = %+v, want %+v", tt.name, k, servers[k], v)
			}
		}
	}
}

// FuzzSiegeLine: whatever a client printed, reading it neither panics nor
// takes a line of another workload, nor a start or end line, for a sample.
func FuzzSiegeLine(f *testing.F) {
	for _, seed := range []string{
		`{"workload":"pingpong","kind":"interval","cell":0,"size":5,"rep":0,"duration_ms":0.1,"latency_ms":0.2,"length":5,"code":200,"retries":0,"ts":"2026-01-02T03:04:05Z"}`,
		`{"workload":"pingpong","cell":0,"size":5,"rep":0,"duration_ms":0.1,"latency_ms":0.2,"length":5,"code":200,"retries":0,"ts":"2026-01-02T03:04:05Z"}`,
		`{"workload":"pingpong","kind":"start","server":"http://x","settings":{"sizes":"1"}}`,
		`{"workload":"pingpong","kind":"end","requests":1,"failed":0,"sizes":1}`,
		`{"workload":"rr","kind":"end"}`, `[]`, `null`, `{"size":"x"}`, ``,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		_, _ = endTCP(line)
		smp, ok, err := sampleLine("pingpong", line)
		if ok && (err != nil || smp.Workload != "pingpong") {
			t.Fatalf("%q: sample %+v, error %v", line, smp, err)
		}
		if env, derr := workload.Decode(line); derr == nil && ok && (env.Workload != "pingpong" || env.Kind != workload.KindInterval) {
			t.Fatalf("%q: a %s %s line taken for a sample", line, env.Workload, env.Kind)
		}
	})
}
