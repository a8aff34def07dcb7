package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/labtest"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
	"github.com/cnperf/cnperf/internal/workload/shell"
)

// echo is a tiny socket workload written the way a real one is, in this
// file only: a UDP server echoes datagrams, the client sends count of them
// and counts the echoes. Nothing else in cnperf knows of it.
type echo struct{}

type echoTotal struct {
	Sent   int64   `json:"sent"`
	Echoed int64   `json:"echoed"`
	Bytes  int64   `json:"bytes"`
	PerSec float64 `json:"echoes_per_s"`
}

func (echo) Name() string     { return "echo" }
func (echo) Headline() string { return "echoes_per_s" }
func (echo) Metrics() []workload.Metric {
	return []workload.Metric{
		{Key: "echoes_per_s", Title: "Echoes", Unit: "1/s", HigherIsBetter: true, Short: "echoes/s"},
		{Key: "unechoed", Title: "Not echoed", Unit: "datagrams", Short: "unechoed"},
	}
}
func (echo) Server() workload.Server {
	return workload.Server{Role: "echo-server", Port: 5299, Protocols: []string{"udp"}, Args: []string{"serve", "echo", "--listen", ":5299"}}
}
func (echo) Capabilities() []workload.Capability { return nil }

// Params declares echo's parameters once: the spec's fields, their
// bounds, whether a sweep may vary them, and the client's flags.
func (echo) Params() []workload.Param {
	return []workload.Param{
		{Name: "length", Kind: workload.Whole, Unit: "bytes", Bounds: []workload.Bound{{Min: 1, Max: 1400, What: "echo datagram"}},
			Flag: "--size", Default: "64", Sweep: true, Help: "datagram size"},
		{Name: "count", Kind: workload.Whole, Unit: "datagrams", Bounds: []workload.Bound{{Max: 10_000}},
			Flag: "--count", Default: "1", Help: "datagrams to echo"},
	}
}

// Validate: a rule across parameters, in the client's words (renamed to
// the spec's by workload.Flags).
func (echo) Validate(t workload.Test) error {
	if t.Params.Int("count") > 0 && t.Params.Int("count")*max(t.Params.Int("length"), 64) > 8<<20 {
		return fmt.Errorf("--count %d: echoes more than 8 MiB", t.Params.Int("count"))
	}
	return nil
}

func (echo) Total(payload json.RawMessage) (workload.Total, error) {
	r, err := workload.Value[echoTotal](payload)
	if err != nil {
		return workload.Total{}, err
	}
	return workload.Total{Protocol: "udp", Values: map[string]float64{"echoes_per_s": r.PerSec, "unechoed": float64(r.Sent - r.Echoed)},
		Moved: r.Bytes}, nil
}

// echoClient is `cnperf echo --server H:P --json --time T --interval I
// --size N --count N`, in the shell every socket client runs in: it
// prints a start and an end envelope. extra are parameters the client
// takes besides echo's (a test's declaration adds them).
func echoClient(w workload.Socket, con workload.Console) *cobra.Command {
	return shell.Command(con, shell.Client{Workload: w, Time: 10 * time.Second, Interval: time.Second,
		Run: func(ctx context.Context, r shell.Run) error {
			r.Start()
			conn, err := net.Dial("udp", r.Server)
			if err != nil {
				return workload.Fail(err)
			}
			defer conn.Close()
			start := time.Now()
			buf := make([]byte, r.Params.Int("length"))
			var tot echoTotal
			for range r.Params.Int("count") {
				if _, err := conn.Write(buf); err != nil {
					return workload.Fail(err)
				}
				tot.Sent++
				_ = conn.SetReadDeadline(time.Now().Add(time.Second))
				if n, err := conn.Read(buf); err == nil {
					tot.Echoed++
					tot.Bytes += int64(n)
				}
			}
			tot.PerSec = float64(tot.Echoed) / time.Since(start).Seconds()
			return r.Env.Print(workload.KindEnd, tot)
		}})
}

