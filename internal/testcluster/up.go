package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netdev"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/owner"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/poll"
	"github.com/cnperf/cnperf/internal/testcluster/daemons"
)

// labMode is the mode of a cluster's lab: the hosts as they are (the
// daemons are started on them afterwards); its name marks the lab as a
// cluster's.
type labMode struct{}

func (labMode) Name() string { return ModeName }
func (labMode) Summary() string {
	return "a test cluster's hosts: the control plane on cp, Kubernetes nodes node1..N"
}
func (labMode) Build(b *netns.Build) ([]lab.Endpoint, error) {
	return lab.HostEndpoints(b.Endpoints, b.Conditions, b.Port, false), nil
}

// builder brings one cluster up.
type builder struct {
	o         Options
	dir       string
	log       io.Writer
	pki       *pki
	api       *api
	relayPort int
	daemons   []daemons.Recorded
	// mnt is each node's containerd PID: its mount namespace is the node's.
	mnt map[int]int
}

// Up brings a cluster up and returns its kubeconfig for the root
// namespace. Bad options and what the machine lacks are refused before
// anything is made (plain errors: exit 2); a failure after that removes
// what was made, unless o.Keep, and is a lab.Failure (exit 1). The lab
// belongs to this process while it is built, so `cnperf clean` removes
// what a killed up left; once up, it is nobody's, as `lab up` makes it.
func Up(ctx context.Context, o Options, log io.Writer) (kubeconfig string, err error) {
	if err := o.Validate(); err != nil {
		return "", err
	}
	if err := o.Preflight(); err != nil {
		return "", err
	}
	self, err := owner.Self()
	if err != nil {
		return "", lab.Failure{Err: err}
	}
	start := time.Now()
	hosts := []string{hostName(0)}
	for i := 1; i <= o.Nodes; i++ {
		hosts = append(hosts, hostName(i))
	}
	fmt.Fprintf(log, "cluster %s: lab with hosts %s\n", o.Name, strings.Join(hosts, ","))
	if _, err := lab.Up(netns.Driver{}, lab.Config{Name: o.Name, Mode: labMode{}, Topology: lab.ClientServers(hosts, false),
		Port: APIPort, Owner: self}); err != nil {
		return "", lab.Failure{Err: err}
	}
	defer func() {
		if err == nil {
			return
		}
		if o.Keep {
			fmt.Fprintf(log, "cluster %s: up failed; kept for its logs (%s), then: cnperf cluster down %s\n", o.Name, filepath.Join(Dir(o.Name), "logs"), o.Name)
		} else if derr := Down(o.Name, io.Discard); derr != nil {
			err = fmt.Errorf("%w (and removing what was made failed: %v)", err, derr)
		}
		err = lab.Failure{Err: err}
	}()
	dir, err := lab.StateDir(o.Name, "cluster")
	if err != nil {
		return "", err
	}
	b := &builder{o: o, dir: dir, log: log, mnt: map[int]int{}}
	if err := os.MkdirAll(filepath.Join(dir, "logs"), 0o755); err != nil {
		return "", err
	}
	if err := writeFlags(dir, o); err != nil {
		return "", err
	}
	if err := makeMountPoints(); err != nil {
		return "", err
	}
	if err := b.certificates(); err != nil {
		return "", err
	}
	if err := b.controlPlane(ctx); err != nil {
		return "", err
	}
	if err := b.objects(ctx); err != nil {
		return "", err
	}
	for i := 1; i <= o.Nodes; i++ {
		if err := b.node(ctx, i); err != nil {
			return "", fmt.Errorf("%s: %w", hostName(i), err)
		}
	}
	if err := b.ready(ctx); err != nil {
		return "", err
	}
	if err := netns.SetOwner(o.Name, owner.None); err != nil {
		return "", err
	}
	fmt.Fprintf(log, "cluster %s up in %.1f s: %d nodes, CNI %s, kube-proxy %s, %s\n", o.Name, time.Since(start).Seconds(), o.Nodes, o.CNI, o.ProxyMode, o.IPFamily)
	return KubeconfigPath(o.Name, false), nil
}

