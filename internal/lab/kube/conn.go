package kube

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	authv1 "k8s.io/api/authorization/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/version"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

// apiTimeout bounds one call to the API server.
const apiTimeout = 30 * time.Second

// Conn is a connection to a cluster: REST clients for the API groups a
// lab uses (core, authorization, and networking for NetworkPolicies), the REST config exec needs, and what it was reached
// by. It is built on client-go's REST layer and the API types only, not
// client-go's clientset, whose every group's registration would make each
// cnperf process (every server and client of every driver) start 80 ms
// slower and 30 MB bigger.
type Conn struct {
	core, authz, netw *rest.RESTClient
	// bulk is core without the client's own rate limit, for the
	// services condition's thousands of Services (serviceWorkers bound
	// how many are asked at once), so that the time they take is the
	// cluster's, not the client's throttle.
	bulk    *rest.RESTClient
	params  runtime.ParameterCodec
	REST    *rest.Config
	Server  string
	Context string
}

// Connect reaches the cluster a target names: its kubeconfig and context,
// or the default loading rules ($KUBECONFIG, ~/.kube/config), or, with
// neither file, the in-cluster config. It asks the server's version, so a
// cluster that does not answer is said here, in one line.
func Connect(t Target) (*Conn, error) {
	cfg, ctxName, err := restConfig(t)
	if err != nil {
		return nil, err
	}
	cfg.Timeout = apiTimeout
	cfg.QPS, cfg.Burst = 50, 100 // a lab's pods and execs, not a controller's load
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, authv1.AddToScheme, networkingv1.AddToScheme} {
		if err := add(scheme); err != nil {
			return nil, fmt.Errorf("kubernetes: API types: %w", err)
		}
	}
	codecs := serializer.NewCodecFactory(scheme)
	c := &Conn{params: runtime.NewParameterCodec(scheme), REST: cfg, Server: cfg.Host, Context: ctxName}
	for _, g := range []struct {
		into *(*rest.RESTClient)
		gv   schema.GroupVersion
		path string
		qps  float32
	}{{&c.core, corev1.SchemeGroupVersion, "/api", 0}, {&c.authz, authv1.SchemeGroupVersion, "/apis", 0},
		{&c.netw, networkingv1.SchemeGroupVersion, "/apis", 0}, {&c.bulk, corev1.SchemeGroupVersion, "/api", -1}} {
		gc := rest.CopyConfig(cfg)
		gc.GroupVersion, gc.APIPath, gc.NegotiatedSerializer = &g.gv, g.path, codecs.WithoutConversion()
		if g.qps != 0 {
			gc.QPS = g.qps // -1: no client-side limit
		}
		if gc.UserAgent == "" {
			gc.UserAgent = "cnperf"
		}
		rc, err := rest.RESTClientFor(gc)
		if err != nil {
			return nil, fmt.Errorf("kubernetes: client for %s: %w", cfg.Host, err)
		}
		*g.into = rc
	}
	if _, err := c.Version(context.Background()); err != nil {
		return nil, fmt.Errorf("kubernetes: cluster at %s does not answer: %w", cfg.Host, err)
	}
	return c, nil
}

// Version is the API server's version.
func (c *Conn) Version(ctx context.Context) (version.Info, error) {
	var v version.Info
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	b, err := c.core.Get().AbsPath("/version").Do(cctx).Raw()
	if err != nil {
		return v, err
	}
	return v, json.Unmarshal(b, &v)
}

// get, list, create and remove are the REST calls a lab makes, on a
// group's client, in namespace ns ("" for cluster-scoped resources).
func (c *Conn) get(ctx context.Context, rc *rest.RESTClient, ns, resource, name string, into runtime.Object) error {
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return rc.Get().NamespaceIfScoped(ns, ns != "").Resource(resource).Name(name).Do(cctx).Into(into)
}

func (c *Conn) list(ctx context.Context, rc *rest.RESTClient, ns, resource string, into runtime.Object) error {
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return rc.Get().NamespaceIfScoped(ns, ns != "").Resource(resource).Do(cctx).Into(into)
}

func (c *Conn) create(ctx context.Context, rc *rest.RESTClient, ns, resource string, obj, into runtime.Object) error {
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return rc.Post().NamespaceIfScoped(ns, ns != "").Resource(resource).Body(obj).Do(cctx).Into(into)
}

