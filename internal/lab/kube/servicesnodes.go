package kube

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/namespace"
	"github.com/cnperf/cnperf/internal/record"
)

// What the nodes hold is read only on cnperf's own test cluster, whose
// nodes are network namespaces of this machine (cnperf-CLUSTER-HOST) and
// whose daemons have cgroups here; another cluster's nodes are out of
// reach, and the record says so.

// maxRulesOutput bounds what a rule listing may print: kube-proxy's
// nftables table for 20,000 Services is a few MB.
const maxRulesOutput = 256 << 20

// testNodes maps the lab's nodes to their hosts on a test cluster of this
// machine's (cnperf.io/cluster and cnperf.io/host labels, the host's
// namespace present); cluster is "" elsewhere.
func (r *Runtime) testNodes(ctx context.Context) (cluster string, hosts map[string]string) {
	hosts = map[string]string{}
	for _, name := range r.nodes {
		n := &corev1.Node{}
		if err := r.c.get(ctx, r.c.core, "", "nodes", name, n); err != nil {
			return "", nil
		}
		c, h := n.Labels[LabelCluster], n.Labels[LabelHost]
		if c == "" || h == "" || (cluster != "" && c != cluster) {
			return "", nil
		}
		if _, err := os.Stat(filepath.Join("/run/netns", lab.NS(c, h))); err != nil {
			return "", nil
		}
		cluster, hosts[name] = c, h
	}
	return cluster, hosts
}

// nodeRules counts each node's iptables rules, kube-proxy's nftables rules
// and elements, and Cilium's Service map entries.
func (r *Runtime) nodeRules(ctx context.Context) ([]record.NodeRules, error) {
	cluster, hosts := r.testNodes(ctx)
	if cluster == "" {
		return nil, errors.New("rules and map entries not counted: the nodes are not namespaces of this machine (a cluster cnperf did not build)")
	}
	var out []record.NodeRules
	for _, node := range r.nodes {
		ns := lab.NS(cluster, hosts[node])
		nr := record.NodeRules{Node: node, Iptables: -1, Nft: -1, NftElems: -1, CiliumLB: -1}
		var notes []string
		if b, err := inNetns(ctx, ns, "iptables-save"); err == nil {
			nr.Iptables = countPrefixed(b, "-A ")
		} else {
			notes = append(notes, err.Error())
		}
		// Only kube-proxy's nftables table: iptables-nft's rules are in
		// the iptables count.
		if b, err := inNetns(ctx, ns, "nft", "-j", "list", "table", "ip", "kube-proxy"); err == nil {
			nr.Nft, nr.NftElems, err = nftCounts(b)
			if err != nil {
				notes = append(notes, err.Error())
			}
		}
		if n, err := ciliumEntries(ctx, cluster, hosts[node]); err == nil {
			nr.CiliumLB = n
		} else if !errors.Is(err, os.ErrNotExist) {
			notes = append(notes, err.Error())
		}
		nr.ReadFailed = strings.Join(notes, "; ")
		out = append(out, nr)
	}
	return out, nil
}

// inNetns runs a command in a network namespace and returns its output
// (at most maxRulesOutput).
func inNetns(ctx context.Context, ns string, argv ...string) ([]byte, error) {
	var out []byte
	err := namespace.Do(ns, func() error {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
		var b bytes.Buffer
		cmd.Stdout = &limitWriter{w: &b, n: maxRulesOutput}
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s in %s: %w", strings.Join(argv, " "), ns, err)
		}
		out = b.Bytes()
		return nil
	})
	return out, err
}

// limitWriter takes at most n bytes and fails past them.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if len(p) > l.n {
		return 0, fmt.Errorf("output over %d bytes", maxRulesOutput)
	}
	l.n -= len(p)
	return l.w.Write(p)
}

// countPrefixed counts the lines that start with prefix.
func countPrefixed(b []byte, prefix string) int {
	n := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), prefix) {
			n++
		}
	}
	return n
}

