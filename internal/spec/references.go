package spec

import (
	"strings"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// severalClusters says whether the spec's labs are on several clusters
// of kubernetes.clusters, read from the clusters they select alone: of
// several listed, every lab selects one and every one is selected
// (the kubernetes driver's CheckSpec), while of one, a lab may select it or not. So readers of
// a stored run know it without decoding the kubernetes driver's section.
func (s Spec) severalClusters() bool {
	first := ""
	for _, l := range s.Labs() {
		switch c := l.Conditions.Cluster; {
		case first == "":
			first = c
		case c != "" && c != first:
			return true
		}
	}
	return false
}

// VariantReferences maps each lab's key to its own reference's key when
// each variant's series are compared within it (nil otherwise, and when
// the reference is given as a series): the reference mode on the same
// driver under the first variant that shares the lab's conditions named in
// reference_per (k8s-pod/cross-node against k8s-host/cross-node with
// reference_per: [node_placement]), and on a spec of several clusters
// under the lab's own conditions (k8s-pod/flannel against
// k8s-host/flannel): each cluster's own k8s-host is its pods' reference.
func (s Spec) VariantReferences() map[string]string {
	if len(s.Variants) < 2 || s.Reference == "" || strings.Contains(s.Reference, "/") || s.ReferenceScope() == "" {
		return nil
	}
	several := s.severalClusters()
	same := func(a, b conditions.Set) bool {
		return conditions.SameIn(a, b, s.ReferencePer) && (!several || a.Cluster == b.Cluster)
	}
	if len(s.ReferencePer) == 0 {
		same = func(a, b conditions.Set) bool { return a == b }
	}
	labs := s.Labs()
	refs := map[string]string{}
	for _, l := range labs {
		for _, r := range labs {
			if r.Mode == s.Reference && r.Driver == l.Driver && same(r.Conditions, l.Conditions) {
				refs[l.Key] = r.Key
				break
			}
		}
	}
	return refs
}

// ReferenceScope says, in words, what each series shares with its own
// reference ("node placement", "cluster and conditions"), or "" when one
// reference is every series'.
func (s Spec) ReferenceScope() string {
	var words []string
	if s.severalClusters() {
		words = append(words, "cluster")
		if len(s.ReferencePer) == 0 {
			words = append(words, "conditions")
		}
	}
	for _, k := range s.ReferencePer {
		if k != "cluster" || len(words) == 0 {
			words = append(words, strings.ReplaceAll(k, "_", " "))
		}
	}
	return strings.Join(words, " and ")
}
