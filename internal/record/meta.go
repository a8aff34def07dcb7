package record

import (
	"time"

	"github.com/cnperf/cnperf/internal/spec"
	"github.com/cnperf/cnperf/internal/spec/conditions"
	"github.com/cnperf/cnperf/internal/workload/tcpinfo"
)

// Meta is run.json: everything needed to re-analyse the samples later.
type Meta struct {
	Format        int         `json:"format"` // run.json layout version
	Cnperf        string      `json:"cnperf_version"`
	ID            string      `json:"id"`
	Status        string      `json:"status"` // running, complete, interrupted, failed
	Error         string      `json:"error,omitempty"`
	Started       time.Time   `json:"started"`
	Finished      *time.Time  `json:"finished,omitempty"`
	Spec          spec.Spec   `json:"spec"`
	Machine       Machine     `json:"machine"`
	ReceiveWindow int         `json:"tcp_receive_window"` // tcp_rmem default in the hosts: ppbench's "standard receive window"
	Sizes         int         `json:"sizes"`              // distinct message sizes in the plan
	Modes         []ModeMeta  `json:"modes"`
	Cells         []Cell      `json:"cells"` // in the order they ran
	Memory        *MemoryMeta `json:"memory,omitempty"`
}

// MemoryMeta is the machine's committed memory (Committed_AS, sar's
// kbcommit) before the labs were built and at its peak while measuring; the
// labs of all modes run side by side, so the delta is the run's, not a mode's.
type MemoryMeta struct {
	CommittedBefore int64 `json:"committed_before_bytes"`
	CommittedPeak   int64 `json:"committed_peak_bytes"`
	CommittedDelta  int64 `json:"committed_delta_bytes"`
}

// ModeMeta describes one lab of a run as it was measured. Two words keep
// apart what a run compares: the mode is a network setup (bridge, overlay);
// the series is what samples, cells and tables carry as their "mode" field,
// MODE[@DRIVER][/VARIANT], one per lab of the spec.
type ModeMeta struct {
	Mode       string           `json:"mode"`               // the series key (JSON name kept for stored runs)
	Setup      string           `json:"setup,omitempty"`    // the mode, i.e. network setup; empty in runs before it was recorded
	Instance   int              `json:"instance,omitempty"` // which instance of the mode's lab (spec instances)
	Driver     string           `json:"driver,omitempty"`
	Conditions conditions.Set   `json:"conditions,omitzero"`
	Summary    string           `json:"summary"`
	Lab        *Lab             `json:"lab"`
	Namespaces []Netns          `json:"namespaces"`
	Usage      map[string]Usage `json:"usage,omitempty"` // per server role
	Bytes      int64            `json:"bytes"`           // body bytes moved by successful requests
	// Idle is what the lab's daemons spent at rest before the first
	// cell; absent where the lab runs none, and in runs before it was
	// recorded.
	Idle *IdleCost `json:"idle,omitempty"`
}

