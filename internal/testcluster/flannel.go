package testcluster

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	fl "github.com/cnperf/cnperf/internal/lab/flannel"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/process"
	"github.com/cnperf/cnperf/internal/testcluster/daemons"
)

// netConf is flannel's net-conf.json as the kube-flannel ConfigMap gives
// it: the cluster's pod network and the backend.
func netConf(backend string) string {
	return fmt.Sprintf(`{
  "Network": %q,
  "EnableNFTables": false,
  "Backend": {
    "Type": %q
  }
}
`, lab.ClusterPodCIDR, backend)
}

// flannelObjects creates what flannel's manifest (kube-flannel.yml)
// creates besides its DaemonSet: the namespace, its ConfigMap, and the
// ClusterRole flanneld needs, bound to flanneld's identity here.
func (b *builder) flannelObjects(ctx context.Context) error {
	backend, _ := b.o.Flannel()
	objs := []struct {
		path string
		obj  map[string]any
	}{
		{"/api/v1/namespaces", map[string]any{"apiVersion": "v1", "kind": "Namespace",
			"metadata": map[string]any{"name": "kube-flannel"}}},
		{"/api/v1/namespaces/kube-flannel/configmaps", map[string]any{"apiVersion": "v1", "kind": "ConfigMap",
			"metadata": map[string]any{"name": "kube-flannel-cfg", "namespace": "kube-flannel", "labels": map[string]string{"app": "flannel", "tier": "node"}},
			"data":     map[string]string{"net-conf.json": netConf(backend), "cni-conf.json": cniConf}}},
		{"/apis/rbac.authorization.k8s.io/v1/clusterroles", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
			"metadata": map[string]any{"name": "flannel"},
			"rules": []map[string]any{
				{"apiGroups": []string{""}, "resources": []string{"pods"}, "verbs": []string{"get"}},
				{"apiGroups": []string{""}, "resources": []string{"nodes"}, "verbs": []string{"get", "list", "watch"}},
				{"apiGroups": []string{""}, "resources": []string{"nodes/status"}, "verbs": []string{"patch"}},
			}}},
		{"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", map[string]any{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
			"metadata": map[string]any{"name": "flannel"},
			"roleRef":  map[string]any{"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "flannel"},
			"subjects": []map[string]any{{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": flannelUser}}}},
	}
	for _, o := range objs {
		if err := b.api.create(ctx, o.path, o.obj); err != nil {
			return fmt.Errorf("flannel's %s: %w", o.obj["kind"], err)
		}
	}
	return nil
}

// cniConf is the kube-flannel ConfigMap's cni-conf.json: flannel's CNI
// plugin, which cnperf does not have (the module proxy refuses it), turns
// it into a bridge + host-local config from subnet.env (flannelCNI).
const cniConf = `{
  "name": "cbr0",
  "cniVersion": "0.3.1",
  "plugins": [
    {"type": "flannel", "delegate": {"hairpinMode": true, "isDefaultGateway": true}},
    {"type": "portmap", "capabilities": {"portMappings": true}}
  ]
}
`

// flanneld starts node i's flanneld as flannel's DaemonSet runs it
// (--ip-masq --kube-subnet-mgr), in the node's namespaces, its subnet
// lease from the node's podCIDR, written to the node's subnet.env.
func (b *builder) flanneld(i int, nd string, mnt int) error {
	backend, _ := b.o.Flannel()
	conf := filepath.Join(nd, "net-conf.json")
	if err := os.WriteFile(conf, []byte(netConf(backend)), 0o644); err != nil {
		return err
	}
	_, err := b.start(daemons.Daemon{Role: hostName(i) + "-flanneld", NS: lab.NS(b.o.Name, hostName(i)), Cgroup: lab.ClusterDaemonCgroup(b.o.Name, hostName(i), "flanneld"), MntPID: mnt,
		Env: []string{"NODE_NAME=" + hostName(i)},
		Argv: []string{b.o.Flanneld(), "--kube-subnet-mgr", "--kubeconfig-file=" + filepath.Join(nd, "flannel.kubeconfig"),
			"--net-config-path=" + conf, "--iface=eth0", "--ip-masq", "--subnet-file=" + filepath.Join(nd, "subnet.env")}})
	return err
}

// flannelConflist is the bridge + host-local config flannel's CNI plugin
// would hand to the bridge plugin, from subnet.env and cni-conf.json's
// delegate: bridge cni0 as the pods' gateway and default route, hairpin,
// the lease's MTU, no NAT of its own when flanneld masquerades.
func flannelConflist(e fl.SubnetEnv, nd string) string {
	delegate := map[string]any{
		"type": "bridge", "name": "cbr0", "hairpinMode": true, "isDefaultGateway": true, "isGateway": true,
		"ipMasq": !e.IPMasq, "mtu": e.MTU,
		"ipam": map[string]any{"type": "host-local",
			"ranges":  [][]map[string]string{{{"subnet": e.Lease().String()}}},
			"routes":  []map[string]string{{"dst": e.Network.String()}},
			"dataDir": filepath.Join(nd, "cni", "ipam")},
	}
	conf := map[string]any{"cniVersion": "0.3.1", "name": "cbr0",
		"plugins": []any{delegate, map[string]any{"type": "portmap", "capabilities": map[string]bool{"portMappings": true}}}}
	b, _ := json.MarshalIndent(conf, "", "  ")
	return string(b) + "\n"
}

// flannelCNI waits for node i's flanneld to lease its subnet and writes
// the node's CNI config from it; containerd picks it up and the node
// turns Ready.
func (b *builder) flannelCNI(ctx context.Context, i int) error {
	nd := filepath.Join(b.dir, hostName(i))
	env := filepath.Join(nd, "subnet.env")
	var e fl.SubnetEnv
	err := b.wait(ctx, "flanneld's lease (subnet.env)", 90*time.Second, func() (bool, error) {
		var err error
		e, err = fl.ReadSubnetEnv(env)
		// A pod network route needs the network flanneld names.
		return err == nil && e.Network.IsValid(), nil
	})
	if errors.Is(err, errTimeout) {
		return fmt.Errorf("%w: flanneld: %s", err, process.LastLogLine(filepath.Join(b.dir, "logs", hostName(i)+"-flanneld.log")))
	}
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(nd, "cni", "net.d", "10-flannel.conflist"), []byte(flannelConflist(e, nd)), 0o644)
}
