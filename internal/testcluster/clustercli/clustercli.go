// Package clustercli is `cnperf cluster`: the test cluster's commands
// (package testcluster), which the driver registry adds to the CLI.
package clustercli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/testcluster"
)

// Commands are `cnperf cluster` and its subcommands.
func Commands(stdout, stderr io.Writer) []*cobra.Command {
	c := &cobra.Command{
		Use:   "cluster",
		Short: "A real multi-node Kubernetes on this machine, offline: up, down, status, kubeconfig, import",
		Long: `cnperf cluster brings up a real Kubernetes (v1.34) as a cnperf lab: the control plane
on host cp, each node a host of the lab with its own containerd, kubelet and kube-proxy,
pods on the CNI you choose. Its binaries come from scripts/k8s-build.sh (and
scripts/flannel-build.sh for flannel, scripts/cilium-build.sh for Cilium). cnperf cluster down, cnperf lab down and
cnperf clean remove it like any lab. Run it as root.`,
	}
	c.AddCommand(upCmd(stdout, stderr), downCmd(stderr), statusCmd(stdout), kubeconfigCmd(stdout), importCmd(stderr), podsCmd(stdout, stderr), execCmd())
	return []*cobra.Command{c}
}

func upCmd(stdout, stderr io.Writer) *cobra.Command {
	o := testcluster.DefaultOptions()
	cmd := &cobra.Command{
		Use:   "up NAME [--nodes N] [--cni CNI] [--kube-proxy MODE] [--ip-family ipv4|dual]",
		Short: "Bring a cluster up and print its kubeconfig's path",
		Example: `  cnperf cluster up t1 --nodes 2 --cni flannel-vxlan --kube-proxy nftables
  cnperf image save -o cnperf.tar --name cnperf/workload:local && cnperf cluster import t1 cnperf.tar
  cnperf run --preset k8s-quick --kubeconfig $(cnperf cluster kubeconfig t1) --image cnperf/workload:local --image-pull-policy Never
  cnperf cluster down t1`,
		Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			o.Name = args[0]
			o.Keep = os.Getenv("CNPERF_CLUSTER_KEEP") != ""
			exe, err := os.Executable()
			if err != nil {
				return lab.Failure{Err: err}
			}
			o.Exe = exe
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			kc, err := testcluster.Up(ctx, o, stderr)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, kc)
			return nil
		},
	}
	cmd.Flags().IntVar(&o.Nodes, "nodes", o.Nodes, "Kubernetes nodes (1 to 60)")
	cmd.Flags().StringVar(&o.CNI, "cni", o.CNI, "pod network: bridge (routes between nodes), flannel-vxlan, flannel-udp, flannel-host-gw, cilium-vxlan, cilium-native")
	cmd.Flags().StringVar(&o.ProxyMode, "kube-proxy", o.ProxyMode, "kube-proxy's mode: iptables, nftables, or none (no kube-proxy: Cilium's replacement, with a cilium CNI)")
	cmd.Flags().StringVar(&o.IPFamily, "ip-family", o.IPFamily, "ipv4, or dual: nodes, pods and Services get an IPv6 address too (--cni bridge)")
	return cmd
}

func downCmd(stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use: "down NAME", Short: "Stop and remove everything of a cluster (idempotent; a half-up one too)", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error { return testcluster.Down(args[0], stderr) },
	}
}

func statusCmd(stdout io.Writer) *cobra.Command {
	return &cobra.Command{
		Use: "status NAME", Short: "The cluster's daemons, its memory, its nodes", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			return testcluster.Status(context.Background(), args[0], stdout)
		},
	}
}

func kubeconfigCmd(stdout io.Writer) *cobra.Command {
	var inLab bool
	cmd := &cobra.Command{
		Use: "kubeconfig NAME [--lab]", Short: "Print the path of the cluster's kubeconfig", Args: cobra.ExactArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			p, err := testcluster.Kubeconfig(args[0], inLab)
			if err != nil {
				return err
			}
			fmt.Fprintln(stdout, p)
			return nil
		},
	}
	cmd.Flags().BoolVar(&inLab, "lab", false, "the kubeconfig for inside the lab's namespaces (the API server at 198.18.0.1), not the root namespace's relay")
	return cmd
}

func importCmd(stderr io.Writer) *cobra.Command {
	return &cobra.Command{
		Use: "import NAME IMAGE.tar", Short: "Put an image tarball (cnperf image save, docker save) on every node", Args: cobra.ExactArgs(2),
		RunE: func(_ *cobra.Command, args []string) error {
			return testcluster.Import(context.Background(), args[0], args[1], stderr)
		},
	}
}

// execCmd is what the cluster's daemons start through; people do not
// call it.
func execCmd() *cobra.Command {
	var cg, outside, bpffs string
	var cgroupns bool
	var tmpfs, binds []string
	cmd := &cobra.Command{
		Use: "exec --cgroup REL [--tmpfs DIR] [--bind SRC:DST] -- ARGV...", Hidden: true, Args: cobra.MinimumNArgs(1),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := testcluster.Exec(cg, tmpfs, binds, bpffs, outside, cgroupns, args); err != nil {
				fmt.Fprintln(os.Stderr, "cnperf cluster exec:", err)
				os.Exit(126)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&cg, "cgroup", "", "cgroup under every v1 hierarchy")
	cmd.Flags().StringArrayVar(&tmpfs, "tmpfs", nil, "mount a tmpfs here (own mount namespace only)")
	cmd.Flags().StringArrayVar(&binds, "bind", nil, "bind SRC on DST (own mount namespace only)")
	cmd.Flags().StringVar(&bpffs, "bpffs", "", "mount a bpffs here (own mount namespace only)")
	cmd.Flags().BoolVar(&cgroupns, "cgroupns", false, "join the cgroup in the unified hierarchy too, in a cgroup namespace rooted there")
	cmd.Flags().StringVar(&outside, "outside", "", "the mount namespace (mnt:[N]) mounts must not be made in")
	return cmd
}
