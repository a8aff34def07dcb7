package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/export"
	"github.com/cnperf/cnperf/internal/pingpong"
)

func newSiegeCmd(stdout, stderr io.Writer) *cobra.Command {
	var target, format, out, machine, experiment string
	var p pingpong.PlanConfig
	var concurrency int
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "siege --target URL",
		Short: "Load a ping server (cnperf's or Kratzke's original) like ppbench and print every request",
		Example: `  cnperf siege --target http://198.18.0.2:8080 --max 100000 --coverage 0.01 --format ppbench \
    --machine m3.large --experiment docker -o log.csv`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if target == "" {
				return usagef("--target: give ping's base URL, e.g. http://198.18.0.2:8080")
			}
			if err := p.Validate(); err != nil {
				// Name the flags the user typed, not the spec's fields.
				return errors.New(strings.NewReplacer("min_size", "--min", "max_size", "--max", "coverage", "--coverage", "repetitions", "--repetitions").Replace(err.Error()))
			}
			if concurrency < 1 {
				return usagef("--concurrency %d: must be >= 1", concurrency)
			}
			if timeout <= 0 {
				return usagef("--timeout %s: must be > 0", timeout)
			}
			if format != "jsonl" && format != "ppbench" {
				return usagef("--format %q: want jsonl or ppbench", format)
			}
			w := stdout
			if out != "" {
				f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
				if err != nil {
					return fail(err)
				}
				defer f.Close()
				w = f
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			var samples []pingpong.Sample
			enc := json.NewEncoder(w)
			reqs := pingpong.Requests(p.Sizes(), p.Repetitions)
			err := pingpong.Siege(ctx, pingpong.SiegeConfig{Target: target, Concurrency: concurrency, Timeout: timeout}, reqs, func(s pingpong.Sample) {
				s.Mode = experiment
				if format == "jsonl" {
					_ = enc.Encode(s) // streamed, so an interrupted siege keeps its lines
				} else {
					samples = append(samples, s)
				}
			})
			if format == "ppbench" {
				if werr := export.PPBench(w, samples, export.PPBenchOptions{MachineTag: machine, Concurrency: concurrency}); werr != nil {
					return fail(werr)
				}
			}
			if err != nil {
				if ctx.Err() != nil {
					return fmt.Errorf("interrupted: %w", context.Canceled)
				}
				return fail(err)
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&target, "target", "", "base URL of the ping server")
	f.IntVar(&p.Min, "min", 1, "smallest message size (bytes)")
	f.IntVar(&p.Max, "max", 500000, "largest message size (bytes)")
	f.Float64Var(&p.Coverage, "coverage", 0.05, "fraction of all sizes in [min, max] to request, in (0, 1]")
	f.IntVar(&p.Repetitions, "repetitions", 1, "requests per size")
	f.Int64Var(&p.Seed, "seed", 1, "seed of the size sample")
	f.IntVar(&concurrency, "concurrency", 1, "requests in flight")
	f.DurationVar(&timeout, "timeout", 60*time.Second, "timeout of one request")
	f.StringVar(&format, "format", "jsonl", "output: jsonl (one sample per request) or ppbench (ppbench's CSV)")
	f.StringVarP(&out, "out", "o", "", "write to a new file instead of stdout")
	f.StringVar(&machine, "machine", "", "ppbench machine tag")
	f.StringVar(&experiment, "experiment", "", "experiment tag (stored as the mode)")
	return cmd
}
