package clustercli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/kube"
	"github.com/cnperf/cnperf/internal/testcluster"
)

// podsCmd is the pod-setup experiment on test clusters: their pod network's
// setup (CNI ADD) and teardown (CNI DEL) per pod, in bursts.
func podsCmd(stdout, stderr io.Writer) *cobra.Command {
	var bursts []int
	var reps int
	var out, node string
	cmd := &cobra.Command{
		Use:     "pods NAME [NAME...] [--bursts 1,10,50] [--repetitions N] [--node NODE] [-o FILE]",
		Short:   "Time pods' network setup and teardown (CNI ADD, DEL) in bursts, clusters interleaved",
		Example: `  cnperf cluster pods cmp_bridge cmp_flannel cmp_cilium --bursts 1,10,50 --repetitions 5 -o pods.json`,
		Args:    cobra.RangeArgs(1, kube.MaxSetupClusters),
		RunE: func(_ *cobra.Command, args []string) error {
			if err := kube.CheckPodSetup(make([]int, len(args)), bursts, reps); err != nil {
				return err
			}
			for i, name := range args {
				if slices.Contains(args[:i], name) {
					return fmt.Errorf("cluster %s: given twice", name)
				}
			}
			var clusters []kube.SetupCluster
			for _, name := range args {
				kc, err := testcluster.Kubeconfig(name, false)
				if err != nil {
					return err
				}
				clusters = append(clusters, kube.SetupCluster{Name: name, Kubeconfig: kc, ProbeNS: lab.NS(name, "cp"), Node: node})
			}
			pause, err := os.ReadFile(filepath.Join(testcluster.DefaultOptions().Images(), "pause.ref"))
			if err != nil {
				return fmt.Errorf("the pause image's name: %w (run scripts/k8s-build.sh)", err)
			}
			for i := range clusters {
				clusters[i].Image = strings.TrimSpace(string(pause))
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			m, err := kube.RunPodSetup(ctx, clusters, bursts, reps, stderr)
			kube.WriteSetupTable(stdout, m)
			if out != "" {
				if werr := kube.WriteSetupJSON(out, m); werr != nil && err == nil {
					err = werr
				}
			}
			if err != nil {
				return lab.Failure{Err: err}
			}
			return nil
		},
	}
	cmd.Flags().IntSliceVar(&bursts, "bursts", []int{1, 10, 50}, fmt.Sprintf("pods made at once on the node (each 1 to %d, at most %d sizes)", kube.MaxBurst, kube.MaxBursts))
	cmd.Flags().IntVar(&reps, "repetitions", 3, fmt.Sprintf("times every burst runs on every cluster (1 to %d)", kube.MaxSetupReps))
	cmd.Flags().StringVar(&node, "node", "node1", "the node every burst goes to")
	cmd.Flags().StringVarP(&out, "output", "o", "", "write the cluster descriptions and every pod's times as JSON here")
	return cmd
}