// writeFlags keeps what the cluster was brought up with, for status.
func writeFlags(dir string, o Options) error {
	s := fmt.Sprintf("nodes=%d\ncni=%s\nkube-proxy=%s\nip-family=%s\n", o.Nodes, o.CNI, o.ProxyMode, o.IPFamily)
	return os.WriteFile(filepath.Join(dir, "flags"), []byte(s), 0o644)
}

// certificates makes the CA and the control plane's identities.
func (b *builder) certificates() error {
	p, err := newPKI(filepath.Join(b.dir, "pki"), b.o.Name)
	if err != nil {
		return fmt.Errorf("certificates: %w", err)
	}
	b.pki = p
	ids := []identity{
		{file: "apiserver", cn: "kube-apiserver",
			dns: []string{"kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local", "localhost"},
			ips: []string{"127.0.0.1", hostAddr(0), lab.ClusterServiceAPI}},
		{file: "apiserver-kubelet-client", cn: "kube-apiserver-kubelet-client", org: "system:masters"},
		{file: "admin", cn: "kubernetes-admin", org: "system:masters"},
		{file: "controller-manager", cn: "system:kube-controller-manager"},
		{file: "scheduler", cn: "system:kube-scheduler"},
		{file: "kube-proxy", cn: "system:kube-proxy"},
		{file: "flannel", cn: flannelUser},
		// The Cilium agents and operator as cluster admins: the test
		// cluster does not reproduce Helm's ClusterRoles.
		{file: "cilium", cn: "cnperf:cilium", org: "system:masters"},
	}
	for _, id := range ids {
		if err := p.issue(id); err != nil {
			return err
		}
	}
	return p.serviceAccountKey()
}

// flannelUser is flanneld's identity, bound to flannel's ClusterRole.
const flannelUser = "cnperf:flannel"

