package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/cnperf/cnperf/internal/analysis"
	"github.com/cnperf/cnperf/internal/record"
	"github.com/cnperf/cnperf/internal/report/figure"
)

// ServiceRow is one lab of the services condition: the Services its
// cluster held, and what it measured before its first cell.
type ServiceRow struct {
	Series, Datapath string // the series, and the series without its services condition
	Instance         int
	N, Created       int
	Create, Settle   time.Duration
	P50, P99         time.Duration // programming latency over the probes that passed
	Probes, Failed   int
	// Rules are iptables rules, nftables rules and elements, Cilium
	// Service map entries, summed over the lab's nodes (-1: not read).
	Iptables, Nft, NftElems, CiliumLB int
	Syncs                             int64
	SyncSeconds                       float64
	ProxyCPU, AgentCPU                float64 // CPU seconds of kube-proxy and the CNI's agent while it was made
	Notes                             string
}

// ServiceRows lists the labs of a run that recorded the services
// condition, in the run's order.
func ServiceRows(m record.Meta) []ServiceRow {
	var rows []ServiceRow
	for _, mm := range m.Modes {
		if mm.Lab == nil || mm.Lab.Kube == nil || mm.Lab.Kube.Services == nil {
			continue
		}
		s := mm.Lab.Kube.Services
		row := ServiceRow{Series: mm.Mode, Datapath: withoutServices(mm.Mode), Instance: mm.Instance, N: s.N, Created: s.Created,
			Create: s.CreateNS, Settle: s.SettleNS, Probes: len(s.ProgrammingNS), Failed: s.Failed,
			Syncs: s.Syncs, SyncSeconds: s.SyncSeconds, Notes: strings.Join(s.Notes, "; "),
			ProxyCPU: s.Daemons[record.DaemonKubeProxy].CPUSeconds, AgentCPU: s.Daemons[record.DaemonCNIAgent].CPUSeconds}
		ds := slices.Clone(s.ProgrammingNS)
		slices.Sort(ds)
		row.P50, row.P99 = nearestRank(ds, 50), nearestRank(ds, 99)
		row.Iptables, row.Nft, row.NftElems, row.CiliumLB = -1, -1, -1, -1
		for _, n := range s.Nodes {
			add := func(dst *int, v int) {
				if v >= 0 {
					*dst = max(*dst, 0) + v
				}
			}
			add(&row.Iptables, n.Iptables)
			add(&row.Nft, n.Nft)
			add(&row.NftElems, n.NftElems)
			add(&row.CiliumLB, n.CiliumLB)
		}
		rows = append(rows, row)
	}
	return rows
}

// nearestRank is the nearest-rank percentile p of sorted ds (0: none).
func nearestRank(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	i := int(math.Ceil(float64(len(ds))*p/100)) - 1
	return ds[max(0, min(i, len(ds)-1))]
}

// withoutServices is a series key without its services condition
// (k8s-service/ipt,svc=1000 → k8s-service/ipt): the datapath a curve
// follows over N.
func withoutServices(key string) string {
	mode, variant, ok := strings.Cut(key, "/")
	if !ok {
		return key
	}
	parts := slices.DeleteFunc(strings.Split(variant, ","), func(p string) bool { return strings.HasPrefix(p, "svc=") })
	if len(parts) == 0 {
		return mode
	}
	return mode + "/" + strings.Join(parts, ",")
}

// ServicePoint is one datapath at one N: the programming latency and the
// first-packet latency (crr's round trip: connect, request, response and
// close through the Service, its median over the repetitions' medians, in
// µs; NaN where no crr ran).
type ServicePoint struct {
	N           int
	P50, P99    time.Duration
	FirstPacket float64
}

// ServiceCurves are the points of each datapath in ascending N, and the
// datapaths in the run's order. firstPacket maps a series to its crr
// figure.
func ServiceCurves(rows []ServiceRow, firstPacket map[string]float64) (map[string][]ServicePoint, []string) {
	curves := map[string][]ServicePoint{}
	var order []string
	for _, r := range rows {
		if r.Instance != 0 {
			continue // one point per lab of the spec; instances are in the table
		}
		if _, ok := curves[r.Datapath]; !ok {
			order = append(order, r.Datapath)
		}
		fp, ok := firstPacket[r.Series]
		if !ok {
			fp = math.NaN()
		}
		curves[r.Datapath] = append(curves[r.Datapath], ServicePoint{N: r.N, P50: r.P50, P99: r.P99, FirstPacket: fp})
	}
	for _, c := range curves {
		slices.SortStableFunc(c, func(a, b ServicePoint) int { return a.N - b.N })
	}
	return curves, order
}

// crrFirstPacket is each series' crr round trip (median, µs) in the first
// crr case of the run.
func crrFirstPacket(cases []analysis.Case) map[string]float64 {
	out := map[string]float64{}
	for _, c := range cases {
		if c.Protocol != "crr" {
			continue
		}
		for _, row := range c.Rows {
			if st, ok := row.Stats["rtt_p50"]; ok {
				out[row.Series] = st.Mean.Value
			}
		}
		break
	}
	return out
}

