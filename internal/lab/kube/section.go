package kube

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Target is a spec's kubernetes: section, the driver's options: which
// cluster it builds on, with which image. Flags (--kubeconfig, --context, --image,
// --image-pull-policy, --nodes) override it.
type Target struct {
	// Kubeconfig and Context pick the cluster (empty: $KUBECONFIG or
	// ~/.kube/config and its current context; in a pod, in-cluster).
	Kubeconfig string `yaml:"kubeconfig,omitempty" json:"kubeconfig,omitempty"`
	Context    string `yaml:"context,omitempty" json:"context,omitempty"`
	// Image holds cnperf at /cnperf (`cnperf image save` writes one);
	// PullPolicy is Always, IfNotPresent (the default) or Never.
	Image      string `yaml:"image,omitempty" json:"image,omitempty"`
	PullPolicy string `yaml:"image_pull_policy,omitempty" json:"image_pull_policy,omitempty"`
	// Nodes are the nodes to use, in order (empty: the Ready, schedulable,
	// untainted ones).
	Nodes []string `yaml:"nodes,omitempty" json:"nodes,omitempty"`
	// PolicyProbeSeconds bounds the wait for a policy to take effect
	// before the probe says the cluster does not enforce it (0: 30).
	PolicyProbeSeconds int `yaml:"policy_probe_seconds,omitempty" json:"policy_probe_seconds,omitempty"`
	// Clusters, when given, are several clusters measured in one run, in
	// place of Kubeconfig and Context: conditions' cluster (or a variant's)
	// picks each lab's, so that each mode on each cluster is a series and
	// their cells interleave.
	Clusters []TargetCluster `yaml:"clusters,omitempty" json:"clusters,omitempty"`
	// services: a lab of the run asks for Services (Options).
	services bool
}

// TargetCluster is one cluster of kubernetes.clusters: a kubeconfig and
// context, or a test cluster on this machine (`cnperf cluster up NAME`).
type TargetCluster struct {
	// Name is what conditions' cluster selects it by, and what the series
	// on it are labelled with.
	Name       string `yaml:"name" json:"name"`
	Kubeconfig string `yaml:"kubeconfig,omitempty" json:"kubeconfig,omitempty"`
	Context    string `yaml:"context,omitempty" json:"context,omitempty"`
	// TestCluster names a cnperf test cluster on this machine, whose
	// kubeconfig `cnperf cluster up` wrote; CNI is the --cni it is brought
	// up with, which the message says when it is not up.
	TestCluster string `yaml:"test_cluster,omitempty" json:"test_cluster,omitempty"`
	CNI         string `yaml:"cni,omitempty" json:"cni,omitempty"`
	// KubeProxy is its --kube-proxy (iptables, nftables, none), said too.
	KubeProxy string `yaml:"kube_proxy,omitempty" json:"kube_proxy,omitempty"`
}

// section decodes the spec's kubernetes: section (nil: none).
func section(s spec.Spec) (*Target, error) { return spec.Decode[Target](s.Kubernetes, "kubernetes") }

// maxNodes bounds kubernetes.nodes: a lab has at most 250 hosts.
const maxNodes = 250

// maxPolicyProbe bounds kubernetes.policy_probe_seconds: a probe that
// waits longer holds the run before any cell.
const maxPolicyProbe = 300

// maxClusters bounds kubernetes.clusters: each is a set of labs side
// by side, and spec.MaxLabs bounds those anyway.
const maxClusters = 8

