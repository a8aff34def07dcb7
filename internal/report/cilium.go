package report

import (
	"fmt"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
)

// CiliumRow is one feature a run's Cilium cluster had off, with why as
// the cluster said it (run.json's features_off_why).
type CiliumRow struct {
	Cluster string // the cluster as the spec listed it, else its API server
	Cilium  string // version, routing and kube-proxy replacement
	Feature string
	Why     string // "" when the cluster did not say
}

// CiliumRows lists, per Cilium cluster a run's labs were on (once each),
// the features its cilium-config turned off and why; none on other pod
// networks.
func CiliumRows(m record.Meta) []CiliumRow {
	var rows []CiliumRow
	seen := map[string]bool{}
	for _, mm := range m.Modes {
		if mm.Lab == nil || mm.Lab.Kube == nil || mm.Lab.Kube.Cilium == nil {
			continue
		}
		k := mm.Lab.Kube
		name := k.Cluster
		if name == "" {
			name = k.Server
		}
		if seen[name] {
			continue
		}
		seen[name] = true
		c := k.Cilium
		desc := []string{c.Version, strings.TrimSpace(c.RoutingMode + " " + c.TunnelProtocol)}
		if c.KubeProxyReplacement != "" {
			desc = append(desc, "kube-proxy replacement "+c.KubeProxyReplacement)
		}
		for _, f := range c.FeaturesOff {
			rows = append(rows, CiliumRow{Cluster: name, Cilium: strings.Join(nonEmpty(desc), ", "), Feature: f, Why: c.FeaturesOffWhy[f]})
		}
	}
	return rows
}

func nonEmpty(ss []string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// addCilium adds the table of the Cilium features the runs' clusters had
// off, when a run was on Cilium.
func (r *Report) addCilium() {
	t := Table{ID: "tab-cilium", Title: "Cilium features off",
		Caption: "Per Cilium cluster the runs measured: the features its cilium-config turned off, and why, as the cluster said (cnperf's test cluster says why in an annotation on cilium-config; run.json records both).",
		Columns: []string{"cluster", "Cilium", "feature off", "why"}}
	for _, run := range r.Runs {
		for _, c := range CiliumRows(run.Meta) {
			why := c.Why
			if why == "" {
				why = "not said by the cluster"
			}
			cluster := c.Cluster
			if len(r.Runs) > 1 {
				cluster = fmt.Sprintf("%s%s%s", cluster, SeriesSuffix, run.Label)
			}
			t.Rows = append(t.Rows, []Cell{{Text: cluster}, {Text: c.Cilium}, {Text: c.Feature}, {Text: why}})
		}
	}
	if len(t.Rows) > 0 {
		r.Tables = append(r.Tables, t)
	}
}