func (c *Conn) remove(ctx context.Context, rc *rest.RESTClient, ns, resource, name string, opts *metav1.DeleteOptions) error {
	cctx, cancel := context.WithTimeout(ctx, apiTimeout)
	defer cancel()
	return rc.Delete().NamespaceIfScoped(ns, ns != "").Resource(resource).Name(name).Body(opts).Do(cctx).Error()
}

func restConfig(t Target) (*rest.Config, string, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if t.Kubeconfig != "" {
		if _, err := os.Stat(t.Kubeconfig); err != nil {
			return nil, "", fmt.Errorf("kubernetes: kubeconfig %s: %w", t.Kubeconfig, err)
		}
		rules.ExplicitPath = t.Kubeconfig
	}
	cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: t.Context})
	cfg, err := cc.ClientConfig()
	if err == nil {
		raw, _ := cc.RawConfig()
		name := t.Context
		if name == "" {
			name = raw.CurrentContext
		}
		return cfg, name, nil
	}
	if t.Kubeconfig == "" && t.Context == "" && clientcmd.IsEmptyConfig(err) {
		in, ierr := rest.InClusterConfig()
		if ierr == nil {
			return in, "", nil
		}
		return nil, "", errors.New("kubernetes: no cluster: no kubeconfig ($KUBECONFIG, ~/.kube/config) and not in a pod; give --kubeconfig")
	}
	if t.Context != "" {
		return nil, "", fmt.Errorf("kubernetes: context %q: %w", t.Context, err)
	}
	return nil, "", fmt.Errorf("kubernetes: kubeconfig: %w", err)
}

// need is one permission a lab needs: a verb on a resource, in the lab's
// namespace ("" for cluster-scoped ones).
type need struct {
	verb, group, resource, sub string
	namespaced                 bool
}

// needs are the permissions a lab needs, in the order they are used.
var needs = []need{
	{verb: "list", resource: "nodes"},
	{verb: "create", resource: "namespaces"},
	{verb: "delete", resource: "namespaces"},
	{verb: "create", resource: "pods", namespaced: true},
	{verb: "get", resource: "pods", namespaced: true},
	{verb: "create", resource: "pods", sub: "exec", namespaced: true},
	{verb: "create", resource: "services", namespaced: true},
}

// CheckAccess asks the API server whether the user may do everything a lab
// in namespace ns needs, and names the first verb and resource it may not.
func (c *Conn) CheckAccess(ctx context.Context, ns string) error {
	for _, n := range needs {
		attr := &authv1.ResourceAttributes{Verb: n.verb, Group: n.group, Resource: n.resource, Subresource: n.sub}
		if n.namespaced {
			attr.Namespace = ns
		}
		r := &authv1.SelfSubjectAccessReview{}
		err := c.create(ctx, c.authz, "", "selfsubjectaccessreviews",
			&authv1.SelfSubjectAccessReview{Spec: authv1.SelfSubjectAccessReviewSpec{ResourceAttributes: attr}}, r)
		if err != nil {
			return fmt.Errorf("kubernetes: ask whether %s may be done: %w", describe(n, ns), err)
		}
		if !r.Status.Allowed {
			return fmt.Errorf("kubernetes: permission missing: %s", describe(n, ns))
		}
	}
	return nil
}

func describe(n need, ns string) string {
	res := n.resource
	if n.sub != "" {
		res += "/" + n.sub
	}
	if n.namespaced {
		return fmt.Sprintf("%s %s in namespace %s", n.verb, res, ns)
	}
	return fmt.Sprintf("%s %s", n.verb, res)
}

// Preflight says, before a run creates anything, whether the cluster a
// target names answers, lets this user do what a lab needs (in a namespace
// of the lab's name form), and has the nodes the placements need.
func Preflight(t Target, placements []string) error {
	c, err := Connect(t)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if err := c.CheckAccess(ctx, Namespace("preflight")); err != nil {
		return err
	}
	two := lab.Topology{Hosts: []lab.HostSpec{{Name: "a"}, {Name: "b"}}}
	for _, p := range placements {
		if _, err := pickNodes(ctx, c, t.Nodes, p, two); err != nil {
			return err
		}
	}
	return nil
}