// Cell is one interleaved slice of the plan on one mode: a chunk of sizes
// (ping-pong) or one repetition of a test case (socket tests).
type Cell struct {
	Index int    `json:"index"`
	Mode  string `json:"mode"`
	// Instance is the instance of the mode's lab the cell ran on.
	Instance int       `json:"instance,omitempty"`
	Chunk    int       `json:"chunk"`          // the unit: chunk of sizes, or case repetition
	Case     string    `json:"case,omitempty"` // socket tests: the case's label
	Rep      int       `json:"rep,omitempty"`  // socket tests: the repetition, from 0
	Error    string    `json:"error,omitempty"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	Samples  int       `json:"samples"`
	Failed   int       `json:"failed"`
	// Load is what the machine did besides the run during the cell; runs
	// before it was recorded have none.
	Load *CellLoad `json:"load,omitempty"`
	// Daemons is what the cluster's node daemons spent during the cell, by
	// role (DaemonCNIAgent, DaemonKubeProxy, ...), summed over the nodes
	// the lab's pods are on; absent off a cluster, where nothing can read
	// them, and in runs before it was recorded.
	Daemons map[string]DaemonCost `json:"daemons,omitempty"`
	// TCP is what TCP_INFO said of the cell client's connections
	// (ping-pong's siege, to ping): its retransmits, smoothed RTT and
	// window; absent where the client read none, and in runs before it
	// was recorded.
	TCP *tcpinfo.Stats `json:"tcp_info,omitempty"`
	// ServerTCP is what TCP_INFO said of the servers' connections during
	// the cell, by side (ping-pong: "ping", ping's connections from siege;
	// "ping_to_pong"; "pong", pong's from ping), each side's retransmits
	// its server's as the sender; absent where the servers do not tell,
	// and in runs before it was recorded.
	ServerTCP map[string]*tcpinfo.Stats `json:"server_tcp_info,omitempty"`
	// Kernel is where the machine's CPU went during the cell (user,
	// system, irq, softirq; NET_RX and NET_TX counts); absent when a lab
	// of the run is on another machine, and in runs before it was
	// recorded.
	Kernel *CellKernel `json:"kernel,omitempty"`
	// Flaps are the flaps of the lab's links during the cell (a spec's
	// links[].flap): when each went down and up again.
	Flaps []Flap `json:"flaps,omitempty"`
	// FlapsFrom is the moment the flaps' seconds count from (the clients'
	// start), set with Flaps: ping-pong's samples carry wall-clock times
	// (ts), and a span cell's Start is its client's first line, not this.
	FlapsFrom time.Time `json:"flaps_from,omitzero"`
	// Profile is what sampling the machine's stacks during the cell
	// caught (the spec's profile: on); its stacks are in File. Absent
	// when the cell was not profiled, so runs without profiling are
	// stored as before.
	Profile *CellProfile `json:"profile,omitempty"`
	// Conntrack is the lab's connection tracking during a cell of a
	// workload that fills it (conns); absent for the others.
	Conntrack *CellConntrack `json:"conntrack,omitempty"`
}

// CellConntrack is the connection tracking of a lab's namespaces during a
// cell: the machine's table size and entry size, and, per namespace that
// tracks connections (the hosts that NAT), its entries before the cell
// and at their peak (read every half second) and the drops during it.
// Memory is entries × ObjectBytes, the nf_conntrack slab object's size
// from /proc/slabinfo (0 where it was not readable).
type CellConntrack struct {
	Max         int64                  `json:"max"`
	ObjectBytes int                    `json:"object_bytes"`
	Namespaces  map[string]ConntrackNS `json:"namespaces"`
}

// ConntrackNS is one namespace's table during a cell: entries, and the
// kernel's counts of new connections dropped on a full table (Drop),
// entries evicted to make room (EarlyDrop) and failed inserts.
type ConntrackNS struct {
	Before       int64 `json:"before"`
	Peak         int64 `json:"peak"`
	Drop         int64 `json:"drop"`
	EarlyDrop    int64 `json:"early_drop"`
	InsertFailed int64 `json:"insert_failed"`
}

// Sums are the peak entries, their memory in bytes and the drops over
// every namespace.
func (c CellConntrack) Sums() (entries, bytes, drops int64) {
	for _, n := range c.Namespaces {
		entries += n.Peak
		drops += n.Drop + n.EarlyDrop + n.InsertFailed
	}
	return entries, entries * int64(c.ObjectBytes), drops
}

// CellProfile sums a cell's sampled stacks (StacksFile): the rate and
// CPUs sampled, how long, how many samples and distinct stacks were
// kept, what the caps cut (folded into TruncatedFrame stacks, so the
// totals hold), and the samples by context (the stacks' first frames).
type CellProfile struct {
	Hz             int               `json:"hz"`
	CPUs           int               `json:"cpus"`
	Seconds        float64           `json:"seconds"`
	Samples        uint64            `json:"samples"`
	Stacks         int               `json:"stacks"`
	DroppedSamples uint64            `json:"dropped_samples,omitempty"`
	DroppedStacks  int               `json:"dropped_stacks,omitempty"`
	ByContext      map[string]uint64 `json:"by_context,omitempty"`
	File           string            `json:"file"`
}

// Rate is a finished cell's requests per second: its samples over its
// duration; 0 without an end, a positive duration or samples.
func (c Cell) Rate() float64 {
	if sec := c.End.Sub(c.Start).Seconds(); !c.End.IsZero() && sec > 0 && c.Samples > 0 {
		return float64(c.Samples) / sec
	}
	return 0
}

// SeriesKeys returns the series the run measured, in the order it built
// their labs, from what it recorded; series the spec names but the run
// never built (it stopped first) follow, so every run lists every lab.
func (m *Meta) SeriesKeys() []string {
	var keys []string
	seen := map[string]bool{}
	for _, mm := range m.Modes {
		if !seen[mm.Mode] {
			seen[mm.Mode] = true
			keys = append(keys, mm.Mode)
		}
	}
	for _, k := range m.Spec.ModeKeys() {
		if !seen[k] {
			seen[k] = true
			keys = append(keys, k)
		}
	}
	return keys
}

// SplitSeries returns a series' mode and driver as the run recorded them,
// or as its spec names them for a run that did not record them.
func (m *Meta) SplitSeries(key string) (mode, driver string) {
	for _, mm := range m.Modes {
		if mm.Mode == key && mm.Setup != "" && mm.Driver != "" {
			return mm.Setup, mm.Driver
		}
	}
	return m.Spec.SplitModeKey(key)
}
