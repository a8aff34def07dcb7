package record

// Chain is a chained lab's underlay: hosts in a line, segment i joining
// host i to host i+1 on a subnet of its own.
type Chain struct {
	// Routing says who carries traffic past a neighbour: "kernel" (every
	// host forwards IP and routes each other host's address along the
	// line) or "relay" (hosts reach their neighbours only; the mode's
	// routers relay).
	Routing  string         `json:"routing"`
	Segments []ChainSegment `json:"segments"`
}

// ChainSegment is one link of a chain.
type ChainSegment struct {
	Index  int    `json:"index"` // 1-based: host Index to host Index+1
	Subnet string `json:"subnet"`
	From   string `json:"from"` // host name, and its address on the segment
	FromIP string `json:"from_ip"`
	To     string `json:"to"`
	ToIP   string `json:"to_ip"`
}