// nftCounts reads `nft -j list ...`: its rules, and the elements of its
// sets and maps (kube-proxy's nftables mode keeps Services in maps).
func nftCounts(b []byte) (rules, elems int, err error) {
	var doc struct {
		Nftables []struct {
			Rule json.RawMessage `json:"rule"`
			Set  *struct {
				Elem []json.RawMessage `json:"elem"`
			} `json:"set"`
			Map *struct {
				Elem []json.RawMessage `json:"elem"`
			} `json:"map"`
		} `json:"nftables"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return 0, 0, fmt.Errorf("nft's JSON: %w", err)
	}
	for _, o := range doc.Nftables {
		if o.Rule != nil {
			rules++
		}
		if o.Set != nil {
			elems += len(o.Set.Elem)
		}
		if o.Map != nil {
			elems += len(o.Map.Elem)
		}
	}
	return rules, elems, nil
}

// ciliumEntries counts the entries of the node's Cilium Service map, as
// the agent's own cilium-dbg lists them (`bpf lb list`: a line per
// Service's entry and per backend slot), run in the agent's mount and
// network namespaces; os.ErrNotExist when the node runs no agent.
func ciliumEntries(ctx context.Context, cluster, host string) (int, error) {
	procs := filepath.Join(cgroupRoot, "cpuacct", lab.ClusterDaemonCgroup(cluster, host, "cilium-agent"), "cgroup.procs")
	b, err := os.ReadFile(procs)
	if err != nil {
		return 0, os.ErrNotExist
	}
	pid := strings.Fields(string(b))
	if len(pid) == 0 {
		return 0, os.ErrNotExist
	}
	exe, err := os.Readlink(filepath.Join("/proc", pid[0], "exe"))
	if err != nil {
		return 0, fmt.Errorf("cilium-agent %s: %w", pid[0], err)
	}
	cctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(cctx, "nsenter", "-t", pid[0], "-m", "-n", "--", filepath.Join(filepath.Dir(exe), "cilium-dbg"), "bpf", "lb", "list")
	var out bytes.Buffer
	cmd.Stdout = &limitWriter{w: &out, n: maxRulesOutput}
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("cilium-dbg bpf lb list on %s: %w", host, err)
	}
	lines := strings.Count(strings.TrimSpace(out.String()), "\n") // less the header
	return lines, nil
}

// proxySync is kube-proxy's count and sum of sync durations.
type proxySync struct {
	count int64
	sum   float64
}

// proxySyncs sums kube-proxy's kubeproxy_sync_proxy_rules_duration_seconds
// over the lab's nodes, from its metrics endpoint inside each node's
// namespace (127.0.0.1:10249).
func (r *Runtime) proxySyncs(ctx context.Context) (proxySync, error) {
	var total proxySync
	cluster, hosts := r.testNodes(ctx)
	if cluster == "" {
		return total, errors.New("not read: the nodes are not namespaces of this machine")
	}
	for _, node := range r.nodes {
		var conn net.Conn
		err := namespace.Do(lab.NS(cluster, hosts[node]), func() error {
			var err error
			conn, err = net.DialTimeout("tcp", "127.0.0.1:10249", 2*time.Second)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("not reachable on %s: %w", node, err)
		}
		s, err := readProxyMetrics(conn)
		conn.Close()
		if err != nil {
			return total, fmt.Errorf("on %s: %w", node, err)
		}
		total.count += s.count
		total.sum += s.sum
	}
	return total, nil
}

// readProxyMetrics asks kube-proxy's metrics over conn and reads its sync
// histogram's count and sum.
func readProxyMetrics(conn net.Conn) (proxySync, error) {
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req, _ := http.NewRequest(http.MethodGet, "http://127.0.0.1:10249/metrics", nil)
	if err := req.Write(conn); err != nil {
		return proxySync{}, err
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), req)
	if err != nil {
		return proxySync{}, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return proxySync{}, fmt.Errorf("metrics: %s", resp.Status)
	}
	return parseProxyMetrics(io.LimitReader(resp.Body, maxMetrics))
}

// maxMetrics bounds kube-proxy's metrics page.
const maxMetrics = 8 << 20

const syncMetric = "kubeproxy_sync_proxy_rules_duration_seconds"

// parseProxyMetrics sums the Prometheus text lines of the sync histogram's
// _count and _sum over their labels (kube-proxy labels them by ip_family),
// and refuses a page without them.
func parseProxyMetrics(rd io.Reader) (proxySync, error) {
	var s proxySync
	found := 0
	sc := bufio.NewScanner(rd)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		name, _, _ := strings.Cut(f[0], "{")
		switch name {
		case syncMetric + "_count":
			n, err := strconv.ParseFloat(f[1], 64)
			if err != nil || n < 0 || n > 1e15 {
				return s, fmt.Errorf("metrics: %s %q", f[0], f[1])
			}
			if s.count, found = s.count+int64(n), found|1; s.count > 1e15 {
				return s, fmt.Errorf("metrics: %s: over 1e15 syncs", name)
			}
		case syncMetric + "_sum":
			v, err := strconv.ParseFloat(f[1], 64)
			if err != nil || !(v >= 0 && v < 1e15) {
				return s, fmt.Errorf("metrics: %s %q", f[0], f[1])
			}
			if s.sum, found = s.sum+v, found|2; s.sum >= 1e15 {
				return s, fmt.Errorf("metrics: %s: over 1e15 seconds", name)
			}
		}
	}
	if err := sc.Err(); err != nil {
		return s, fmt.Errorf("metrics: %w", err)
	}
	if found != 3 {
		return s, fmt.Errorf("metrics: no %s", syncMetric)
	}
	return s, nil
}
