// Package kube is the kubernetes driver: it builds a lab on a cluster the
// user has (or the test cluster `cnperf cluster` runs), as pods in a
// namespace of its own. Each of the lab's hosts is a node; each endpoint,
// and each host that carries none (ping-pong's siege), is a pod holding
// cnperf's workload image; servers and clients run in the pods by exec,
// so that the runner interleaves cells across modes as on the other
// drivers. Modes (k8s-host, k8s-pod, k8s-service, k8s-nodeport) say how
// the pods are networked and how peers dial them. Everything is in the
// lab's namespace, labelled as cnperf's with its owner, and goes with it.
package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// Name is the driver's name.
const Name = "kubernetes"

// Labels every object cnperf makes carries.
const (
	LabelManaged   = "app.kubernetes.io/managed-by"
	LabelLab       = "cnperf.io/lab"
	LabelMode      = "cnperf.io/mode"
	LabelOwner     = "cnperf.io/owner"      // PID.START of the run, on OwnerHost
	LabelOwnerHost = "cnperf.io/owner-host" // the machine the run is on
	LabelPod       = "cnperf.io/pod"        // a pod's own name, for its Service
	managedBy      = "cnperf"
)

// Mode is a mode the kubernetes driver can build.
type Mode interface {
	lab.Mode
	// BuildKube makes the lab's pods (b.Pods) and whatever peers dial them
	// through (b.Service), and returns one endpoint per b.Endpoints.
	BuildKube(b *Build) ([]lab.Endpoint, error)
}

// Namespace is a lab's namespace on the cluster.
func Namespace(labName string) string {
	return "cnperf-" + strings.ReplaceAll(labName, "_", "-")
}

// target is what Down and Labs need to find a lab again: stored on this
// machine when the lab is built, as the cluster may be anyone's.
type target struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	Namespace  string `json:"namespace"`
	Mode       string `json:"mode"`
	Owner      string `json:"owner"`
}

func targetFile(labName string) string {
	return filepath.Join(lab.DriverStatePath(labName, Name), "target.json")
}

func readTarget(labName string) (target, bool, error) {
	var t target
	b, err := os.ReadFile(targetFile(labName))
	if errors.Is(err, os.ErrNotExist) {
		return t, false, nil
	}
	if err != nil {
		return t, false, err
	}
	if err := json.Unmarshal(b, &t); err != nil {
		return t, false, fmt.Errorf("lab %s: %s: %w", labName, targetFile(labName), err)
	}
	return t, true, nil
}

func writeTarget(labName string, t target) error {
	dir, err := lab.DriverState(labName, Name)
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(t, "", "  ")
	return os.WriteFile(filepath.Join(dir, "target.json"), b, 0o600)
}

// Driver is the kubernetes driver.
type Driver struct{ lab.BaseDriver }

func (Driver) Name() string { return Name }

// Builds reports whether the mode is one of a cluster's datapaths.
func (Driver) Builds(m lab.Mode) bool { _, ok := m.(Mode); return ok }

// testClusterKubeconfig is the kubeconfig `cnperf cluster up NAME` writes
// (testcluster.KubeconfigPath; the driver does not link the testcluster package).
func testClusterKubeconfig(name string) string {
	return filepath.Join(lab.StatePath(name, "cluster"), "kubeconfig")
}

// targetOf is the spec's kubernetes: section as the driver takes it: a
// test cluster's kubeconfig is the one `cnperf cluster up` wrote.
func targetOf(s spec.Spec) (Target, error) {
	t, err := section(s)
	if t == nil || err != nil {
		return Target{}, err
	}
	for i, c := range t.Clusters {
		if c.TestCluster != "" {
			t.Clusters[i].Kubeconfig = testClusterKubeconfig(c.TestCluster)
		}
	}
	return *t, nil
}

// On is the target of one lab: the cluster its conditions select (the
// only one listed when they select none), or t itself when the spec lists
// no clusters.
func (t Target) On(cluster string) (Target, error) {
	if len(t.Clusters) == 0 {
		if cluster != "" {
			return t, fmt.Errorf("lab: cluster %s: the spec lists no kubernetes.clusters", cluster)
		}
		return t, nil
	}
	if cluster == "" && len(t.Clusters) == 1 {
		cluster = t.Clusters[0].Name
	}
	for _, c := range t.Clusters {
		if c.Name == cluster {
			out := t
			out.Kubeconfig, out.Context, out.Clusters = c.Kubeconfig, c.Context, []TargetCluster{c}
			return out, nil
		}
	}
	return t, fmt.Errorf("lab: cluster %q is not in kubernetes.clusters", cluster)
}

