package registry_test

import (
	"context"
	"encoding/binary"
	"flag"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/lab/drivers"
	"github.com/cnperf/cnperf/internal/lab/labtest"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report"
	"github.com/cnperf/cnperf/internal/testutil/runtest"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/registry"
)

// mirrorSweep is a tiny size sweep written the way a real one is, in this
// file only: a TCP server (mirror) answers a 4-byte size with that many
// bytes, and the client (prober, on a host of its own) asks it for each
// size of its chunk, printing one sample per request. Nothing else in
// cnperf knows of it.
type mirrorSweep struct{}

func (mirrorSweep) Name() string     { return "mirrorsweep" }
func (mirrorSweep) Headline() string { return "outer" }
func (mirrorSweep) Metrics() []workload.Metric {
	return []workload.Metric{{Key: "outer", Title: "Round trip, median", Unit: "ms", Short: "rtt ms"}}
}
func (mirrorSweep) Client() string { return "prober" }
func (mirrorSweep) Target() string { return "mirror" }
func (mirrorSweep) Probe() int     { return 1 }

// Params declares what its programs take of the spec's fields.
func (mirrorSweep) Params() []workload.Param {
	return []workload.Param{
		{Name: "repetitions", Kind: workload.Whole, Unit: "requests", Bounds: []workload.Bound{{Min: 1, Max: 100}}, Flag: "--repetitions", Default: "1", Help: "requests per size"},
		{Name: "timeout", Kind: workload.Duration, Bounds: []workload.Bound{{Min: 1, Max: int64(time.Minute)}}, Flag: "--timeout", Default: "1s", Help: "one request"},
		{Name: "max_body", Kind: workload.Whole, Unit: "bytes", Bounds: []workload.Bound{{Min: 1, Max: 1 << 20}}, Flag: "--max-size", Default: "65536", Help: "the mirror's largest answer"},
	}
}

func (mirrorSweep) Servers(set workload.SweepSettings, at func(role string) workload.SweepAddr) []workload.Server {
	return []workload.Server{{Role: "mirror", Port: 7070, Protocols: []string{"tcp"},
		Args: []string{"serve", "mirror", "--listen", at("mirror").Listen, "--max-size", strconv.Itoa(set.MaxBody)}}}
}

func (w mirrorSweep) ClientArgs(set workload.SweepSettings, target string, sizes []int) []string {
	list := make([]string, len(sizes))
	for i, n := range sizes {
		list[i] = strconv.Itoa(n)
	}
	return []string{w.Client(), "--target", target, "--sizes", strings.Join(list, ","),
		"--repetitions", strconv.Itoa(set.Repetitions), "--timeout", set.Timeout.String()}
}

// sweepMain is the binary's mirror commands: `serve mirror --listen ADDR
// --max-size N`, or the client, `prober --target H:P --sizes N,... ...`.
func sweepMain(args []string) error {
	fs := flag.NewFlagSet(args[0], flag.ContinueOnError)
	listen, maxSize := fs.String("listen", "", "address to serve on"), fs.Int("max-size", 0, "largest answer")
	target, sizes := fs.String("target", "", "mirror's HOST:PORT"), fs.String("sizes", "", "sizes to ask for")
	reps, timeout := fs.Int("repetitions", 1, "requests per size"), fs.Duration("timeout", time.Second, "one request")
	rest := args[1:]
	if args[0] == "serve" {
		rest = args[2:]
	}
	if err := fs.Parse(rest); err != nil {
		return err
	}
	if args[0] == "serve" {
		return serveMirror(*listen, *maxSize)
	}
	out := workload.NewPrinter(os.Stdout, mirrorSweep{}.Name())
	n := 0
	for _, f := range strings.Split(*sizes, ",") {
		size, err := strconv.Atoi(f)
		if err != nil {
			return err
		}
		for rep := range *reps {
			s := record.Sample{Workload: mirrorSweep{}.Name(), Size: size, Rep: rep, Time: time.Now()}
			got, err := askMirror(*target, size, *timeout)
			s.Length, s.LatencyMS = got, float64(time.Since(s.Time).Microseconds())/1000
			s.DurationMS, s.Code = s.LatencyMS, 200 // answered, as record.Sample reads a code
			if err != nil {
				s.Code, s.Error = 0, err.Error()
			}
			if err := out.Print(workload.KindInterval, s); err != nil {
				return err
			}
			n++
		}
	}
	return out.Print(workload.KindEnd, struct {
		Requests int `json:"requests"`
	}{n})
}

// askMirror asks for size bytes on a connection of its own and returns
// how many came.
func askMirror(target string, size int, timeout time.Duration) (int, error) {
	c, err := net.DialTimeout("tcp", target, timeout)
	if err != nil {
		return 0, err
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(timeout))
	if err := binary.Write(c, binary.BigEndian, uint32(size)); err != nil {
		return 0, err
	}
	n, err := io.Copy(io.Discard, io.LimitReader(c, int64(size)+1))
	return int(n), err
}

// serveMirror answers each connection's size with that many bytes, none
// past max, until SIGTERM.
func serveMirror(listen string, max int) error {
	l, err := net.Listen("tcp", listen)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	go func() { <-ctx.Done(); l.Close() }()
	for {
		c, err := l.Accept()
		if err != nil {
			return nil // closed: stopped
		}
		go func() {
			defer c.Close()
			var size uint32
			if binary.Read(c, binary.BigEndian, &size) == nil && int(size) <= max {
				_, _ = c.Write(make([]byte, size))
			}
		}()
	}
}

