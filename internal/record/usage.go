package record

// Usage is a server's resource use: from its cgroup for a container, from
// /proc for a plain process (Source says which; their memory differs: a
// cgroup counts page cache too, /proc only the resident set).
type Usage struct {
	Source        string  `json:"source"`         // "cgroup" or "proc"
	CPUSeconds    float64 `json:"cpu_seconds"`    // cpuacct.usage
	UserSeconds   float64 `json:"user_seconds"`   // cpuacct.stat user
	SystemSeconds float64 `json:"system_seconds"` // cpuacct.stat system
	MemoryPeak    int64   `json:"memory_peak"`    // memory.max_usage_in_bytes
	MemoryCurrent int64   `json:"memory_current"` // memory.usage_in_bytes
}