// clusterName is the name of the one cluster a target from On is on ("":
// the spec lists none).
func (t Target) clusterName() string {
	if len(t.Clusters) == 1 {
		return t.Clusters[0].Name
	}
	return ""
}

// options is the Target of cfg's lab: the cluster its conditions select
// (none given: the zero one). Validate has refused a cluster not listed.
func options(cfg lab.Config) Target {
	t, _ := cfg.Options.(Target)
	on, _ := t.On(cfg.Conditions.Cluster)
	return on
}

// Flags override the spec's kubernetes: section, where they write what
// they say so that the run stores it. A section that does not decode is
// left as it is, for CheckSpec to refuse.
func (Driver) Flags() []lab.Flag {
	flag := func(name, help string, set func(t *Target, v string)) lab.Flag {
		return lab.Flag{Name: name, Help: "kubernetes driver: " + help, Spec: func(s *spec.Spec, v string) {
			t, err := section(*s)
			if err != nil {
				return
			}
			if t == nil {
				t = &Target{}
			}
			set(t, v)
			s.Kubernetes = spec.NewSection(t)
		}}
	}
	nodes := flag("nodes", "comma-separated nodes to use (default: the Ready, schedulable, untainted ones)", func(t *Target, v string) {
		t.Nodes = strings.FieldsFunc(v, func(r rune) bool { return r == ',' })
	})
	nodes.List = true
	return []lab.Flag{
		flag("kubeconfig", "the kubeconfig file (default $KUBECONFIG or ~/.kube/config; in a pod, in-cluster)", func(t *Target, v string) { t.Kubeconfig = v }),
		flag("context", "the kubeconfig context (default its current one)", func(t *Target, v string) { t.Context = v }),
		flag("image", "the workload image, holding cnperf at /cnperf (cnperf image save writes one)", func(t *Target, v string) { t.Image = v }),
		flag("image-pull-policy", "Always, IfNotPresent (default) or Never", func(t *Target, v string) { t.PullPolicy = v }),
		nodes,
	}
}

// Options decodes the spec's kubernetes: block, which --kubeconfig,
// --context, --image, --image-pull-policy and --nodes have written into
// (the spec checked its values). A run in which a lab asks for Services
// measures the programming latency on every lab, N = 0 included.
func (Driver) Options(in lab.OptionsInput) (any, error) {
	t, err := targetOf(in.Spec)
	for _, l := range in.Spec.Labs() {
		t.services = t.services || (l.Driver == Name && l.Conditions.Services > 0)
	}
	return t, err
}

// Preflight asks the cluster, before anything is made, whether it answers,
// whether the user may make what a lab needs, and whether it has the
// nodes the spec's placements want.
//
// With several clusters it asks every one the labs are on, and refuses two
// that are one cluster, before anything is made on any of them.
func (Driver) Preflight(in lab.PreflightInput) error {
	t, _ := in.Options.(Target)
	placements := map[string][]string{} // by cluster name ("" none listed)
	policies := map[string]string{}     // the field asking a policy, by cluster
	families := map[string]string{}     // the field asking IPv6, by cluster
	for _, l := range in.Spec.Labs() {
		if l.Driver != Name {
			continue
		}
		p := l.Conditions.NodePlacement
		if p == "" {
			p = conditions.CrossNode
		}
		on, _ := t.On(l.Conditions.Cluster) // Validate refused a cluster not listed
		c := on.clusterName()
		if !slices.Contains(placements[c], p) {
			placements[c] = append(placements[c], p)
		}
		if err := policyFamily(l.Conditions); err != nil {
			return err
		}
		if l.Conditions.DialsIPv6() && families[c] == "" {
			families[c] = "ip_family " + l.Conditions.Family()
		}
		if on, _ := l.Conditions.Policy(); on && policies[c] == "" {
			policies[c] = "network_policy " + conditions.PolicyAllow
			if l.Conditions.NetworkPolicy == "" {
				policies[c] = fmt.Sprintf("policy_rules %d", l.Conditions.PolicyRules)
			}
		}
	}
	if len(in.Spec.Disrupt) > 0 {
		if err := checkDisrupt(context.Background(), t, in.Spec.Disrupt, slices.Sorted(maps.Keys(placements))); err != nil {
			return err
		}
	}
	if len(t.Clusters) == 0 {
		if err := Preflight(t, placements[""]); err != nil {
			return err
		}
	} else if err := PreflightClusters(t, placements); err != nil {
		return err
	}
	names := []string{""}
	for _, n := range t.Clusters {
		names = append(names, n.Name)
	}
	// Each cluster a lab dials IPv6 on must give its pods IPv6 addresses.
	for _, name := range names {
		field, ok := families[name]
		if !ok {
			continue
		}
		on, err := t.On(name)
		if err != nil {
			return err
		}
		c, err := Connect(on)
		if err != nil {
			return err
		}
		cluster := name
		if cluster == "" {
			cluster = "at " + c.Server
		}
		if err := checkIPv6(context.Background(), c, field, cluster); err != nil {
			return err
		}
	}
	// Each cluster a policy is asked on is probed for enforcement, in
	// the order the spec lists them, before any lab is made on any.
	for _, name := range names {
		field, ok := policies[name]
		if !ok {
			continue
		}
		on, err := t.On(name)
		if err != nil {
			return err
		}
		if name != "" {
			field = fmt.Sprintf("%s on kubernetes.clusters %s", field, name)
		}
		if err := checkEnforced(on, placements[name][0], field); err != nil {
			return err
		}
	}
	return nil
}

