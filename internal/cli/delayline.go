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
			l, err := delayline.Open(c)
			if err != nil {
				return fail(err)
			}
			// A container's process is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			fmt.Fprintf(stderr, "cnperf delayline: %s <-> %s, delay %s ± %s, loss %g %%, queue %d bytes each way\n",
				c.Local, c.Remote, c.Delay, c.Jitter, c.LossPercent, c.QueueBytes)
			err = l.Run(ctx)
			for _, d := range l.Stats() {
				fmt.Fprintf(stderr, "cnperf delayline: %s to %s: %d frames, %d bytes, %d lost, %d dropped (queue full), %d truncated, peak queue %d bytes, late median %s p99 %s max %s\n",
					d.From, d.To, d.Frames, d.Bytes, d.Lost, d.Dropped, d.Truncated, d.PeakQueueBytes, d.LateMedian, d.LateP99, d.LateMax)
			}
			return fail(err)
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "the line's configuration, JSON (local, remote, delay_ns, jitter_ns, loss_percent, queue_bytes, stats, seed)")
	return cmd
}
