package cli

import (
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
)

// newPauseCmd is what a docker-driver sandbox container runs: it holds the
// container's network namespace, as Kubernetes' pause container holds a
// pod's, and ends on SIGTERM or SIGINT (also as PID 1, which ignores
// signals it has no handler for).
func newPauseCmd() *cobra.Command {
	return &cobra.Command{
		Use:    "pause",
		Short:  "Hold a sandbox container's network namespace until SIGTERM",
		Hidden: true,
		Args:   cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			ch := make(chan os.Signal, 1)
			signal.Notify(ch, syscall.SIGTERM, syscall.SIGINT)
			<-ch
			return nil
		},
	}
}