// checkEnforced probes, before any lab is built, whether the cluster
// enforces NetworkPolicies: a spec that asks for a policy on a cluster
// that would not apply it is refused (bad input, exit 2), as its
// policy-cost curve would measure nothing.
func checkEnforced(t Target, placement, field string) error {
	if t.Image == "" {
		return fmt.Errorf("%s: probing whether the cluster enforces NetworkPolicies needs the workload image: give --image (`cnperf image save` writes one)", field)
	}
	c, err := Connect(t)
	if err != nil {
		return err
	}
	pr, err := PolicyCheck(context.Background(), c, t, placement)
	if err != nil {
		var f lab.Failure
		if errors.As(err, &f) {
			return err
		}
		return lab.Failure{Err: err}
	}
	if !pr.Enforced {
		cni := ""
		if name := cniName(context.Background(), c); name != "" {
			cni = " (CNI " + name + ")"
		}
		return fmt.Errorf("%s: not enforced: the pod network of the cluster at %s%s does not enforce NetworkPolicies (%s)", field, c.Server, cni, pr.Note)
	}
	return nil
}

// policyFamily refuses a network policy on a lab that dials IPv6: the
// policy's rules allow the nodes and hold decoys by IPv4 block only.
func policyFamily(c conditions.Set) error {
	if on, _ := c.Policy(); on && c.DialsIPv6() {
		return fmt.Errorf("lab: ip_family %s with a network policy: the kubernetes driver's policies are IPv4 only; measure policies with ip_family ipv4", c.Family())
	}
	return nil
}

// Capabilities: the network_policy condition is a cluster's
// NetworkPolicies; a cluster's labs share its nodes, whose stacks the
// hostNetwork pods of every lab of the run use at once; the lab's hosts
// are the cluster's nodes, which node_placement picks; the labs' names
// carry "k8s"; it stops and starts a test cluster's daemons (disrupt).
func (Driver) Capabilities(any) lab.Capabilities {
	return lab.Capabilities{Tag: "k8s", AppliesPolicies: true, SharesStack: true, PlacesOnNodes: true, Disrupts: true}
}

