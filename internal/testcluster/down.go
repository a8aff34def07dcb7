package testcluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"github.com/cnperf/cnperf/internal/lab/process"
)

// NotUp is a cluster that is not there. Up lists the clusters that are,
// said when the name is no cluster's (notUp).
type NotUp struct {
	Name string
	Up   []string
}

func (e NotUp) Error() string {
	msg := fmt.Sprintf("cluster %s is not up", e.Name)
	switch {
	case e.Up == nil:
		return msg
	case len(e.Up) == 0:
		return msg + " (no cluster is up; bring one up with cnperf cluster up " + e.Name + ")"
	}
	return msg + " (up: " + strings.Join(e.Up, ", ") + ")"
}

// notUp is the error for a cluster whose files are missing: a name no
// cluster has is bad input (exit 2), said with the clusters that are up;
// a cluster whose directory is there without what up leaves in it (half
// up, or half down) is the machine's state (exit 1).
func notUp(name string) error {
	if _, err := os.Stat(Dir(name)); errors.Is(err, fs.ErrNotExist) {
		return NotUp{Name: name, Up: upNames()}
	}
	return lab.Failure{Err: NotUp{Name: name}}
}

// upNames are the clusters whose directories are there, sorted (never
// nil).
func upNames() []string {
	names := []string{}
	dirs, _ := filepath.Glob(Dir("*"))
	for _, d := range dirs {
		names = append(names, filepath.Base(filepath.Dir(d)))
	}
	sort.Strings(names)
	return names
}

// Down removes a cluster, half up or whole: the lab goes as `cnperf lab
// down` removes one (the processes in its namespaces, the namespaces and
// with them every device, route and rule, then every process in the lab's
// cgroups, which holds the relay, the containers and their shims, then
// the cgroups and the lab's state directory with the cluster's files), and
// the mount points up made once no cluster is left. A cluster that is not
// there is not an error; a lab of that name that is not a cluster is
// refused (plain error: exit 2).
func Down(name string, log io.Writer) error {
	if err := CheckName(name); err != nil {
		return err
	}
	mode, err := netns.LabMode(name)
	if err != nil {
		return lab.Failure{Err: err}
	}
	_, statErr := os.Stat(Dir(name))
	if mode != "" && mode != ModeName && statErr != nil {
		return fmt.Errorf("lab %s is not a cluster (mode %s): remove it with cnperf lab down %s", name, mode, name)
	}
	start := time.Now()
	if err := lab.Down(name, netns.Driver{}); err != nil {
		return lab.Failure{Err: fmt.Errorf("cluster %s: %w", name, err)}
	}
	removeMountPoints()
	if mode != "" || statErr == nil {
		fmt.Fprintf(log, "cluster %s is down (%.1f s)\n", name, time.Since(start).Seconds())
	}
	return nil
}

// Status writes what runs of a cluster: each recorded daemon, the memory
// of everything it started (its cgroups: daemons, shims, pods), and the
// nodes as the API server lists them.
func Status(ctx context.Context, name string, out io.Writer) error {
	if err := CheckName(name); err != nil {
		return err
	}
	recs, err := readPids(name)
	if err != nil {
		return notUp(name)
	}
	if flags, err := os.ReadFile(filepath.Join(Dir(name), "flags")); err == nil {
		fmt.Fprintf(out, "cluster %s: %s\n", name, strings.Join(strings.Fields(string(flags)), " "))
	}
	for _, r := range recs {
		state := "running"
		if r.Gone() {
			state = "gone"
		}
		fmt.Fprintf(out, "%-26s pid %-8d %s\n", r.Role, r.PID, state)
	}
	if rss, cache, ok := cgroupMemory("cnperf/" + name); ok {
		fmt.Fprintf(out, "memory: %.0f MiB resident, %.0f MiB with page cache\n", rss/(1<<20), (rss+cache)/(1<<20))
	}
	port, err := relayPort(name)
	if err != nil {
		return lab.Failure{Err: err}
	}
	a, err := newAPI(Dir(name), port)
	if err != nil {
		return lab.Failure{Err: err}
	}
	nodes, err := a.nodes(ctx)
	if err != nil {
		return lab.Failure{Err: fmt.Errorf("cluster %s: nodes: %w", name, err)}
	}
	sort.Slice(nodes, func(i, j int) bool { return nodes[i].Name < nodes[j].Name })
	for _, n := range nodes {
		ready := "NotReady"
		if ok, _ := nodeReady(n); ok {
			ready = "Ready"
		}
		addr := ""
		for _, a := range n.Status.Addresses {
			if a.Type == "InternalIP" {
				addr = a.Address
			}
		}
		extra := ""
		if bt := n.Annotations["flannel.alpha.coreos.com/backend-type"]; bt != "" {
			extra = " flannel " + bt
		}
		fmt.Fprintf(out, "node %-8s %-9s %-15s pods %s%s\n", n.Name, ready, addr, n.Spec.PodCIDR, extra)
	}
	return nil
}

// cgroupMemory is the resident memory and page cache of a cgroup tree.
func cgroupMemory(rel string) (rss, cache float64, ok bool) {
	b, err := os.ReadFile(filepath.Join(process.CgroupRoot, "memory", rel, "memory.stat"))
	if err != nil {
		return 0, 0, false
	}
	for _, l := range strings.Split(string(b), "\n") {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		v, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "total_rss":
			rss = v
		case "total_cache":
			cache = v
		}
	}
	return rss, cache, true
}

func relayPort(name string) (int, error) {
	b, err := os.ReadFile(filepath.Join(Dir(name), "relay-port"))
	if err != nil {
		return 0, NotUp{Name: name}
	}
	return strconv.Atoi(strings.TrimSpace(string(b)))
}

// Kubeconfig is the path of a cluster's kubeconfig (inLab: for inside the
// lab's namespaces).
func Kubeconfig(name string, inLab bool) (string, error) {
	if err := CheckName(name); err != nil {
		return "", err
	}
	p := KubeconfigPath(name, inLab)
	if _, err := os.Stat(p); err != nil {
		return "", notUp(name)
	}
	return p, nil
}

// Import puts an image tarball (cnperf image save, docker save) in every
// node's containerd, where pods with imagePullPolicy Never find it.
func Import(ctx context.Context, name, tar string, log io.Writer) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if _, err := os.Stat(tar); err != nil {
		return fmt.Errorf("image %s: no such file", tar)
	}
	if _, err := readPids(name); err != nil {
		return notUp(name)
	}
	socks, _ := filepath.Glob(filepath.Join(Dir(name), "node*", "containerd.sock"))
	if len(socks) == 0 {
		return lab.Failure{Err: fmt.Errorf("cluster %s has no node's containerd to import into", name)}
	}
	for _, s := range socks {
		if err := importImage(ctx, s, tar); err != nil {
			return lab.Failure{Err: fmt.Errorf("%s: %w", filepath.Base(filepath.Dir(s)), err)}
		}
	}
	fmt.Fprintf(log, "imported %s on %d nodes\n", tar, len(socks))
	return nil
}