// controlPlane starts etcd, the API server, the relay, the
// controller-manager and the scheduler, on host cp (the relay in the
// machine's namespace, on 127.0.0.1).
func (b *builder) controlPlane(ctx context.Context) error {
	name, cp := b.o.Name, lab.NS(b.o.Name, hostName(0))
	bin := b.o.KubeBin()
	pki := filepath.Join(b.dir, "pki")
	cpd := filepath.Join(b.dir, "cp")
	if err := os.MkdirAll(filepath.Join(cpd, "etcd"), 0o700); err != nil {
		return err
	}
	local := fmt.Sprintf("https://127.0.0.1:%d", APIPort)
	for _, u := range []string{"controller-manager", "scheduler"} {
		if err := b.pki.kubeconfig(filepath.Join(cpd, u+".kubeconfig"), name, local, u); err != nil {
			return err
		}
	}
	fmt.Fprintf(b.log, "cluster %s: control plane on %s (%s)\n", name, cp, hostAddr(0))
	if b.o.Dual() {
		// cp routes the nodes' IPv6 pod networks too (ready).
		if err := hostIPv6(name, cp, hostAddr6(0)); err != nil {
			return err
		}
	}
	cg := "cnperf/" + name + "/cp"
	// No fsync: a throwaway test cluster, and the disk is shared with labs.
	if _, err := b.start(daemons.Daemon{Role: "etcd", NS: cp, Cgroup: cg, Argv: []string{filepath.Join(bin, "etcd"),
		"--name", "cp", "--data-dir", filepath.Join(cpd, "etcd"), "--unsafe-no-fsync",
		"--listen-client-urls", "http://127.0.0.1:2379", "--advertise-client-urls", "http://127.0.0.1:2379",
		"--listen-peer-urls", "http://127.0.0.1:2380", "--initial-advertise-peer-urls", "http://127.0.0.1:2380",
		"--initial-cluster", "cp=http://127.0.0.1:2380", "--log-level", "warn"}}); err != nil {
		return err
	}
	f := func(n string) string { return filepath.Join(pki, n) }
	if _, err := b.start(daemons.Daemon{Role: "kube-apiserver", NS: cp, Cgroup: cg, Argv: []string{filepath.Join(bin, "kube-apiserver"),
		"--advertise-address=" + hostAddr(0), "--bind-address=0.0.0.0", "--secure-port=" + strconv.Itoa(APIPort),
		"--etcd-servers=http://127.0.0.1:2379",
		"--service-cluster-ip-range=" + b.o.serviceRange(), "--service-node-port-range=30000-32767",
		"--client-ca-file=" + f("ca.crt"), "--tls-cert-file=" + f("apiserver.crt"), "--tls-private-key-file=" + f("apiserver.key"),
		"--kubelet-client-certificate=" + f("apiserver-kubelet-client.crt"), "--kubelet-client-key=" + f("apiserver-kubelet-client.key"),
		"--kubelet-preferred-address-types=InternalIP",
		"--service-account-issuer=https://kubernetes.default.svc.cluster.local",
		"--service-account-key-file=" + f("sa.pub"), "--service-account-signing-key-file=" + f("sa.key"),
		"--authorization-mode=Node,RBAC", "--enable-admission-plugins=NodeRestriction",
		"--allow-privileged=true", "--profiling=false", "--v=1"}}); err != nil {
		return err
	}
	// The relay: 127.0.0.1:PORT in the machine's namespace to the API
	// server, each connection made from a thread inside host cp's.
	port, err := freePort(16443)
	if err != nil {
		return err
	}
	b.relayPort = port
	if _, err := b.start(daemons.Daemon{Role: "k8s-relay", Cgroup: "cnperf/" + name + "/relay", Argv: []string{filepath.Join(bin, "k8s-relay"),
		"127.0.0.1:" + strconv.Itoa(port), "/run/netns/" + cp, "127.0.0.1:" + strconv.Itoa(APIPort)}}); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(b.dir, "relay-port"), []byte(strconv.Itoa(port)+"\n"), 0o644); err != nil {
		return err
	}
	if err := b.pki.kubeconfig(KubeconfigPath(name, false), name, fmt.Sprintf("https://127.0.0.1:%d", port), "admin"); err != nil {
		return err
	}
	if err := b.pki.kubeconfig(KubeconfigPath(name, true), name, fmt.Sprintf("https://%s:%d", hostAddr(0), APIPort), "admin"); err != nil {
		return err
	}
	if b.api, err = newAPI(b.dir, port); err != nil {
		return err
	}
	if err := b.wait(ctx, "the API server", 90*time.Second, func() (bool, error) {
		return b.api.Get().AbsPath("/readyz").Do(ctx).Error() == nil, nil
	}); err != nil {
		return err
	}
	cm := []string{filepath.Join(bin, "kube-controller-manager"),
		"--kubeconfig=" + filepath.Join(cpd, "controller-manager.kubeconfig"),
		"--authentication-kubeconfig=" + filepath.Join(cpd, "controller-manager.kubeconfig"),
		"--authorization-kubeconfig=" + filepath.Join(cpd, "controller-manager.kubeconfig"),
		"--bind-address=127.0.0.1", "--leader-elect=false",
		"--cluster-signing-cert-file=" + f("ca.crt"), "--cluster-signing-key-file=" + f("ca.key"),
		"--root-ca-file=" + f("ca.crt"), "--service-account-private-key-file=" + f("sa.key"),
		"--use-service-account-credentials=true", "--service-cluster-ip-range=" + b.o.serviceRange(),
		"--cluster-cidr=" + b.o.podRange(), "--v=1"}
	if _, ok := b.o.Cilium(); ok {
		// Cilium's Kubernetes IPAM takes each node's podCIDR likewise.
		cm = append(cm, "--allocate-node-cidrs=true", "--node-cidr-mask-size=24")
	} else if _, ok := b.o.Flannel(); ok {
		// Flannel's Kubernetes subnet manager leases each node the podCIDR
		// the controller-manager allocates, as on a kubeadm cluster.
		cm = append(cm, "--allocate-node-cidrs=true", "--node-cidr-mask-size=24")
	} else {
		// The bridge CNI's subnets are fixed by the plan (ready).
		cm = append(cm, "--allocate-node-cidrs=false")
	}
	if b.o.Dual() {
		cm = append(cm, "--node-cidr-mask-size-ipv6=64")
	}
	if _, err := b.start(daemons.Daemon{Role: "kube-controller-manager", NS: cp, Cgroup: cg, Argv: cm}); err != nil {
		return err
	}
	_, err = b.start(daemons.Daemon{Role: "kube-scheduler", NS: cp, Cgroup: cg, Argv: []string{filepath.Join(bin, "kube-scheduler"),
		"--kubeconfig=" + filepath.Join(cpd, "scheduler.kubeconfig"),
		"--authentication-kubeconfig=" + filepath.Join(cpd, "scheduler.kubeconfig"),
		"--authorization-kubeconfig=" + filepath.Join(cpd, "scheduler.kubeconfig"),
		"--bind-address=127.0.0.1", "--leader-elect=false", "--v=1"}})
	return err
}