// TestMain makes the test binary the echo workload's and the mirror
// sweep's binary (mainOf), as cnperf's is for the workloads it links: the
// runner starts it as `serve echo` (the server) and `echo` (the client);
// otherwise it runs the tests.
func TestMain(m *testing.M) {
	if main := mainOf(os.Args[1:]); main != nil {
		process.AwaitStart() // as cnperf's main: in its cgroups first
		if err := main(os.Args[1:]); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// echoMain is the binary's echo commands: `serve echo --listen ADDR`, or
// the client.
func echoMain(args []string) error {
	if args[0] == "echo" {
		cmd := echoClient(echo{}, workload.Console{Stdout: os.Stdout, Stderr: os.Stderr})
		cmd.SetArgs(args[1:])
		return cmd.Execute()
	}
	fs := flag.NewFlagSet("serve echo", flag.ContinueOnError)
	listen := fs.String("listen", ":5299", "address to echo on")
	if len(args) < 2 || args[1] != "echo" || fs.Parse(args[2:]) != nil {
		return fmt.Errorf("usage: serve echo --listen ADDR (got %q)", args)
	}
	pc, err := net.ListenPacket("udp", *listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { <-ctx.Done(); pc.Close() }()
	buf := make([]byte, 2048)
	for {
		n, from, err := pc.ReadFrom(buf)
		if err != nil {
			return nil // closed: stopped
		}
		_, _ = pc.WriteTo(buf[:n], from)
	}
}

// TestEchoWorkload adds a workload with its descriptor and client (this
// file) and one line in the registry's list (Add), and nothing else: a
// spec's test of it validates in the spec's words, and a run of it goes
// through the runner as any socket test's does (its server on the
// server's endpoint, its clients' lines stored, a cost line per cell),
// then analysis and the report read its values and its cost per GB back.
// Without root it runs on a driver whose labs are in memory (labtest, its
// hosts at loopback addresses); with root on the netns driver, bare
// beside bridge.
func TestEchoWorkload(t *testing.T) {
	if _, ok := registry.Lookup("echo"); ok {
		t.Fatal("echo is registered before the test adds it")
	}
	t.Cleanup(registry.Add(echo{}))

	// The spec: its test validates, and bad values are named as the spec
	// writes them.
	const tests = "tests:\n  - {workload: echo, count: 200, repetitions: 2, sweep: {param: length, values: ['64', '512']}}\n"
	s, err := spec.Parse(strings.NewReader("name: e\nmodes: [bare, bridge]\n"+tests), "echo.yaml")
	if err != nil {
		t.Fatalf("a spec with an echo test: %v", err)
	}
	cases, err := s.Cases()
	if err != nil || len(cases) != 2 || cases[1].Label != "echo length=512" {
		t.Fatalf("cases: %+v, %v", cases, err)
	}
	refused(t, []struct{ yaml, want string }{
		{"{workload: echo, length: 2000}", "tests[0].length: 2000 is above the largest echo datagram (1400)"},
		{"{workload: echo, count: 20000}", "tests[0].count: 20000 is outside 0..10000"},
		{"{workload: echo, count: 9000, length: 1400}", "tests[0].count: 9000: echoes more than 8 MiB"},
		{"{workload: echo, request: 10}", "tests[0].request: not a parameter of echo (it has length, count)"},
		{"{workload: echo, lenght: 10}", "tests[0].lenght: unknown field; echo takes length, count, and every test name, workload"},
		{"{workload: echo, sweep: {param: count, values: ['1']}}", `tests[0].sweep.param: "count": echo sweeps length`},
		{"{workload: echoes}", `tests[0].workload: "echoes" is not a workload (known: stream, rr, jitter, datagram, grid, conns, echo)`},
	})

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Run("loopback", func(t *testing.T) {
		cat := drivers.Catalog(&labtest.Driver{})
		checkEchoRun(t, cat, exe, "name: echo_loopback\ndriver: loopback\nmodes: [bare]\n"+tests, []string{"bare"})
	})
	t.Run("netns", func(t *testing.T) {
		if os.Geteuid() != 0 {
			t.Skip("needs root: the netns driver makes network namespaces")
		}
		checkEchoRun(t, drivers.Catalog(), exe, "name: echo_netns\nmodes: [bare, bridge]\n"+tests, []string{"bare", "bridge"})
	})
}

// checkEchoRun runs doc through run.Run on cat with exe as the binary, and
// reads the run back as the report does: two records (start and end) and
// a cost line per cell, echoes counted and none lost on every series, a
// CPU cost per GB, and the report's table naming the headline.
func checkEchoRun(t *testing.T, cat lab.Catalog, exe, doc string, modes []string) {
	_, dir := runtest.RunExe(t, cat, exe, "echo", doc)
	rd, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	socks, rep, err := rd.Contents()
	cells := len(modes) * 2 * 2 // modes, cases, repetitions
	if err != nil || rep.Skipped != 0 || len(socks.Records) != 2*cells || len(socks.Costs) != cells {
		t.Fatalf("stored: %d records, %d costs, %+v, %v; want %d cells", len(socks.Records), len(socks.Costs), rep, err, cells)
	}
	runs, notes := report.Load([]string{dir})
	if len(runs) != 1 || len(notes) != 0 {
		t.Fatalf("report.Load: %d runs, notes %v", len(runs), notes)
	}
	got := report.Cases(runs, "bare", 1)
	if len(got) != 2 || got[1].Label != "echo length=512" || got[1].Protocol != "udp" {
		t.Fatalf("cases: %+v", got)
	}
	c := got[1]
	if m, ok := c.Headline(); !ok || m.Key != "echoes_per_s" || !m.HigherIsBetter {
		t.Errorf("headline %+v, %v", m, ok)
	}
	keys := map[string]bool{}
	for _, m := range c.Metrics {
		keys[m.Key] = true
	}
	for _, k := range []string{"echoes_per_s", "unechoed", "client_cpu", "cpu_per_gb"} {
		if !keys[k] {
			t.Errorf("case lacks metric %s: %+v", k, c.Metrics)
		}
	}
	var series []string
	for _, row := range c.Rows {
		series = append(series, row.Series)
		st := row.Stats["echoes_per_s"]
		if st.N != 2 || !(st.Mean.Value > 0) || row.Stats["unechoed"].Mean.Value != 0 || !(row.Stats["cpu_per_gb"].Mean.Value > 0) {
			t.Errorf("%s: echoes/s %+v, unechoed %+v, CPU per GB %+v", row.Series, st, row.Stats["unechoed"], row.Stats["cpu_per_gb"])
		}
	}
	if !slices.Equal(series, modes) {
		t.Errorf("series %v, want %v", series, modes)
	}
	var table bytes.Buffer
	if err := report.WriteCaseTables(&table, got, "bare"); err != nil || !strings.Contains(table.String(), "echoes/s") {
		t.Errorf("table: %v\n%s", err, table.String())
	}
}

// echoTTL is echo with one more parameter, declared once below.
type echoTTL struct{ echo }

func (echoTTL) Name() string { return "echottl" }
func (e echoTTL) Params() []workload.Param {
	return append(e.echo.Params(), workload.Param{Name: "ttl", Kind: workload.Whole, Unit: "hops",
		Bounds: []workload.Bound{{Min: 1, Max: 255}}, Flag: "--ttl", Default: "64", Sweep: true, Help: "IP time to live"})
}

// TestParameterDeclaredOnce adds a parameter to a workload by declaring it
// once (echoTTL.Params): a spec's test takes it, sweeps it, is refused a
// value out of its bounds in the spec's words, and its client gets it as
// the flag its declaration names.
func TestParameterDeclaredOnce(t *testing.T) {
	w := echoTTL{}
	t.Cleanup(registry.Add(w))
	s, err := spec.Parse(strings.NewReader("name: e\nmodes: [bare]\ntests:\n  - {workload: echottl, ttl: 3}\n  - {workload: echottl, sweep: {param: ttl, values: ['1', '64']}}\n"), "ttl.yaml")
	if err != nil {
		t.Fatalf("a spec with ttl: %v", err)
	}
	cases, err := s.Cases()
	if err != nil || len(cases) != 3 || cases[2].Label != "echottl ttl=64" || cases[2].Test.Params.Int("ttl") != 64 {
		t.Fatalf("cases: %+v, %v", cases, err)
	}
	refused(t, []struct{ yaml, want string }{
		{"{workload: echottl, ttl: 300}", "tests[0].ttl: 300 is outside 1..255"},
		{"{workload: echottl, ttl: many}", `tests[0].ttl: "many": want a whole number`},
		{"{workload: echottl, sweep: {param: ttl, values: ['1', '300']}}", "tests[0].sweep.values[1]: 300 is outside 1..255"},
		{"{workload: echottl, sweep: {param: ttl, from: 0, to: 256, step: 128}}", "tests[0].sweep.to: 256 is outside 1..255"},
		{"{workload: datagram, ttl: 3}", "tests[0].ttl: not a parameter of datagram (it has length, rate, count)"},
	})

	// The client: the case's arguments carry --ttl, and the client's
	// command, whose flags the shell registers from the declaration,
	// reads it.
	for i, want := range map[int]int64{0: 3, 2: 64} {
		args := cases[i].ClientArgs("127.0.0.1")
		if j := slices.Index(args, "--ttl"); j < 0 || args[j+1] != fmt.Sprint(want) {
			t.Fatalf("case %d's client arguments %q lack --ttl %d", i, args, want)
		}
		var got workload.Params
		cmd := shell.Command(workload.Console{Stdout: io.Discard}, shell.Client{Workload: w,
			Run: func(_ context.Context, r shell.Run) error { got = r.Params; return nil }})
		cmd.SetArgs(args[1:])
		if err := cmd.Execute(); err != nil || got.Int("ttl") != want {
			t.Errorf("client %q: ttl %v, %v; want %d", args, got["ttl"], err, want)
		}
	}
	cmd := shell.Command(workload.Console{Stdout: io.Discard}, shell.Client{Workload: w,
		Run: func(context.Context, shell.Run) error { return nil }})
	cmd.SetArgs([]string{"--server", "127.0.0.1", "--ttl", "0"})
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	if err := cmd.Execute(); err == nil || !strings.Contains(err.Error(), "--ttl 0: must be at least 1") {
		t.Errorf("client --ttl 0: %v", err)
	}
}

// refused checks that a spec with each tests entry (yaml) is refused with
// an error saying want.
func refused(t *testing.T, bad []struct{ yaml, want string }) {
	t.Helper()
	for _, b := range bad {
		_, err := spec.Parse(strings.NewReader("name: e\nmodes: [bare]\ntests:\n  - "+b.yaml+"\n"), "bad.yaml")
		if err == nil || !strings.Contains(err.Error(), b.want) {
			t.Errorf("%s: %v, want %q", b.yaml, err, b.want)
		}
	}
}
