package report

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/spec/conditions"
)

func TestWithoutServices(t *testing.T) {
	for in, want := range map[string]string{
		"k8s-service/ipt,svc=1000":               "k8s-service/ipt",
		"k8s-service/svc=5000":                   "k8s-service",
		"k8s-service/ipt,nodes=same-node,svc=10": "k8s-service/ipt,nodes=same-node",
		"k8s-service/ipt":                        "k8s-service/ipt",
		"bridge":                                 "bridge",
	} {
		if got := withoutServices(in); got != want {
			t.Errorf("withoutServices(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestServiceCurves: the rows of a run become one curve per datapath in
// ascending N, with the programming latency's nearest-rank percentiles
// and each series' crr figure; nodes' counts add up, -1 where none read.
func TestServiceCurves(t *testing.T) {
	ms := func(v ...int) []time.Duration {
		var out []time.Duration
		for _, x := range v {
			out = append(out, time.Duration(x)*time.Millisecond)
		}
		return out
	}
	mode := func(key string, n int, prog []time.Duration, nodes ...record.NodeRules) record.ModeMeta {
		return record.ModeMeta{Mode: key, Conditions: conditions.Set{Services: n},
			Lab: &record.Lab{Kube: &record.Kube{Services: &record.KubeServices{N: n, ProgrammingNS: prog, Nodes: nodes}}}}
	}
	m := record.Meta{Modes: []record.ModeMeta{
		mode("k8s-service/ipt,svc=1000", 1000, ms(90, 10, 20, 30), record.NodeRules{Node: "n1", Iptables: 100, Nft: -1, NftElems: -1, CiliumLB: -1}, record.NodeRules{Node: "n2", Iptables: 50, Nft: -1, NftElems: -1, CiliumLB: -1}),
		mode("k8s-service/ipt", 0, ms(5)),
		mode("k8s-service/cil", 0, nil),
		{Mode: "k8s-pod/ipt"}, // no services record: not a row
	}}
	rows := ServiceRows(m)
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	if r := rows[0]; r.P50 != 20*time.Millisecond || r.P99 != 90*time.Millisecond || r.Iptables != 150 || r.Nft != -1 || r.Probes != 4 {
		t.Errorf("row 0 = %+v", r)
	}
	curves, order := ServiceCurves(rows, map[string]float64{"k8s-service/ipt": 120, "k8s-service/ipt,svc=1000": 180})
	if strings.Join(order, " ") != "k8s-service/ipt k8s-service/cil" {
		t.Fatalf("order = %v", order)
	}
	ipt := curves["k8s-service/ipt"]
	if len(ipt) != 2 || ipt[0].N != 0 || ipt[1].N != 1000 || ipt[0].FirstPacket != 120 || ipt[1].FirstPacket != 180 || ipt[1].P50 != 20*time.Millisecond {
		t.Errorf("ipt curve = %+v", ipt)
	}
	if cil := curves["k8s-service/cil"]; len(cil) != 1 || cil[0].P50 != 0 || !math.IsNaN(cil[0].FirstPacket) {
		t.Errorf("cil curve = %+v", cil)
	}
	var sb strings.Builder
	if err := WriteServicesTable(&sb, m); err != nil || !strings.Contains(sb.String(), "k8s-service/ipt,svc=1000") || !strings.Contains(sb.String(), "150") {
		t.Errorf("services table: %v\n%s", err, sb.String())
	}
}
