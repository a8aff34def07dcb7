package cli

import (
	"errors"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/workload"
	"github.com/cnperf/cnperf/internal/workload/commands"
)

func newServeCmd(stderr io.Writer) *cobra.Command {
	cmd := &cobra.Command{Use: "serve",
		Long: `Run a workload server. Servers have no authentication: they listen on
loopback (127.0.0.1) unless --listen says otherwise, e.g. --listen :5201 for
every interface; open them only on a network you trust. cnperf run starts
them inside its labs with the lab's own addresses.`}
	// Every workload's servers, as package commands lists them: ping and
	// pong of ping-pong, then the socket workloads' (jitter and datagram
	// share `serve udp`, listed once).
	var names []string
	for _, srv := range commands.Servers(console(nil, stderr)) {
		names = append(names, srv.Name())
		cmd.AddCommand(adopt(srv))
	}
	cmd.Short = "Run a workload server (" + strings.Join(names, ", ") + ")"
	cmd.AddCommand(newServeOverlayCmd(stderr), newServeDelaylineCmd(stderr))
	return cmd
}

// newClientCmds are the workloads' clients, `cnperf siege`, `cnperf
// stream` and the others, as package commands lists them.
func newClientCmds(stdout, stderr io.Writer) []*cobra.Command {
	var out []*cobra.Command
	for _, c := range commands.Clients(console(stdout, stderr)) {
		out = append(out, adopt(c))
	}
	return out
}

// console is what a workload's commands get from the command line.
func console(stdout, stderr io.Writer) workload.Console {
	return workload.Console{Stdout: stdout, Stderr: stderr, Listen: listenAddr, DefaultListen: defaultListen, ListenHelp: listenHelp}
}

// adopt makes a workload's command exit as every command does: its
// workload.Failure is a failure (exit 1), other errors bad input.
func adopt(cmd *cobra.Command) *cobra.Command {
	run := cmd.RunE
	cmd.RunE = func(c *cobra.Command, args []string) error {
		err := run(c, args)
		if errors.As(err, new(workload.Failure)) {
			return fail(err)
		}
		return err
	}
	return cmd
}
