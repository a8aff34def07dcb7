package serverkit

import (
	"context"
	"fmt"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/cnperf/cnperf/internal/workload"
)

// Command is a `cnperf serve NAME` command: --listen, and --tests for a
// server that measures several clients at once, checked before anything
// listens (bad input: exit 2); the server then runs until SIGINT or SIGTERM.
type Command struct {
	Use, Short, Long string
	Port             int    // the default port
	ListenNote       string // what --listen's help adds to the console's
	// Tests declares --tests (1 to MaxTests clients at once); TestsNote
	// ends its help.
	Tests     bool
	TestsNote string
	// Flags, optional, adds the server's own flags.
	Flags func(*pflag.FlagSet)
	// Check, optional, refuses a --listen address the server cannot use,
	// or its own flags' values; its error is bad input.
	Check func(addr string) error
	// Serve runs the server on addr for tests clients at once until ctx
	// ends; its error is a failure (exit 1).
	Serve func(ctx context.Context, addr string, tests int) error
}

// Cobra makes the command.
func (c Command) Cobra(con workload.Console) *cobra.Command {
	var listen string
	tests := 1
	cmd := &cobra.Command{
		Use: c.Use, Short: c.Short, Long: c.Long,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := CheckTests(tests); err != nil {
				return err
			}
			addr, err := con.Listen(listen, c.Port)
			if err != nil {
				return err
			}
			if c.Check != nil {
				if err := c.Check(addr); err != nil {
					return err
				}
			}
			// A container's server is PID 1 of its pid namespace, where
			// signals without a handler are ignored: handle them.
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			return workload.Fail(c.Serve(ctx, addr, tests))
		},
	}
	cmd.Flags().StringVar(&listen, "listen", con.DefaultListen(c.Port), con.ListenHelp+c.ListenNote)
	if c.Tests {
		cmd.Flags().IntVar(&tests, "tests", 1, fmt.Sprintf("clients measured at once, each a session of its own, at most %d%s", MaxTests, c.TestsNote))
	}
	if c.Flags != nil {
		c.Flags(cmd.Flags())
	}
	return cmd
}
