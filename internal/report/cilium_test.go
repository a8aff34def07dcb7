package report_test

import (
	"strings"
	"testing"

	"github.com/cnperf/cnperf/internal/report"
)

// TestCiliumTable: a run on a Cilium cluster shows, once per cluster, each
// feature its cilium-config turned off with the cluster's reason, and says
// so where the cluster gave none; a run on another pod network has no such
// table.
func TestCiliumTable(t *testing.T) {
	dir := editedRun(t, "k8s-daemons", func(m map[string]any) {
		for _, mm := range m["modes"].([]any) {
			k := mm.(map[string]any)["lab"].(map[string]any)["kubernetes"].(map[string]any)
			k["cilium"] = map[string]any{"version": "1.20.2", "routing_mode": "tunnel", "tunnel_protocol": "vxlan", "kube_proxy_replacement": "false",
				"features_off":     []string{"enable-bandwidth-manager", "enable-gateway-api"},
				"features_off_why": map[string]string{"enable-bandwidth-manager": "the kernel has no fq qdisc (CONFIG_NET_SCH_FQ)"}}
		}
	})
	tables := func(dir string) []report.Table {
		runs, notes := report.Load([]string{dir})
		r, err := report.Build(runs, notes, report.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var out []report.Table
		for _, tb := range r.Tables {
			if tb.ID == "tab-cilium" {
				out = append(out, tb)
			}
		}
		return out
	}
	got := tables(dir)
	if len(got) != 1 || len(got[0].Rows) != 2 {
		t.Fatalf("Cilium tables %+v, want one with a row per feature off", got)
	}
	var text []string
	for _, row := range got[0].Rows {
		var cells []string
		for _, c := range row {
			cells = append(cells, c.Text)
		}
		text = append(text, strings.Join(cells, " | "))
	}
	for i, want := range []string{"1.20.2, tunnel vxlan, kube-proxy replacement false | enable-bandwidth-manager | the kernel has no fq qdisc (CONFIG_NET_SCH_FQ)",
		"enable-gateway-api | not said by the cluster"} {
		if !strings.Contains(text[i], want) {
			t.Errorf("row %d %q, want it to hold %q", i, text[i], want)
		}
	}
	if got := tables("testdata/written-2026-11/k8s-daemons"); len(got) != 0 {
		t.Errorf("a flannel run has a Cilium table: %+v", got)
	}
}
