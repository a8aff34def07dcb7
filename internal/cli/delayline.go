package cli

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab/delayline"
)

// newServeDelaylineCmd runs the user-space delay line between a lab's two
// zones; the netns driver starts it in the lab's switch namespace where
// the kernel has no netem. Hidden: only labs start it.
func newServeDelaylineCmd(stderr io.Writer) *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:    "delayline --config JSON",
		Short:  "Delay frames between a lab's two zones in user space",
		Args:   cobra.NoArgs,
		Hidden: true,
		RunE: func(*cobra.Command, []string) error {
			c, err := delayline.ParseConfig(config)
			if err != nil {
				return usagef("--config: %v", err)
			}
			// A container's process is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			logf := func(f string, a ...any) { fmt.Fprintf(stderr, "cnperf delayline: "+f+"\n", a...) }
			return fail(delayline.Serve(ctx, c, logf))
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "the line's configuration, JSON (local, remote, delay_ns, jitter_ns, loss_percent, queue_bytes, stats, seed)")
	return cmd
}
