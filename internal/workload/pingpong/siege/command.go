package siege

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/export"
	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/pingpong"
	"github.com/cnperf/cnperf/internal/workload/shell"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// Command is `cnperf siege`: ping-pong's client on its own, as ppbench
// runs siege against a ping (cnperf's or Kratzke's original). It prints
// every request as a record.Sample (--format jsonl), as the envelope lines
// every workload's client prints (--format envelope: a start line, one
// interval line per request with the sample's fields, an end line) or as
// ppbench's CSV log.
// Its errors are bad input, but a workload.Failure (exit 1) and an
// interruption (wrapping context.Canceled).
func Command(con workload.Console) *cobra.Command {
	stdout, stderr := con.Stdout, con.Stderr
	var target, format, out, machine, experiment string
	var p pingpong.PlanConfig
	var concurrency int
	var timeout time.Duration
	var sizesFlag string
	cmd := &cobra.Command{
		Use:   "siege --target URL",
		Short: "Load a ping server (cnperf's or Kratzke's original) like ppbench and print every request",
		Example: `  cnperf siege --target http://198.18.0.2:8080 --max 100000 --coverage 0.01 --format ppbench \
    --machine m3.large --experiment docker -o log.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if target == "" {
				return fmt.Errorf("--target: give ping's base URL, e.g. http://198.18.0.2:8080")
			}
			if err := pingpong.CheckTarget(target); err != nil {
				return fmt.Errorf("--target %v", err)
			}
			sizes, err := siegeSizes(sizesFlag, p)
			if err != nil {
				return err
			}
			if err := p.Validate(); err != nil {
				// Name the flags the user typed, not the spec's fields.
				return fmt.Errorf("%s", strings.NewReplacer("min_size", "--min", "max_size", "--max", "coverage", "--coverage", "repetitions", "--repetitions").Replace(err.Error()))
			}
			if err := pingpong.Check("concurrency", concurrency); err != nil {
				return fmt.Errorf("--concurrency %v", err)
			}
			if err := pingpong.CheckTimeout(timeout); err != nil {
				return fmt.Errorf("--timeout %v", err)
			}
			if format != "jsonl" && format != "ppbench" && format != "envelope" {
				return fmt.Errorf("--format %q: want jsonl, ppbench or envelope", format)
			}
			w := stdout
			if out != "" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return workload.Fail(err)
				}
				defer f.Close()
				w = f
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			pp := &ppbenchLog{w: &countingWriter{w: w}, reps: p.Repetitions, opts: export.PPBenchOptions{MachineTag: machine, Concurrency: concurrency}}
			tally := &sizeTally{ok: map[int]int{}}
			env := workload.NewPrinter(w, Name)
			var end End
			switch format {
			case "ppbench":
				if err := pp.start(); err != nil {
					return workload.Fail(err)
				}
			case "envelope":
				if err := env.Print(workload.KindStart, shell.StartOf(cmd, target)); err != nil {
					return workload.Fail(err)
				}
			}
			// Every line leaves as it is known, so an interrupted siege keeps
			// what it measured; it is written apart from the requests, so
			// that no request waits on encoding or on the pipe.
			var ls *lines
			switch format {
			case "jsonl":
				ls = writeLines(w, func(bw io.Writer) func(record.Sample) error {
					enc := json.NewEncoder(bw)
					return func(s record.Sample) error { return enc.Encode(s) }
				})
			case "envelope":
				ls = writeLines(w, func(bw io.Writer) func(record.Sample) error {
					lines := workload.NewPrinter(bw, Name)
					return func(s record.Sample) error { return lines.Print(workload.KindInterval, s) }
				})
			}
			cfg := Config{Target: target, Concurrency: concurrency, Timeout: timeout}
			if format == "envelope" {
				cfg.TCP = func(s *tcpinfo.Stats) { end.TCP = s }
				cfg.Servers = func(m map[string]*tcpinfo.Stats) { end.Servers = m }
			}
			err = RunPlan(ctx, cfg, sizes, p.Repetitions, func(s record.Sample) {
				s.Mode = experiment
				tally.add(s)
				end.add(s)
				if ls != nil {
					ls.add(s)
				} else {
					pp.add(s)
				}
			})
			if ls != nil {
				if werr := ls.close(); werr != nil && err == nil {
					err = werr
				}
			}
			switch format {
			case "ppbench":
				if werr := pp.finish(); werr != nil {
					return workload.Fail(werr)
				}
			case "envelope":
				end.Sizes, end.Interrupted = len(tally.ok), ctx.Err() != nil
				if werr := env.Print(workload.KindEnd, end); werr != nil {
					return workload.Fail(werr)
				}
			}
			// A size none of whose repetitions succeeded is said, not
			// dropped silently (ppbench writes no row for it, nor a word).
			if line := tally.line(format == "ppbench", pp.rowless); line != "" {
				fmt.Fprintln(stderr, line)
			}
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted: %w", context.Canceled)
				}
				return workload.Fail(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&target, "target", "", "base URL of the ping server")
	// The parameters a spec's ping-pong test passes are registered from
	// their declaration, but coverage and repetitions default to
	// ppbench's, whose siege this is.
	cov, reps := pingpong.Param("coverage"), pingpong.Param("repetitions")
	cov.Default, reps.Default = "0.05", "1"
	shell.Flag(f, pingpong.Param("min_size"), &p.Min)
	shell.Flag(f, pingpong.Param("max_size"), &p.Max)
	shell.Flag(f, cov, &p.Coverage)
	shell.Flag(f, reps, &p.Repetitions)
	shell.Flag(f, pingpong.Param("seed"), &p.Seed)
	shell.Flag(f, pingpong.Param("concurrency"), &concurrency)
	shell.Flag(f, pingpong.Param("timeout"), &timeout)
	f.StringVar(&sizesFlag, "sizes", "", fmt.Sprintf("comma-separated message sizes to request, in this order, instead of a sample of [min, max] (at most %d)", pingpong.MaxPlanSizes))
	f.StringVar(&format, "format", "jsonl", "output: jsonl (one sample per request), envelope (a start line, one interval line per request, an end line, as other clients' --json) or ppbench (ppbench's CSV)")
	f.StringVarP(&out, "out", "o", "", "write to a new file instead of stdout")
	f.StringVar(&machine, "machine", "", "ppbench machine tag")
	f.StringVar(&experiment, "experiment", "", "experiment tag (stored as the mode)")
	return cmd
}

// Name is the workload siege measures, as its envelope lines name it.
const Name = "pingpong"

// End is the end line of --format envelope: how many requests siege sent,
// how many failed, over how many sizes, and whether it was interrupted.
type End struct {
	Requests    int  `json:"requests"`
	Failed      int  `json:"failed"`
	Sizes       int  `json:"sizes"`
	Interrupted bool `json:"interrupted,omitempty"`
	// TCP is what TCP_INFO said of siege's connections to ping, each read
	// as it closed: siege's retransmits, smoothed RTT and window.
	TCP *tcpinfo.Stats `json:"tcp_info,omitempty"`
	// Servers is what TCP_INFO said of the servers' connections during
	// the run, by side (SidePing, SideRelay, SidePong): each side's
	// retransmits are its server's, the sender of the answers, requests
	// to pong or bodies; absent where ping does not tell.
	Servers map[string]*tcpinfo.Stats `json:"server_tcp_info,omitempty"`
}

func (e *End) add(s record.Sample) {
	e.Requests++
	if !s.OK() {
		e.Failed++
	}
}

// ppbenchLog writes ppbench's CSV while siege runs, as ppbench does: a
// size's row as soon as all its repetitions are in, rows of sizes cut short
// at the end. Rows are export.PPBench's aggregation; their floats are
// written as Ruby prints a Float ("1062.0"), as in ppbench's own log.
type ppbenchLog struct {
	w       io.Writer
	opts    export.PPBenchOptions
	reps    int
	pending map[int][]record.Sample // by size, until all repetitions are in
	first   map[int]int             // a pending size's order of first appearance
	seen    int
	rowless int // sizes PPBenchRows wrote no row for: not one answer
	err     error
}

// countingWriter counts the bytes written through it: ppbenchLog tells a
// size that got no row by a count that did not move.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// sizeTally counts, per size, the requests that succeeded (a whole pong
// body with code 200), to name the sizes that got none.
type sizeTally struct {
	ok map[int]int // by size: successful requests so far
}

func (t *sizeTally) add(s record.Sample) {
	n := t.ok[s.Size]
	if s.OK() {
		n++
	}
	t.ok[s.Size] = n
}

// line is the one line for stderr naming the sizes whose every request
// failed, the first ten in ascending order ("" when there are none); with
// the ppbench log, how many of them have no row.
func (t *sizeTally) line(ppbench bool, rowless int) string {
	var failed []int
	for size, n := range t.ok {
		if n == 0 {
			failed = append(failed, size)
		}
	}
	if len(failed) == 0 {
		return ""
	}
	slices.Sort(failed)
	const shown = 10
	list := make([]string, 0, shown+1)
	for _, size := range failed[:min(len(failed), shown)] {
		list = append(list, strconv.Itoa(size))
	}
	if len(failed) > shown {
		list = append(list, "...")
	}
	line := fmt.Sprintf("cnperf siege: every request failed for %d of %d sizes: %s", len(failed), len(t.ok), strings.Join(list, ", "))
	if ppbench && rowless > 0 {
		line += fmt.Sprintf("; the ppbench log has no row for %d of them (not one answer)", rowless)
	}
	return line
}

func (l *ppbenchLog) start() error {
	l.pending, l.first = map[int][]record.Sample{}, map[int]int{}
	l.err = export.PPBench(l.w, nil, l.opts) // the header alone
	return l.err
}

func (l *ppbenchLog) add(s record.Sample) {
	if _, ok := l.first[s.Size]; !ok {
		l.first[s.Size] = l.seen
		l.seen++
	}
	l.pending[s.Size] = append(l.pending[s.Size], s)
	if len(l.pending[s.Size]) >= l.reps {
		l.row(s.Size)
	}
}

// finish writes the rows of sizes whose repetitions did not all come in, in
// the order they started.
func (l *ppbenchLog) finish() error {
	sizes := make([]int, 0, len(l.pending))
	for size := range l.pending {
		sizes = append(sizes, size)
	}
	slices.SortFunc(sizes, func(a, b int) int { return l.first[a] - l.first[b] })
	for _, size := range sizes {
		l.row(size)
	}
	return l.err
}

// row writes size's row and forgets its samples.
func (l *ppbenchLog) row(size int) {
	group := l.pending[size]
	delete(l.pending, size)
	delete(l.first, size)
	if l.err == nil {
		cw, _ := l.w.(*countingWriter)
		var before int64
		if cw != nil {
			before = cw.n
		}
		l.err = export.PPBenchRows(l.w, group, l.opts)
		if cw != nil && cw.n == before && l.err == nil {
			l.rowless++
		}
	}
}

// siegeSizes is --sizes when given (each in [0, --max bound]), else the
// plan's sample.
func siegeSizes(flag string, p pingpong.PlanConfig) ([]int, error) {
	if flag == "" {
		return p.Sizes(), nil
	}
	parts := strings.Split(flag, ",")
	if len(parts) > pingpong.MaxPlanSizes {
		return nil, fmt.Errorf("--sizes: %d sizes, more than %d", len(parts), pingpong.MaxPlanSizes)
	}
	sizes := make([]int, 0, len(parts))
	for _, f := range parts {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 0 || n > pingpong.MaxSizeLimit {
			return nil, fmt.Errorf("--sizes: %q is not a size in 0..%d", f, pingpong.MaxSizeLimit)
		}
		sizes = append(sizes, n)
	}
	return sizes, nil
}
