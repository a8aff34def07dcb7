package cli

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab/stress"
)

// newStressCmd burns a share of CPU until SIGTERM, the cpu_stress
// condition (package stress). Pinned by its starter to a host's CPUs.
func newStressCmd() *cobra.Command {
	c := stress.Config{Share: 0.5, Threads: 1}
	cmd := &cobra.Command{
		Use:    "stress --share S --threads N",
		Short:  "Burn a share of CPU on N threads until SIGTERM (the cpu_stress condition)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if err := c.Validate(); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			stress.Burn(ctx, c)
			return nil
		},
	}
	cmd.Flags().Float64Var(&c.Share, "share", c.Share, "share of each CPU to burn, in (0, 1)")
	cmd.Flags().IntVar(&c.Threads, "threads", c.Threads, "threads, one per CPU to load")
	cmd.Flags().DurationVar(&c.On, "on", 0, "burn for this long, then pause for --off, over and over (default: always)")
	cmd.Flags().DurationVar(&c.Off, "off", 0, "pause between bursts of --on")
	return cmd
}
