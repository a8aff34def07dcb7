package cli

import (
	"context"
	"fmt"
	"io"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab/router"
)

// newServeOverlayCmd runs one host's user-space overlay router; the
// overlay-userspace and overlay-encrypted modes start it in each host.
func newServeOverlayCmd(stderr io.Writer) *cobra.Command {
	var config string
	cmd := &cobra.Command{
		Use:   "overlay --config JSON",
		Short: "Run a host's user-space overlay router (udp over a TUN, or userspace WireGuard)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			c, err := router.ParseConfig(config)
			if err != nil {
				return usagef("--config: %v", err)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			logf := func(f string, a ...any) { fmt.Fprintf(stderr, "cnperf "+f+"\n", a...) }
			return fail(router.Run(ctx, c, &router.Counters{}, logf))
		},
	}
	cmd.Flags().StringVar(&config, "config", "", "the router's configuration, JSON (kind, tun, mtu, listen, private_key, peers)")
	return cmd
}
