// Package kubecli holds the kubernetes driver's commands: what it runs
// inside its pods (pod, hidden) and the tool that writes its workload image
// (image save). The driver registry adds them to the CLI.
package kubecli

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube/image"
	"github.com/cnperf/cnperf/internal/lab/kube/inpod"
)

// Commands are the driver's commands; version is cnperf's (the image's
// default tag).
func Commands(version string, stdout, stderr io.Writer) []*cobra.Command {
	return []*cobra.Command{newPodCmd(stdout, stderr), newImageCmd(version, stdout)}
}

// usagef makes a bad-input error (exit 2).
func usagef(format string, a ...any) error { return fmt.Errorf(format, a...) }

// fail marks an error as the machine's (exit 1).
func fail(err error) error {
	if err == nil {
		return nil
	}
	return lab.Failure{Err: err}
}

// newPodCmd is what the kubernetes driver runs inside its pods; people do
// not call it.
func newPodCmd(stdout, stderr io.Writer) *cobra.Command {
	pod := &cobra.Command{Use: "pod", Short: "Inside a pod of the kubernetes driver: hold, run, usage, bound, mtu, listen, probe", Hidden: true}
	pod.AddCommand(&cobra.Command{
		Use: "hold", Short: "Wait for SIGTERM: a pod's main process", Args: cobra.NoArgs,
		Run: func(*cobra.Command, []string) { inpod.Hold() },
	})
	pod.AddCommand(&cobra.Command{
		Use: "run -- ARGS...", Short: "Run cnperf ARGS until they end or stdin closes", Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			// The process's own exit code, with no line of cnperf's: the
			// driver reads it as the process's.
			if code := inpod.Run(args, os.Stdin, stdout, stderr); code != 0 {
				os.Exit(code)
			}
			return nil
		},
	})
	var pid, port int
	var proto string
	usage := &cobra.Command{
		Use: "usage --pid N", Short: "Print a process's CPU and memory as JSON", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return inpod.Usage(pid, stdout) },
	}
	usage.Flags().IntVar(&pid, "pid", 0, "the process")
	bound := &cobra.Command{
		Use: "bound --pid N --port P --proto tcp[,udp]", Short: "Say whether a process listens on a port", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if port < 1 || port > 65535 {
				return usagef("--port %d: want 1 to 65535", port)
			}
			if pid < 1 {
				return usagef("--pid %d: want a process id", pid)
			}
			protos := strings.Split(proto, ",")
			for _, p := range protos {
				if !slices.Contains(inpod.BoundProtocols, p) {
					return usagef("--proto %q: want %s, comma-separated", p, strings.Join(inpod.BoundProtocols, " or "))
				}
			}
			inpod.Bound(pid, port, protos, stdout)
			return nil
		},
	}
	bound.Flags().IntVar(&pid, "pid", 0, "the process")
	bound.Flags().IntVar(&port, "port", 0, "the port")
	bound.Flags().StringVar(&proto, "proto", "tcp", "protocols, comma-separated")
	mtu := &cobra.Command{
		Use: "mtu", Short: "Print the MTU of the pod's eth0 (what the CNI gave it)", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error { return inpod.MTU("eth0", stdout) },
	}
	var addr string
	var every, timeout time.Duration
	listen := &cobra.Command{
		Use: "listen --port P", Short: "Accept TCP connections on a port and close them: an enforcement probe's server", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if port < 1 || port > 65535 {
				return usagef("--port %d: want 1 to 65535", port)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return fail(inpod.Listen(ctx, port))
		},
	}
	listen.Flags().IntVar(&port, "port", 0, "the port")
	probe := &cobra.Command{
		Use: "probe --addr IP:PORT", Short: "Dial a TCP port again and again; print pass or block when that changes", Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				return usagef("--addr %q: want IP:PORT", addr)
			}
			if err := inpod.CheckProbe(every, timeout); err != nil {
				return err // bad input (exit 2)
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
			defer stop()
			return fail(inpod.Probe(ctx, addr, every, timeout, stdout))
		},
	}
	probe.Flags().StringVar(&addr, "addr", "", "the server's IP:PORT")
	probe.Flags().DurationVar(&every, "every", 10*time.Millisecond, "how often to dial")
	probe.Flags().DurationVar(&timeout, "timeout", 200*time.Millisecond, "how long a dial may take before it counts as blocked")
	pod.AddCommand(usage, bound, mtu, listen, probe)
	return pod
}

// newImageCmd writes cnperf's workload image for the kubernetes driver.
func newImageCmd(version string, stdout io.Writer) *cobra.Command {
	img := &cobra.Command{Use: "image", Short: "Write cnperf's workload image (the kubernetes driver's pods run it)"}
	var out, name string
	save := &cobra.Command{
		Use:   "save -o FILE [--name NAME:TAG]",
		Short: "Write the image (this binary at /cnperf) as a tar that ctr, docker load, skopeo and crane take",
		Example: `  cnperf image save -o cnperf.tar --name cnperf/workload:v1
  ctr -n k8s.io images import cnperf.tar      # on each node, then --image cnperf/workload:v1 --image-pull-policy Never
  crane push cnperf.tar registry.example/cnperf/workload:v1`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			if out == "" {
				return usagef("-o FILE: where to write the image")
			}
			if err := image.CheckRef(name); err != nil {
				return usagef("--name: %v", err)
			}
			exe, err := os.Executable()
			if err != nil {
				return fail(fmt.Errorf("find cnperf's own binary: %w", err))
			}
			f, err := os.OpenFile(out, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err != nil {
				return fail(err)
			}
			if err := image.Write(f, exe, name); err != nil {
				f.Close()
				os.Remove(out)
				return fail(err)
			}
			if err := f.Close(); err != nil {
				return fail(err)
			}
			fmt.Fprintf(stdout, "wrote %s: image %s\n", out, name)
			return nil
		},
	}
	save.Flags().StringVarP(&out, "out", "o", "", "file to create")
	save.Flags().StringVar(&name, "name", "cnperf/workload:"+imageTag(version), "image name and tag")
	img.AddCommand(save)
	return img
}

// imageTag is the default tag: this build's version, as a tag may spell it.
func imageTag(version string) string {
	var b strings.Builder
	for _, r := range version {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '.', r == '-', r == '_':
			b.WriteRune(r)
		default:
			b.WriteRune('-')
		}
	}
	if b.Len() == 0 {
		return "latest"
	}
	return b.String()
}
