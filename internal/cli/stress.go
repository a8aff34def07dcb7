package cli

import (
	"context"
	"os/signal"
	"runtime"
	"syscall"
	"time"

	"github.com/spf13/cobra"
)

// newStressCmd burns a share of CPU, the cpu_stress condition (Zismer 2016
// used stress-ng): each thread spins for share of every 10 ms period and
// sleeps the rest, until SIGTERM; with --on/--off only in the on part of
// each window. Pinned by its starter to a host's CPUs.
func newStressCmd() *cobra.Command {
	var share float64
	var threads int
	var on, off time.Duration
	cmd := &cobra.Command{
		Use:    "stress --share S --threads N",
		Short:  "Burn a share of CPU on N threads until SIGTERM (the cpu_stress condition)",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if share <= 0 || share >= 1 {
				return usagef("--share %g: want (0, 1)", share)
			}
			if threads < 1 || threads > 1024 {
				return usagef("--threads %d: want 1..1024", threads)
			}
			if (on == 0) != (off == 0) || on < 0 || off < 0 {
				return usagef("--on %s --off %s: give both, > 0, or neither", on, off)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			const period = 10 * time.Millisecond
			busy := time.Duration(share * float64(period))
			t0 := time.Now()
			for range threads {
				go func() {
					runtime.LockOSThread()
					for ctx.Err() == nil {
						start := time.Now()
						if burning(start.Sub(t0), on, off) {
							for time.Since(start) < busy {
							}
						}
						time.Sleep(period - min(busy, time.Since(start)))
					}
				}()
			}
			<-ctx.Done()
			return nil
		},
	}
	cmd.Flags().Float64Var(&share, "share", 0.5, "share of each CPU to burn, in (0, 1)")
	cmd.Flags().IntVar(&threads, "threads", 1, "threads, one per CPU to load")
	cmd.Flags().DurationVar(&on, "on", 0, "burn for this long, then pause for --off, over and over (default: always)")
	cmd.Flags().DurationVar(&off, "off", 0, "pause between bursts of --on")
	return cmd
}

// burning says whether the stress burns at elapsed since its start: always,
// or in the on part of each on+off window.
func burning(elapsed, on, off time.Duration) bool {
	return on == 0 || elapsed%(on+off) < on
}
