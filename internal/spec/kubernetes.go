package spec

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Kubernetes says which cluster the kubernetes driver runs on and with
// which image. Flags (--kubeconfig, --context, --image,
// --image-pull-policy, --nodes) override it.
type Kubernetes struct {
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
}

// MaxKubeNodes bounds kubernetes.nodes: a lab has at most 250 hosts.
const MaxKubeNodes = 250

var (
	nodeNameRE = regexp.MustCompile(`^[a-z0-9]([a-z0-9.-]{0,251}[a-z0-9])?$`)
	imageRE    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,499}$`)
)

// checkKubernetes bounds kubernetes: and the specs only a cluster runs.
// Whether the cluster answers, and lets the user do what a lab needs, is
// the driver's to say.
func (s Spec) checkKubernetes() error {
	onKube := slices.Contains(s.RunDrivers(), "kubernetes")
	placed := s.Conditions.NodePlacement != ""
	for _, v := range s.Variants {
		placed = placed || v.NodePlacement != ""
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
		if d != "kubernetes" {
			others = append(others, d)
		}
	}
	switch {
	case policy != "" && len(others) > 0:
		return fmt.Errorf("%s: NetworkPolicies apply on Kubernetes only; the %s driver has none (use driver: kubernetes)", policy, strings.Join(others, ", "))
	case placed && !onKube:
		return errors.New("node_placement: places pods on Kubernetes nodes; use driver: kubernetes")
	case s.Kubernetes == nil:
		return nil
	case !onKube:
		return errors.New("kubernetes: only the kubernetes driver uses it (driver: kubernetes)")
	case s.Chain != nil:
		return errors.New("kubernetes: chain: only the netns driver builds chains")
	}
	k := s.Kubernetes
	if k.Image != "" && !imageRE.MatchString(k.Image) {
		return fmt.Errorf("kubernetes.image %q: not an image reference", k.Image)
	}
	switch k.PullPolicy {
	case "", "Always", "IfNotPresent", "Never":
	default:
		return fmt.Errorf("kubernetes.image_pull_policy %q: want Always, IfNotPresent or Never", k.PullPolicy)
	}
	if len(k.Nodes) > MaxKubeNodes {
		return fmt.Errorf("kubernetes.nodes: %d, more than %d", len(k.Nodes), MaxKubeNodes)
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
	return nil
}