// TestSizeSweepRecipe adds a size sweep with its descriptor and programs
// (this file) and one line in the registry's list (AddSweep), and nothing
// else: a spec's test of it is known as a size sweep by the list, stored
// and read back under its name; a run of it goes through the runner on
// a driver whose labs are in memory (labtest, without root): its lab laid
// from the descriptor (the client's host, the server's), readiness its
// one probe, one stored sample per request of the size plan, a cost line
// per cell; record and the report read its samples back as its case.
func TestSizeSweepRecipe(t *testing.T) {
	if _, ok := registry.Sweep("mirrorsweep"); ok {
		t.Fatal("mirrorsweep is registered before the test adds it")
	}
	t.Cleanup(registry.AddSweep(mirrorSweep{}))

	const tests = "tests:\n  - {workload: mirrorsweep, min_size: 1, max_size: 3000, coverage: 0.004, repetitions: 2, chunk: 6, timeout: 2s, max_body: 4096, port: 7070}\n"
	refused(t, []struct{ yaml, want string }{
		{"{workload: mirrorsweep, colour: 1}", "tests[0].colour: unknown field; mirrorsweep takes min_size"},
		{"{workload: mirrorsweep}\n  - {workload: pingpong}", "tests[1]: a second size sweep"},
		{"{workload: mirrorsweep, min_size: 9, max_size: 3}", "tests[0].max_size 3: must be >= min_size (9)"},
		{"{workload: mirrorsweep, servers: {ping: [x], pong: [y]}}", "tests[0].servers: other implementations of ping and pong; mirrorsweep runs its own"},
	})

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	d := &labtest.Driver{}
	res, dir := runtest.RunExe(t, drivers.Catalog(d), exe, "mirrorsweep", "name: mirror_loopback\ndriver: loopback\nmodes: [bare]\n"+tests)
	if got := res.Meta.Spec.Sweep().Name(); got != "mirrorsweep" {
		t.Errorf("the run's spec sweeps %s", got)
	}

	// The lab and what ran on it: the descriptor's hosts, its server, the
	// probe, then a client per cell.
	log := d.Log()
	if len(log.Ups) != 1 || len(log.Ups[0].Topology.Hosts) != 2 || log.Ups[0].Topology.Hosts[0].Name != "prober" || log.Ups[0].Topology.Hosts[1].Name != "mirror" {
		t.Fatalf("labs up: %+v", log.Ups)
	}
	servers, clients := log.Runtimes[log.Ups[0].Name].Started()
	if len(servers) != 1 || !slices.Equal(servers[0].Args[1:3], []string{"serve", "mirror"}) || len(clients) < 2 || clients[0].Name != "prober-probe" {
		t.Errorf("started servers %+v, clients %+v", servers, clients)
	}

	// Stored: one sample per request, of its workload, whole; a cost line
	// per cell naming it; the spec read back sweeps it.
	rd, err := record.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	c, rep, err := rd.Contents()
	if err != nil || rep.Skipped != 0 {
		t.Fatalf("contents: %+v, %v", rep, err)
	}
	var meta record.Meta
	if err := rd.Meta(&meta); err != nil {
		t.Fatal(err)
	}
	if want := meta.Sizes * 2; meta.Sizes < 2 || len(c.PingPong) != want || len(c.Costs) != len(meta.Cells) || len(meta.Cells) != (meta.Sizes+5)/6 {
		t.Fatalf("%d sizes: %d samples, %d cost lines, %d cells", meta.Sizes, len(c.PingPong), len(c.Costs), len(meta.Cells))
	}
	t.Logf("%d sizes, %d samples, %d cells, clients %d", meta.Sizes, len(c.PingPong), len(meta.Cells), len(clients))
	for _, s := range c.PingPong {
		if s.Workload != "mirrorsweep" || !s.OK() || s.Length != s.Size {
			t.Errorf("sample %+v", s)
		}
	}
	for _, cost := range c.Costs {
		if cost.Test != "mirrorsweep" {
			t.Errorf("cost line of %q", cost.Test)
		}
	}
	if meta.Spec.Sweep().Name() != "mirrorsweep" {
		t.Errorf("run.json's spec sweeps %s", meta.Spec.Sweep().Name())
	}

	// The report: its case is the sweep's, every request counted.
	runs, notes := report.Load([]string{dir})
	if len(runs) != 1 || len(notes) != 0 {
		t.Fatalf("report.Load: %d runs, notes %v", len(runs), notes)
	}
	cases := report.RunCases(runs[0], "bare", 1)
	if len(cases) != 1 || cases[0].Workload != "mirrorsweep" || cases[0].Sweep == nil {
		t.Fatalf("cases %+v", cases)
	}
	if row := cases[0].Sweep.Row("bare"); row.Samples != len(c.PingPong) || !(row.LatencyMS > 0) {
		t.Errorf("row %+v", row)
	}
}

// mainOf is the test binary's own program that args start (TestMain):
// the echo workload's or the mirror sweep's; nil for none.
func mainOf(args []string) func([]string) error {
	switch {
	case len(args) > 1 && args[0] == "serve" && args[1] == "mirror", len(args) > 0 && args[0] == "prober":
		return sweepMain
	case len(args) > 0 && (args[0] == "serve" || args[0] == "echo"):
		return echoMain
	}
	return nil
}