var (
	nodeNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)
	// testClusterRE is `cnperf cluster`'s name form (cluster.CheckName).
	testClusterRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,15}$`)
	cniRE         = regexp.MustCompile(`^[a-z0-9][a-z0-9-]{0,31}$`)
)

// CheckSpec decodes and bounds kubernetes: and refuses what only a
// cluster runs on any other driver. Whether the cluster answers, and lets
// the user do what a lab needs, Preflight says.
func (Driver) CheckSpec(s spec.Spec) error {
	k, err := section(s)
	if err != nil {
		return err
	}
	onKube := slices.Contains(s.RunDrivers(), Name)
	placed := s.Conditions.NodePlacement != ""
	selected := s.Conditions.Cluster != ""
	for _, v := range s.Variants {
		placed = placed || v.NodePlacement != ""
		selected = selected || v.Cluster != ""
	}
	policy := ""
	for _, c := range append([]conditions.Set{s.Conditions}, s.Variants...) {
		if c.AsksPolicy() && policy == "" {
			policy = "network_policy"
			if c.NetworkPolicy == "" {
				policy = "policy_rules"
			}
		}
	}
	var others []string
	for _, d := range s.RunDrivers() {
		if d != Name {
			others = append(others, d)
		}
	}
	switch {
	case selected && !onKube:
		return errors.New("cluster: selects one of kubernetes.clusters; use driver: kubernetes")
	case selected && (k == nil || len(k.Clusters) == 0):
		field, name := "conditions.cluster", s.Conditions.Cluster
		for i, v := range s.Variants {
			if name == "" && v.Cluster != "" {
				field, name = fmt.Sprintf("variants[%d].cluster", i), v.Cluster
			}
		}
		return fmt.Errorf("%s %q: the spec lists no kubernetes.clusters", field, name)
	case policy != "" && len(others) > 0:
		return fmt.Errorf("%s: NetworkPolicies apply on Kubernetes only; the %s driver has none (use driver: kubernetes)", policy, strings.Join(others, ", "))
	case placed && !onKube:
		return errors.New("node_placement: places pods on Kubernetes nodes; use driver: kubernetes")
	case k == nil:
		return nil
	case !onKube:
		return errors.New("kubernetes: only the kubernetes driver uses it (driver: kubernetes)")
	case s.Chain != nil:
		return errors.New("kubernetes: chain: only the netns driver builds chains")
	}
	if k.Image != "" && !spec.ImageRE.MatchString(k.Image) {
		return fmt.Errorf("kubernetes.image %q: not an image reference", k.Image)
	}
	switch k.PullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return fmt.Errorf("kubernetes.image_pull_policy %q: want Always, IfNotPresent or Never", k.PullPolicy)
	}
	if len(k.Nodes) > maxNodes {
		return fmt.Errorf("kubernetes.nodes: %d, more than %d", len(k.Nodes), maxNodes)
	}
	for i, n := range k.Nodes {
		if !nodeNameRE.MatchString(n) {
			return fmt.Errorf("kubernetes.nodes[%d] %q: not a node name", i, n)
		}
		if slices.Contains(k.Nodes[:i], n) {
			return fmt.Errorf("kubernetes.nodes[%d] %q: named twice", i, n)
		}
	}
	if strings.ContainsRune(k.Kubeconfig, 0) {
		return errors.New("kubernetes.kubeconfig: not a path")
	}
	if k.PolicyProbeSeconds < 0 || k.PolicyProbeSeconds > maxPolicyProbe {
		return fmt.Errorf("kubernetes.policy_probe_seconds %d: want 1..%d", k.PolicyProbeSeconds, maxPolicyProbe)
	}
	return checkClusters(s, k)
}

// checkClusters bounds kubernetes.clusters and the cluster each lab
// selects. Whether the clusters answer, and are different clusters, is the
// driver's to say before anything is made.
func checkClusters(s spec.Spec, k *Target) error {
	if len(k.Clusters) == 0 {
		return nil
	}
	switch {
	case k.Kubeconfig != "" || k.Context != "":
		return errors.New("kubernetes.kubeconfig, context (or --kubeconfig, --context) and kubernetes.clusters: name the clusters in clusters only, each with its kubeconfig and context")
	case len(k.Clusters) > maxClusters:
		return fmt.Errorf("kubernetes.clusters: %d, more than %d", len(k.Clusters), maxClusters)
	case len(s.RunDrivers()) > 1:
		return errors.New("kubernetes.clusters: every lab is on one of the clusters; use driver: kubernetes alone, not drivers")
	}
	var names []string
	testClusters := map[string]string{} // where each test cluster was named first
	for i, c := range k.Clusters {
		at := fmt.Sprintf("kubernetes.clusters[%d]", i)
		if c.Name != "" {
			at += " (" + c.Name + ")"
		}
		first, twice := testClusters[c.TestCluster]
		switch {
		case c.Name == "":
			return fmt.Errorf("%s: name: must not be empty (conditions' cluster selects it by name)", at)
		case !conditions.ClusterNameRE.MatchString(c.Name):
			return fmt.Errorf("%s: name: use 1-32 of a-z, 0-9 and -, a letter or digit at both ends", at)
		case slices.Contains(names, c.Name):
			return fmt.Errorf("%s: name: named twice", at)
		case c.TestCluster != "" && (c.Kubeconfig != "" || c.Context != ""):
			return fmt.Errorf("%s: test_cluster and kubeconfig or context: a test cluster's kubeconfig is its own; give one or the other", at)
		case c.TestCluster == "" && c.Kubeconfig == "" && c.Context == "":
			return fmt.Errorf("%s: give kubeconfig and context, or test_cluster", at)
		case c.TestCluster != "" && !testClusterRE.MatchString(c.TestCluster):
			return fmt.Errorf("%s: test_cluster %q: not a test cluster's name (a lower-case letter, then up to 15 of a-z, 0-9 and _)", at, c.TestCluster)
		case c.TestCluster != "" && twice:
			// One cluster under two names: the driver would refuse it once
			// the cluster is up, and asked for it to be brought up twice before.
			return fmt.Errorf("%s: test_cluster %s: also %s's; list each cluster once (variants select it by one name)", at, c.TestCluster, first)
		case c.CNI != "" && c.TestCluster == "":
			return fmt.Errorf("%s: cni: says how a test cluster is brought up; only with test_cluster", at)
		case c.KubeProxy != "" && (c.TestCluster == "" || !slices.Contains([]string{"iptables", "nftables", "none"}, c.KubeProxy)):
			return fmt.Errorf("%s: kube_proxy %q: with test_cluster, iptables, nftables or none as cnperf cluster up --kube-proxy takes it", at, c.KubeProxy)
		case c.CNI != "" && !cniRE.MatchString(c.CNI):
			return fmt.Errorf("%s: cni %q: not a CNI's name as cnperf cluster up --cni takes it", at, c.CNI)
		case strings.ContainsRune(c.Kubeconfig, 0):
			return fmt.Errorf("%s: kubeconfig: not a path", at)
		case strings.ContainsAny(c.Context, "\x00\n"):
			return fmt.Errorf("%s: context: not a context's name", at)
		}
		names = append(names, c.Name)
		if c.TestCluster != "" {
			testClusters[c.TestCluster] = at
		}
	}
	if c := s.Conditions.Cluster; c != "" && !slices.Contains(names, c) {
		return fmt.Errorf("conditions.cluster %q: not in kubernetes.clusters (%s)", c, strings.Join(names, ", "))
	}
	for i, v := range s.Variants {
		if v.Cluster != "" && !slices.Contains(names, v.Cluster) {
			return fmt.Errorf("variants[%d].cluster %q: not in kubernetes.clusters (%s)", i, v.Cluster, strings.Join(names, ", "))
		}
	}
	// Every lab is on a named cluster: one listed alone is every lab's,
	// and of several each must be chosen, since a lab put silently on the
	// first would be a series whose cluster its key does not say.
	used := map[string]bool{}
	for _, l := range s.Labs() {
		c := l.Conditions.Cluster
		if c == "" && len(names) == 1 {
			c = names[0]
		}
		if c == "" {
			return fmt.Errorf("kubernetes.clusters: %d clusters, and lab %s selects none: give each variant (or conditions) a cluster: %s", len(names), l.Key, strings.Join(names, ", "))
		}
		used[c] = true
	}
	for i, c := range k.Clusters {
		if !used[c.Name] {
			return fmt.Errorf("kubernetes.clusters[%d] (%s): no lab is on it: select it in a variant (cluster: %s) or remove it", i, c.Name, c.Name)
		}
	}
	return nil
}
