package record

// Machine describes the machine.
type Machine struct {
	Hostname    string `json:"hostname"`
	OS          string `json:"os"`
	Kernel      string `json:"kernel"`
	KernelBuild string `json:"kernel_build"`
	Arch        string `json:"arch"`
	CPUModel    string `json:"cpu_model"`
	CPUs        int    `json:"cpus"`
	MemTotal    int64  `json:"mem_total_bytes"`
	GoVersion   string `json:"go_version"`
	Iptables    string `json:"iptables,omitempty"`
}

// Link describes one network device.
type Link struct {
	Name     string          `json:"name"`
	Type     string          `json:"type"`
	Driver   string          `json:"driver,omitempty"`
	MTU      int             `json:"mtu"`
	State    string          `json:"state"`
	MAC      string          `json:"mac,omitempty"`
	Master   string          `json:"master,omitempty"`
	Alias    string          `json:"alias,omitempty"`
	Addrs    []string        `json:"addrs,omitempty"`
	Offloads map[string]bool `json:"offloads,omitempty"`
	Details  string          `json:"details,omitempty"` // VXLAN id/port, macvlan mode
}

// Netns describes one namespace.
type Netns struct {
	Name     string            `json:"name"`
	Links    []Link            `json:"links"`
	Sysctls  map[string]string `json:"sysctls,omitempty"`
	Firewall string            `json:"firewall,omitempty"` // iptables-save, when it has rules
}