// freePort is the first port from p up that nothing listens on at
// 127.0.0.1 in the machine's namespace.
func freePort(p int) (int, error) {
	for ; p < 65536; p++ {
		l, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p))
		if err == nil {
			l.Close()
			return p, nil
		}
	}
	return 0, errors.New("no free port on 127.0.0.1 for the API server's relay")
}

// wait polls done until it holds, failing after within with the line of a
// daemon that died meanwhile, if one did.
func (b *builder) wait(ctx context.Context, what string, within time.Duration, done func() (bool, error)) error {
	err := poll.Until(ctx, within, 250*time.Millisecond, func() (bool, error) {
		if err := b.alive(); err != nil {
			return false, err
		}
		return done()
	})
	if errors.Is(err, poll.ErrTimeout) {
		return fmt.Errorf("%w after %s waiting for %s", errTimeout, within, what)
	}
	return err
}

// errTimeout is a wait that ran out of time (not a daemon that died).
var errTimeout = errors.New("timed out")

// alive says which daemon has exited, with its log's last line.
func (b *builder) alive() error {
	for _, d := range b.daemons {
		if d.Gone() {
			return fmt.Errorf("%s exited: %s", d.Role, process.LastLogLine(filepath.Join(b.dir, "logs", d.Role+".log")))
		}
	}
	return nil
}

// objects creates what a kubeadm cluster and flannel's manifest would:
// kube-proxy's ConfigMap (what cnperf's kubernetes driver reads its mode
// from), and for flannel its ClusterRole, binding and kube-flannel-cfg.
func (b *builder) objects(ctx context.Context) error {
	// Without kube-proxy there is no ConfigMap of its either, as on a
	// cluster installed without it.
	if b.o.ProxyMode != "none" {
		cm := map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "kube-proxy", "namespace": "kube-system"},
			"data":     map[string]string{"config.conf": proxyConfig(b.o)}}
		if err := b.api.create(ctx, "/api/v1/namespaces/kube-system/configmaps", cm); err != nil {
			return fmt.Errorf("kube-proxy ConfigMap: %w", err)
		}
	}
	more := map[string]any{"apiVersion": "networking.k8s.io/v1", "kind": "ServiceCIDR",
		"metadata": map[string]any{"name": "cnperf-more"}, "spec": map[string]any{"cidrs": []string{lab.ClusterServiceMore}}}
	if err := b.api.create(ctx, "/apis/networking.k8s.io/v1/servicecidrs", more); err != nil {
		return fmt.Errorf("ServiceCIDR %s: %w", lab.ClusterServiceMore, err)
	}
	if _, ok := b.o.Cilium(); ok {
		if err := b.ciliumObjects(ctx); err != nil {
			return err
		}
		return b.ciliumOperator()
	}
	if _, ok := b.o.Flannel(); !ok {
		return nil
	}
	return b.flannelObjects(ctx)
}

