package record

// CellKernel is where the machine's CPU went while one cell ran, from
// /proc/stat's per-core lines and /proc/softirqs: the time the kernel
// spent on packets (softirq: NET_RX and NET_TX processing, where most of
// a datapath's cost lives; irq; system calls) beside user time. Both files
// are the machine's: every lab host of this machine (a network namespace,
// a container, a pod of the test cluster) runs on the same kernel, so the
// counters are read once per cell and hold every host's share at once.
// Runs before it was recorded have none.
type CellKernel struct {
	// Cores are the cores summed (ascending); absent: all of them.
	Cores []int `json:"cores,omitempty"`
	// CPUSeconds is the capacity of those cores over the cell (every
	// column but guest, summed over the cores).
	CPUSeconds float64 `json:"cpu_seconds"`
	// UserSeconds is user and nice time; SystemSeconds, IRQSeconds and
	// SoftirqSeconds are those columns, summed over the cores (steal is
	// the cell's load's). In the kernel's ticks of 10 ms; IRQ time is 0
	// on most virtual machines, and then left out, like every zero
	// below, to keep a cell's record short (run.json holds every cell).
	UserSeconds    float64 `json:"user_seconds"`
	SystemSeconds  float64 `json:"system_seconds"`
	IRQSeconds     float64 `json:"irq_seconds,omitempty"`
	SoftirqSeconds float64 `json:"softirq_seconds"`
	// BusiestSoftirqPercent is the softirq share of the core that spent
	// most of its time in softirq over the cell (BusiestCore): one core
	// taking every packet's receive work can hide in the sum.
	BusiestCore           int     `json:"busiest_core,omitempty"`
	BusiestSoftirqPercent float64 `json:"busiest_softirq_percent"`
	// NetRX and NetTX are how many NET_RX and NET_TX softirqs ran on
	// those cores during the cell (/proc/softirqs).
	NetRX uint64 `json:"net_rx,omitempty"`
	NetTX uint64 `json:"net_tx,omitempty"`
	// Bytes is the payload the cell moved (what CPU per GB divides by);
	// absent on the pinned cores' record, where it is the cell's too.
	Bytes int64 `json:"bytes,omitempty"`
	// Pinned is the same over the cores the lab's hosts (and their
	// overlay routers) were pinned to, when a cores condition pinned
	// them: the rest of the machine ran the clients and the run itself.
	Pinned *CellKernel `json:"pinned,omitempty"`
}

// Sane says whether a stored record can be summed: every figure finite,
// none negative, the parts within the capacity (and that below a bound no
// machine reaches), the share a percentage. A run.json edited by hand, or
// damaged, is read as far as it makes sense.
func (k *CellKernel) Sane() bool {
	if k == nil || !(k.CPUSeconds > 0 && k.CPUSeconds < 1e12) || k.Bytes < 0 {
		return false
	}
	parts := []float64{k.UserSeconds, k.SystemSeconds, k.IRQSeconds, k.SoftirqSeconds}
	sum := 0.0
	for _, p := range parts {
		if !(p >= 0 && p <= k.CPUSeconds) {
			return false
		}
		sum += p
	}
	return sum <= k.CPUSeconds*1.001 && k.BusiestSoftirqPercent >= 0 && k.BusiestSoftirqPercent <= 100 &&
		(k.Pinned == nil || k.Pinned.Sane())
}

// IdleDaemon is what one of a lab's own processes (an overlay router,
// Open vSwitch, flanneld, etcd) or one role of a cluster's node daemons
// spent while the lab stood idle, before the first cell.
type IdleDaemon struct {
	// CPUPercent is its CPU (user + system) as a share of one core over
	// the window; MemoryBytes its memory at the window's end (cgroup:
	// with page cache; a plain process: its resident set; node daemons:
	// their working set).
	CPUPercent  float64 `json:"cpu_percent"`
	MemoryBytes int64   `json:"memory_bytes"`
	// Source is "cgroup", "proc" or "metrics.k8s.io"; Nodes, for node
	// daemons, how many nodes' were summed.
	Source string `json:"source,omitempty"`
	Nodes  int    `json:"nodes,omitempty"`
}

// IdleCost is a lab's daemons' cost at rest, read over WindowSeconds
// after the lab was built and before the first cell, by process name
// (the lab's own) or role (node daemons: DaemonCNIAgent, ...).
type IdleCost struct {
	WindowSeconds float64               `json:"window_seconds"`
	Daemons       map[string]IdleDaemon `json:"daemons"`
}