const servicesCaption = "Per lab of the services condition: N Services, each with an endpoint, on its cluster while it was measured (the labs of a cluster ran in ascending N, so each added what the cluster lacked: created, in that time, concurrent requests per batch); settle: from the last one's creation until a client pod reached it; programming latency: one more Service created at a free ClusterIP while a client pod dialled it every 10 ms (each dial bounded by 20 ms), from the create request until the first connection passed, the probes' median and 99th percentile (nearest rank); the rules and map entries the lab's nodes held after (iptables-save's rules over all tables, kube-proxy's nftables rules and map elements, Cilium's Service map entries as cilium-dbg lists them; - not read), kube-proxy's syncs over the same span from its metrics, and the CPU seconds kube-proxy and the CNI's agent spent."

func msOrDash(d time.Duration) string {
	if d == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond))
}

func countOrDash(n int) string {
	if n < 0 {
		return "-"
	}
	return fmt.Sprint(n)
}

// serviceTable is the rows as text cells, with a header.
func serviceTable(rows []ServiceRow) [][]string {
	t := [][]string{{"series", "N", "created", "create s", "settle ms", "prog p50 ms", "prog p99 ms", "probes", "iptables", "nft rules", "nft elems", "cilium lb", "proxy syncs", "sync s", "kube-proxy cpu s", "agent cpu s"}}
	for _, r := range rows {
		t = append(t, []string{r.Series + instanceSuffix(r.Instance), fmt.Sprint(r.N), fmt.Sprint(r.Created), fmt.Sprintf("%.1f", r.Create.Seconds()),
			msOrDash(r.Settle), msOrDash(r.P50), msOrDash(r.P99), fmt.Sprintf("%d/%d", r.Probes, r.Probes+r.Failed),
			countOrDash(r.Iptables), countOrDash(r.Nft), countOrDash(r.NftElems), countOrDash(r.CiliumLB),
			fmt.Sprint(r.Syncs), fmt.Sprintf("%.2f", r.SyncSeconds), fmt.Sprintf("%.2f", r.ProxyCPU), fmt.Sprintf("%.2f", r.AgentCPU)})
	}
	return t
}

// addServices adds the services table and the curves against N: the
// programming latency's median and 99th percentile, and the first-packet
// latency (crr through the Service), one line per datapath.
func (r *Report) addServices(cases []analysis.Case) {
	var rows []ServiceRow
	for _, run := range r.Runs {
		for _, s := range ServiceRows(run.Meta) {
			s.Series, s.Datapath = seriesName(r.Runs, run, s.Series), withoutServices(seriesName(r.Runs, run, s.Series))
			rows = append(rows, s)
		}
	}
	if len(rows) == 0 {
		return
	}
	t := Table{ID: "tab-services", Title: "Services", Caption: servicesCaption}
	text := serviceTable(rows)
	t.Columns = text[0]
	for _, line := range text[1:] {
		var cells []Cell
		for _, c := range line {
			cells = append(cells, Cell{Text: c})
		}
		t.Rows = append(t.Rows, cells)
	}
	r.Tables = append(r.Tables, t)
	curves, order := ServiceCurves(rows, crrFirstPacket(cases))
	chart := func(id, title, ylabel string, y func(ServicePoint) float64) {
		c := figure.Chart{Title: title, Subtitle: "smaller is better", XLabel: "Services on the cluster (N)", YLabel: ylabel, Legend: figure.LegendAuto}
		for i, dp := range order {
			s := figure.Series{Name: dp, Color: figure.SeriesColor(i + 1)}
			for _, p := range curves[dp] {
				s.X, s.Median = append(s.X, float64(p.N)), append(s.Median, y(p))
			}
			s.PX, s.PY = s.X, s.Median // the measured points, on the line
			if slices.ContainsFunc(s.Median, func(v float64) bool { return !math.IsNaN(v) }) {
				c.Series = append(c.Series, s)
			}
		}
		if len(c.Series) > 0 {
			r.add(id, title, "One line per datapath (the series without its services condition), one point per N: "+title+".", c)
		}
	}
	ms := func(d time.Duration) float64 {
		if d == 0 {
			return math.NaN()
		}
		return float64(d) / float64(time.Millisecond)
	}
	chart("fig-services-p50", "Programming latency, median", "ms", func(p ServicePoint) float64 { return ms(p.P50) })
	chart("fig-services-p99", "Programming latency, 99th percentile", "ms", func(p ServicePoint) float64 { return ms(p.P99) })
	chart("fig-services-first", "First-packet latency (crr through the Service, median)", "µs", func(p ServicePoint) float64 { return p.FirstPacket })
}

// WriteServicesTable writes the services table of a run (nothing for a
// run without the condition).
func WriteServicesTable(w io.Writer, m record.Meta) error {
	rows := ServiceRows(m)
	if len(rows) == 0 {
		return nil
	}
	var sb strings.Builder
	sb.WriteString("\nservices: per lab, the Services on its cluster (N), their creation, the programming latency of one more (create to first connection) and what the nodes held\n")
	writeAligned(&sb, serviceTable(rows), 1)
	for _, r := range rows {
		if r.Notes != "" {
			fmt.Fprintf(&sb, "%s: %s\n", r.Series+instanceSuffix(r.Instance), r.Notes)
		}
	}
	if _, err := io.WriteString(w, sb.String()); err != nil {
		return fmt.Errorf("write services table: %w", err)
	}
	return nil
}
