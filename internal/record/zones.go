package record

import "time"

// Zones is what a run stores of a lab split into two zones (the
// zone_* conditions): which hosts sat where, what delayed the frames
// between the zones, with which parameters, and, for cnperf's delay line,
// what it moved, lost and dropped.
type Zones struct {
	// Local and Remote are the hosts of the first and second zone; each
	// zone has its own underlay switch.
	Local  []string `json:"local"`
	Remote []string `json:"remote"`
	// DelayVia is what delays: "netem" (the kernel's qdisc on both ends of
	// the link between the switches) or "delayline" (cnperf's user-space
	// delay line, process "delayline" in the run's usage).
	DelayVia    string        `json:"delay_via"`
	Delay       time.Duration `json:"delay_ns"` // one way
	Jitter      time.Duration `json:"jitter_ns,omitempty"`
	LossPercent float64       `json:"loss_percent,omitempty"`
	// QueueBytes bounds what the link holds each way (netem: QueuePackets
	// frames).
	QueueBytes   int `json:"queue_bytes"`
	QueuePackets int `json:"queue_packets,omitempty"`
	// Directions are the delay line's counters, one per way, as it last
	// wrote them (absent for netem, or when nothing read them).
	Directions []ZoneDirection `json:"directions,omitempty"`
}

// ZoneDirection counts what the delay line did one way.
type ZoneDirection struct {
	From string `json:"from"` // zone: "local" or "remote"
	To   string `json:"to"`
	// Frames and Bytes were forwarded; Lost were dropped on purpose
	// (zone_loss); Dropped found the queue full and Truncated were larger
	// than the line reads: both mean the link could not carry what came.
	Frames    uint64 `json:"frames"`
	Bytes     uint64 `json:"bytes"`
	Lost      uint64 `json:"lost"`
	Dropped   uint64 `json:"dropped"`
	Truncated uint64 `json:"truncated,omitempty"`
	// SendFailed were refused by the kernel on the way out (counted in
	// no other field).
	SendFailed uint64 `json:"send_failed,omitempty"`
	// PeakQueueBytes is the most the queue held.
	PeakQueueBytes int `json:"peak_queue_bytes"`
	// Late is how long after its due time each frame left: the delay
	// line's own added latency (at zero delay, all it adds in user space).
	LateMedian time.Duration `json:"late_median_ns"`
	LateP99    time.Duration `json:"late_p99_ns"`
	LateMax    time.Duration `json:"late_max_ns"`
}
