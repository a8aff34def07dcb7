package run

import (
	"cmp"
	"slices"

	"github.com/cnperf/cnperf/internal/spec"
)

// staged reorders the interleaved cells so that the labs of one cluster
// run in ascending order of their services condition, one stage after
// the other, while the clusters interleave within each stage. A
// cluster's Services are every lab's on it: kube-proxy programs them
// all, so a lab measured with N Services must not share its stretch of
// the run with one that added more. Each lab's Services are made before
// its first cell (lab.Runtime.Prepare) and stay until the run ends, so
// the cluster only grows: stage k's labs top it up to their N. A run
// without the condition keeps its order.
func staged(cells []cellPlan, labs []spec.Lab) []cellPlan {
	byCluster := map[string][]int{}
	for _, l := range labs {
		c := l.Conditions.Cluster
		if !slices.Contains(byCluster[c], l.Conditions.Services) {
			byCluster[c] = append(byCluster[c], l.Conditions.Services)
		}
	}
	stage := map[string]int{}
	for _, l := range labs {
		ns := byCluster[l.Conditions.Cluster]
		slices.Sort(ns)
		stage[l.Key] = slices.Index(ns, l.Conditions.Services)
	}
	out := slices.Clone(cells)
	slices.SortStableFunc(out, func(a, b cellPlan) int { return cmp.Compare(stage[a.mode], stage[b.mode]) })
	return out
}