// Validate refuses, before the cluster is touched, a mode the driver cannot
// build, conditions it cannot apply (the nodes are the user's), a chain, no
// image, and a lab of that name that this machine already has.
func (d Driver) Validate(cfg lab.Config) error {
	if !d.Builds(cfg.Mode) {
		return fmt.Errorf("lab: mode %s cannot be built on the %s driver", cfg.Mode.Name(), Name)
	}
	all, _ := cfg.Options.(Target)
	if _, err := all.On(cfg.Conditions.Cluster); err != nil {
		return err
	}
	c := cfg.Conditions
	c.NodePlacement, c.Cluster, c.NetworkPolicy, c.PolicyRules, c.IPFamily, c.Services = "", "", "", 0, "", 0
	if !c.Empty() {
		return fmt.Errorf("lab: conditions %s change the hosts; on the %s driver the nodes are the cluster's: only node_placement, cluster, network_policy, services and ip_family apply", c.Label(), Name)
	}
	if err := policyFamily(cfg.Conditions); err != nil {
		return err
	}
	if cfg.Topology.Chain {
		return fmt.Errorf("lab: a chain of hosts is built by the netns driver, not on a cluster")
	}
	if options(cfg).Image == "" {
		return errors.New("lab: the kubernetes driver needs a workload image holding cnperf at /cnperf: give --image (`cnperf image save` writes one)")
	}
	switch options(cfg).PullPolicy {
	case "", string(corev1.PullAlways), string(corev1.PullIfNotPresent), string(corev1.PullNever):
	default:
		return fmt.Errorf("lab: image pull policy %q: use Always, IfNotPresent or Never", options(cfg).PullPolicy)
	}
	if _, ok, err := readTarget(cfg.Name); err != nil || ok {
		return fmt.Errorf("lab %s exists on a cluster; remove it with: cnperf lab down %s", cfg.Name, cfg.Name)
	}
	return nil
}

// Up connects, checks permissions, picks the nodes, makes the namespace
// and has the mode build the pods; then it describes the nodes.
func (Driver) Up(l *lab.Lab, cfg lab.Config) error {
	ctx := context.Background()
	c, err := Connect(options(cfg))
	if err != nil {
		return err
	}
	ns := Namespace(cfg.Name)
	if err := c.CheckAccess(ctx, ns); err != nil {
		return err
	}
	placement := cfg.Conditions.NodePlacement
	if placement == "" {
		placement = conditions.CrossNode
	}
	nodes, err := pickNodes(ctx, c, options(cfg).Nodes, placement, cfg.Topology)
	if err != nil {
		return err
	}
	// What finds the lab again is written before anything is made on the
	// cluster: a run killed now leaves nothing `cnperf clean` cannot find.
	if err := writeTarget(cfg.Name, target{Kubeconfig: options(cfg).Kubeconfig, Context: options(cfg).Context,
		Namespace: ns, Mode: cfg.Mode.Name(), Owner: cfg.Owner.String()}); err != nil {
		return err
	}
	if err := createNamespace(ctx, c, ns, cfg); err != nil {
		return err
	}
	policy := corev1.PullPolicy(options(cfg).PullPolicy)
	if policy == "" {
		policy = corev1.PullIfNotPresent
	}
	b := &Build{Build: nil, ctx: ctx, c: c, ns: ns, image: options(cfg).Image, policy: policy, nodes: nodes,
		labels: labelsOf(cfg)}
	l.Kube = &record.Kube{Server: c.Server, Context: c.Context, Namespace: ns, Placement: placement,
		Image: options(cfg).Image, PullPolicy: string(policy), Cluster: options(cfg).clusterName()}
	for i, h := range cfg.Topology.Hosts {
		l.Hosts = append(l.Hosts, lab.Host{Name: h.Name, Index: i + 1})
	}
	b.Build = l.NewBuild()
	eps, err := cfg.Mode.(Mode).BuildKube(b)
	if err != nil {
		return fmt.Errorf("build mode %s: %w", l.Mode, err)
	}
	l.Endpoints = eps
	for i := range l.Hosts {
		h := &l.Hosts[i]
		p := b.hostPods[h.Name]
		if p == nil {
			continue
		}
		h.Kube, h.Addr = p, p.HostIP
	}
	describeCluster(ctx, c, l.Kube, b.usedNodes())
	rt := &Runtime{c: c, ns: ns, pods: b.allPods(), nodes: b.usedNodes(), build: b}
	l.Kube.PodMTU = podMTU(rt, b.allPods())
	l.Runtime = rt
	if c := cfg.Conditions; c.Services > 0 || options(cfg).services {
		port := closedPort(labPorts(l, cfg), cfg.Port+1)
		if port == 0 {
			return errors.New("kubernetes: services: the lab's ports leave no TCP port for the Services' listener")
		}
		rt.svc = &servicesPlan{n: c.Services, probe: options(cfg).services, port: port, labels: b.labels}
	}
	if err := rt.setDisrupt(ctx, cfg.Disrupt, options(cfg).clusterName(), eps); err != nil {
		return err
	}
	if cfg.Conditions.Probes() {
		if err := applyPolicy(ctx, l, cfg, rt, b.labels); err != nil {
			return err
		}
	}
	return nil
}