// PreflightClusters is Preflight for every cluster of t.Clusters, with the
// placements its labs want (by cluster name): each must answer, have its
// context, let the user make a lab and have the nodes; test clusters that
// are not up are named together, with the commands that bring them up;
// and no two may be one cluster (their kube-system namespaces' UIDs, which
// differ between clusters even behind one server URL). All of it before
// anything is made on any of them; each error names the cluster as
// kubernetes.clusters[i] (NAME).
func PreflightClusters(t Target, placements map[string][]string) error {
	var down []string
	for _, n := range t.Clusters {
		if n.TestCluster == "" {
			continue
		}
		if _, err := os.Stat(n.Kubeconfig); err != nil {
			down = append(down, upCommand(n, placements[n.Name]))
		}
	}
	if len(down) == 1 {
		return fmt.Errorf("kubernetes.clusters: test cluster not up; bring it up with: %s", down[0])
	}
	if len(down) > 1 {
		return fmt.Errorf("kubernetes.clusters: %d test clusters not up; bring them up with: %s", len(down), strings.Join(down, " && "))
	}
	ctx := context.Background()
	seen := map[types.UID]string{}
	for i, n := range t.Clusters {
		at := fmt.Sprintf("kubernetes.clusters[%d] (%s)", i, n.Name)
		on, _ := t.On(n.Name)
		if n.Context != "" {
			if err := hasContext(on); err != nil {
				return fmt.Errorf("%s: %w", at, err)
			}
		}
		c, err := Connect(on)
		if err != nil {
			return fmt.Errorf("%s: not reachable: %s", at, strings.TrimPrefix(err.Error(), "kubernetes: "))
		}
		if err := c.CheckAccess(ctx, Namespace("preflight")); err != nil {
			return fmt.Errorf("%s: %s", at, strings.TrimPrefix(err.Error(), "kubernetes: "))
		}
		two := lab.Topology{Hosts: []lab.HostSpec{{Name: "a"}, {Name: "b"}}}
		for _, p := range placements[n.Name] {
			if _, err := pickNodes(ctx, c, on.Nodes, p, two); err != nil {
				return fmt.Errorf("%s: %s", at, strings.TrimPrefix(err.Error(), "kubernetes: "))
			}
		}
		id, err := c.identity(ctx)
		if err != nil {
			return fmt.Errorf("%s: %w", at, err)
		}
		if first, ok := seen[id]; ok {
			return fmt.Errorf("%s: the same cluster as %s (kube-system's UID %s in both): list each cluster once", at, first, id)
		}
		seen[id] = at
	}
	return nil
}

// upCommand is the `cnperf cluster up` that makes a test cluster with the
// CNI the spec names and the nodes its placements need.
func upCommand(n TargetCluster, placements []string) string {
	nodes := 1
	if slices.Contains(placements, conditions.CrossNode) {
		nodes = 2
	}
	cmd := fmt.Sprintf("cnperf cluster up %s --nodes %d", n.TestCluster, nodes)
	if n.CNI != "" {
		cmd += " --cni " + n.CNI
	}
	if n.KubeProxy != "" {
		cmd += " --kube-proxy " + n.KubeProxy
	}
	return cmd
}

// hasContext refuses a context the target's kubeconfig does not have, in
// those words, before client-go's longer message about an invalid config.
func hasContext(t Target) error {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	if t.Kubeconfig != "" {
		rules.ExplicitPath = t.Kubeconfig
	}
	raw, err := rules.Load()
	if err != nil {
		return fmt.Errorf("kubeconfig: %w", err)
	}
	if _, ok := raw.Contexts[t.Context]; !ok {
		file := t.Kubeconfig
		if file == "" {
			file = "the default kubeconfig"
		}
		return fmt.Errorf("context %q: not in %s (it has %s)", t.Context, file, strings.Join(slices.Sorted(maps.Keys(raw.Contexts)), ", "))
	}
	return nil
}

// identity tells a cluster apart from another: its kube-system namespace's
// UID, made once when the cluster was created. A user who may not read it
// gets the server's URL, which tells apart all but one cluster reached by
// two names.
func (c *Conn) identity(ctx context.Context) (types.UID, error) {
	ns := &corev1.Namespace{}
	err := c.get(ctx, c.core, "", "namespaces", "kube-system", ns)
	if apierrors.IsForbidden(err) {
		return types.UID("server " + c.Server), nil
	}
	if err != nil {
		return "", fmt.Errorf("read namespace kube-system, which tells clusters apart: %w", err)
	}
	return ns.UID, nil
}
