package record

import "time"

// ImpairedLink is one impaired link of a lab as it was built (a spec's links):
// what carried its delay, and, for cnperf's delay line, what it moved.
type ImpairedLink struct {
	Link string `json:"link"` // the topology's name: a host (its uplink) or "zones"
	// Devices are the devices ("netns/dev") a flap sets down and up.
	Devices []string `json:"devices,omitempty"`
	// DelayVia is "netem" or "delayline" when the link delays or loses
	// frames; empty for a rate or a flap alone.
	DelayVia    string        `json:"delay_via,omitempty"`
	Delay       time.Duration `json:"delay_ns,omitempty"` // one way
	Jitter      time.Duration `json:"jitter_ns,omitempty"`
	LossPercent float64       `json:"loss_percent,omitempty"`
	Rate        string        `json:"rate,omitempty"` // TBF each way
	// QueueBytes bounds what the delay holds each way (netem:
	// QueuePackets frames).
	QueueBytes   int `json:"queue_bytes,omitempty"`
	QueuePackets int `json:"queue_packets,omitempty"`
	// Directions are the delay line's counters, one per way ("switch" to
	// "host" and back), as it last wrote them.
	Directions []ZoneDirection `json:"directions,omitempty"`
}

// Flap is one flap of a link in one cell: when it was due and when the
// link really went down and came up again, seconds since the cell's
// clients started (the clock the workloads' intervals count from, give or
// take their own start).
type Flap struct {
	Link string  `json:"link"`
	At   float64 `json:"at_s"`   // scheduled
	Down float64 `json:"down_s"` // set down
	Up   float64 `json:"up_s"`   // set up again; 0 when it never went down
	// Error says what failed (the link could not be set down or up).
	Error string `json:"error,omitempty"`
	// NotDone marks a flap the cell's clients ended before: it was due
	// after them and never went down (a ping-pong cell of a few sizes
	// can end first); runs before it was recorded leave such flaps out.
	NotDone bool `json:"not_done,omitempty"`
	// Component, for a disruption of a test cluster (a spec's disrupt),
	// is the daemon stopped and started again ("flanneld"); Link is then
	// its node and whose it is ("node2 server"), Down when it was gone,
	// Up when it was started again and Ready when it did its job again
	// (0: it has no sign of that, or was not ready before the bound).
	Component string  `json:"component,omitempty"`
	Ready     float64 `json:"ready_s,omitempty"`
	// NewPod is the time from creating a pod on the node as the daemon
	// went down to its first answer to a new connection from the
	// client's pod (0: not measured, NewPodError says why).
	NewPod      float64 `json:"new_pod_s,omitempty"`
	NewPodError string  `json:"new_pod_error,omitempty"`
}