// Down deletes the lab's namespace, with everything in it, and waits until
// it is gone; a lab this machine has no record of is not an error.
func (Driver) Down(name string) error {
	t, ok, err := readTarget(name)
	if err != nil || !ok {
		return err
	}
	c, err := Connect(Target{Kubeconfig: t.Kubeconfig, Context: t.Context})
	if err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	if err := deleteServices(context.Background(), c, t.Namespace); err != nil {
		return fmt.Errorf("lab %s: %w", name, err)
	}
	return deleteNamespace(context.Background(), c, t.Namespace, name)
}

// Labs lists the labs this machine built on clusters, from what Up
// recorded; it does not ask the clusters.
func (Driver) Labs() ([]lab.Info, error) {
	var out []lab.Info
	var errs []error
	for _, name := range lab.DriverStateLabs(Name) {
		t, ok, err := readTarget(name)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if !ok {
			continue
		}
		id, _ := owner.Parse(t.Owner)
		out = append(out, lab.Info{Name: name, Mode: t.Mode, Owner: id, OwnerText: t.Owner,
			Namespaces: []string{"kubernetes:" + t.Namespace}})
	}
	return out, errors.Join(errs...)
}

func labelsOf(cfg lab.Config) map[string]string {
	host, _ := os.Hostname()
	return map[string]string{LabelManaged: managedBy, LabelLab: cfg.Name, LabelMode: cfg.Mode.Name(),
		LabelOwner: strings.ReplaceAll(cfg.Owner.String(), " ", "_"), LabelOwnerHost: labelValue(host)}
}

// labelValue fits a string to a label value's rules (63 characters of
// letters, digits, '-', '_' and '.', alphanumeric at both ends).
func labelValue(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r < 128 && (r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			b.WriteRune(r)
		}
	}
	out := strings.Trim(b.String(), "-_.")
	if len(out) > 63 {
		out = strings.Trim(out[:63], "-_.")
	}
	return out
}

func createNamespace(ctx context.Context, c *Conn, ns string, cfg lab.Config) error {
	err := c.create(ctx, c.core, "", "namespaces", &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns, Labels: labelsOf(cfg)}},
		&corev1.Namespace{})
	if apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("kubernetes: namespace %s exists: another cnperf's lab of that name, or left by one; remove it with kubectl delete namespace %s if it is yours", ns, ns)
	}
	if err != nil {
		return fmt.Errorf("kubernetes: create namespace %s: %w", ns, err)
	}
	return nil
}

// deleteNamespace deletes a lab's namespace, only if it is that lab's
// (labelled so), and waits up to two minutes for it to go.
func deleteNamespace(ctx context.Context, c *Conn, ns, labName string) error {
	got := &corev1.Namespace{}
	err := c.get(ctx, c.core, "", "namespaces", ns, got)
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kubernetes: find namespace %s: %w", ns, err)
	}
	if got.Labels[LabelManaged] != managedBy || got.Labels[LabelLab] != labName {
		return fmt.Errorf("kubernetes: namespace %s is not lab %s's (labels %v): left alone", ns, labName, got.Labels)
	}
	grace := int64(0)
	err = c.remove(ctx, c.core, "", "namespaces", ns, &metav1.DeleteOptions{GracePeriodSeconds: &grace,
		Preconditions: &metav1.Preconditions{UID: &got.UID}})
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("kubernetes: delete namespace %s: %w", ns, err)
	}
	deadline := time.Now().Add(2 * time.Minute)
	for time.Now().Before(deadline) {
		if err := c.get(ctx, c.core, "", "namespaces", ns, &corev1.Namespace{}); apierrors.IsNotFound(err) {
			return nil
		}
		time.Sleep(500 * time.Millisecond)
	}
	return fmt.Errorf("kubernetes: namespace %s still terminating after 2 minutes", ns)
}

// cniName is the cluster's pod network as describeCluster finds it, over
// all its nodes ("" when nothing says).
func cniName(ctx context.Context, c *Conn) string {
	if name, _ := findCNI(ctx, c); name != "" {
		return name
	}
	list := &corev1.NodeList{}
	if err := c.list(ctx, c.core, "", "nodes", list); err != nil {
		return ""
	}
	name, _ := cniFromNodes(list.Items)
	return name
}