// ready waits for every node to register, fixes the bridge CNI's pod
// CIDRs, waits for flanneld's leases and writes the nodes' CNI configs
// from them, waits for every node Ready, routes every pod network from
// host cp (so a client there reaches pods), and waits for the default
// ServiceAccount (pods are refused without it).
func (b *builder) ready(ctx context.Context) error {
	n := b.o.Nodes
	fmt.Fprintf(b.log, "cluster %s: waiting for %d nodes\n", b.o.Name, n)
	var nodes []corev1.Node
	if err := b.wait(ctx, fmt.Sprintf("%d nodes to register", n), 120*time.Second, func() (bool, error) {
		var err error
		nodes, err = b.api.nodes(ctx)
		return err == nil && len(nodes) >= n, nil
	}); err != nil {
		return err
	}
	if _, ok := b.o.Flannel(); ok {
		// flanneld leases the podCIDR the controller-manager gives a node
		// when it registers, and exits without one: its DaemonSet's pod
		// starts on a node that has one (else it restarts until it has).
		if err := b.wait(ctx, "the nodes' pod CIDRs", 60*time.Second, func() (bool, error) {
			nodes, err := b.api.nodes(ctx)
			if err != nil {
				return false, nil
			}
			for _, nd := range nodes {
				if nd.Spec.PodCIDR == "" {
					return false, nil
				}
			}
			return true, nil
		}); err != nil {
			return err
		}
		for i := 1; i <= n; i++ {
			if err := b.flanneld(i, filepath.Join(b.dir, hostName(i)), b.mnt[i]); err != nil {
				return fmt.Errorf("%s: %w", hostName(i), err)
			}
		}
		for i := 1; i <= n; i++ {
			if err := b.flannelCNI(ctx, i); err != nil {
				return fmt.Errorf("%s: %w", hostName(i), err)
			}
		}
	} else if _, ok := b.o.Cilium(); ok {
		// Each agent writes its node's CNI config once it is ready (the
		// controller-manager gave the node its podCIDR meanwhile).
		for i := 1; i <= n; i++ {
			if err := b.ciliumReady(ctx, i); err != nil {
				return fmt.Errorf("%s: %w", hostName(i), err)
			}
		}
	} else {
		for i := 1; i <= n; i++ {
			subnet, _ := lab.ClusterNodePods(i)
			patch := fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q]}}`, subnet, subnet)
			if b.o.Dual() {
				subnet6, _ := lab.ClusterNodePods6(i)
				patch = fmt.Sprintf(`{"spec":{"podCIDR":%q,"podCIDRs":[%q,%q]}}`, subnet, subnet, subnet6)
			}
			if err := b.api.Patch(types.MergePatchType).AbsPath("/api/v1/nodes/" + hostName(i)).Body([]byte(patch)).Do(ctx).Error(); err != nil {
				return fmt.Errorf("%s: pod CIDR: %w", hostName(i), err)
			}
		}
	}
	var why string
	if err := b.wait(ctx, "every node Ready and untainted", 120*time.Second, func() (bool, error) {
		var err error
		if nodes, err = b.api.nodes(ctx); err != nil {
			return false, nil
		}
		for _, nd := range nodes {
			// Ready, and the node controller's taints (not-ready,
			// network-unavailable) gone: pods schedule there now.
			if ok, notReady := nodeReady(nd); !ok || len(nd.Spec.Taints) > 0 {
				why = nd.Name + ": " + notReady
				return false, nil
			}
		}
		return true, nil
	}); err != nil {
		if why != "" {
			return fmt.Errorf("%w (%s)", err, why)
		}
		return err
	}
	var routes []netdev.Route
	for _, nd := range nodes {
		i, err := strconv.Atoi(strings.TrimPrefix(nd.Name, "node"))
		if err != nil || nd.Spec.PodCIDR == "" {
			continue
		}
		routes = append(routes, netdev.Route{Dst: nd.Spec.PodCIDR, Via: net.ParseIP(hostAddr(i))})
		for _, c := range nd.Spec.PodCIDRs {
			if strings.Contains(c, ":") && b.o.Dual() {
				routes = append(routes, netdev.Route{Dst: c, Via: net.ParseIP(hostAddr6(i))})
			}
		}
	}
	if err := (netdev.B{Lab: b.o.Name}).Routes(lab.NS(b.o.Name, hostName(0)), routes); err != nil {
		return err
	}
	return b.wait(ctx, "the default ServiceAccount", 60*time.Second, func() (bool, error) {
		return b.api.Get().AbsPath("/api/v1/namespaces/default/serviceaccounts/default").Do(ctx).Error() == nil, nil
	})
}
