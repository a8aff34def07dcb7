package report

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/cnperf/cnperf/internal/record"
)

// daemonRoles are the node daemons' roles in the order the table shows
// them, with their names for people.
var daemonRoles = []struct{ role, title string }{
	{record.DaemonCNIAgent, "CNI agent"},
	{record.DaemonCNIOperator, "CNI operator"},
	{record.DaemonKubeProxy, "kube-proxy"},
	{record.DaemonKubelet, "kubelet"},
	{record.DaemonContainerd, "containerd"},
}

// daemonTable is a run's table of what the cluster's node daemons spent
// per mode, summed over its cells (record.Cell.Daemons): beside the
// servers' own cost, what the pod network's agent and kube-proxy cost on
// the nodes the lab's pods were on. ok is false when no cell recorded
// any (a run off a cluster, or before they were recorded).
func daemonTable(m record.Meta, suffix, idSuffix string) (Table, bool) {
	type sum struct {
		cpu, wall float64
		mem       int64 // at the end of the mode's last cell
		names     []string
		nodes     int
		cells     int
	}
	type key struct {
		mode     string
		instance int
	}
	sums := map[key]map[string]*sum{}
	sources := map[string]bool{}
	var windows []float64
	has := map[string]bool{}
	for _, c := range m.Cells {
		wall := c.End.Sub(c.Start).Seconds()
		if len(c.Daemons) == 0 || !(wall > 0) {
			continue
		}
		k := key{c.Mode, c.Instance}
		if sums[k] == nil {
			sums[k] = map[string]*sum{}
		}
		for role, d := range c.Daemons {
			s := sums[k][role]
			if s == nil {
				s = &sum{}
				sums[k][role] = s
			}
			s.cpu += d.CPUSeconds
			s.wall += wall
			s.mem, s.nodes = d.MemoryBytes, d.Nodes
			s.cells++
			for _, n := range d.Names {
				if !slices.Contains(s.names, n) {
					s.names = append(s.names, n)
				}
			}
			has[role] = true
			sources[d.Source] = true
			if d.WindowSeconds > 0 {
				windows = append(windows, d.WindowSeconds)
			}
		}
	}
	if len(sums) == 0 {
		return Table{}, false
	}
	t := Table{ID: "tab-daemons" + idSuffix, Title: "What the nodes' daemons spent per mode" + suffix,
		Caption: "The cluster's node daemons on the nodes each mode's pods were on, summed over those nodes and over the mode's cells: " +
			"their CPU seconds (user + system) during the cells, their CPU milliseconds per GB of payload the mode moved (the servers' CPU per GB is in seconds), " +
			"their share of one core over the cells' time, and their working set at the end of the mode's last cell. " +
			"The per-cell figures, with intervals against the reference, are in each test's table.",
		Columns: []string{"mode", "nodes"}}
	switch {
	case sources["metrics.k8s.io"]:
		t.Caption += fmt.Sprintf(" Read from the pods' metrics (metrics.k8s.io): a rate over a window of %s s that ended near each cell's end, times the cell's duration; coarse for cells shorter than the window.",
			f(slices.Max(windows), 0))
	case sources["cgroup"]:
		t.Caption += " Read from each daemon's cgroup on the test cluster, which counts what it forks (iptables-restore, clang) too."
	}
	var roles []string
	for _, r := range daemonRoles {
		if has[r.role] {
			roles = append(roles, r.role)
			t.Columns = append(t.Columns, r.title+" CPU s", r.title+" CPU ms per GB", r.title+" % of a core", r.title+" MB")
		}
	}
	for _, mm := range m.Modes {
		per := sums[key{mm.Mode, mm.Instance}]
		if per == nil {
			continue
		}
		nodes := 0 // the operator runs once per cluster, wherever
		for role, s := range per {
			if role != record.DaemonCNIOperator {
				nodes = max(nodes, s.nodes)
			}
		}
		row := []Cell{{Text: instanceLabel(mm.Mode, mm.Instance)}, {Text: fmt.Sprint(nodes)}}
		gb := float64(mm.Bytes) / 1e9
		for _, role := range roles {
			s := per[role]
			if s == nil {
				row = append(row, Cell{Text: "–"}, Cell{Text: "–"}, Cell{Text: "–"}, Cell{Text: "–"})
				continue
			}
			perGB := math.NaN()
			if gb > 0 {
				perGB = 1000 * s.cpu / gb
			}
			row = append(row, Cell{Text: f(s.cpu, 3)}, value(perGB), Cell{Text: f(100*s.cpu/s.wall, 2)},
				Cell{Text: f(float64(s.mem)/1e6, 1)})
		}
		t.Rows = append(t.Rows, row)
	}
	var named []string
	for _, r := range daemonRoles {
		for _, per := range sums {
			if s := per[r.role]; s != nil && len(s.names) > 0 {
				named = append(named, r.title+": "+strings.Join(s.names, ", "))
				break
			}
		}
	}
	if len(named) > 0 {
		t.Caption += " Daemons read: " + strings.Join(named, "; ") + "."
	}
	return t, len(t.Rows) > 0
}
