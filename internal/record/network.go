package record

// NetworkInfo is what a run records of a network: its driver, options and
// addressing, as the engine reports them.
type NetworkInfo struct {
	Name    string            `json:"name"`
	ID      string            `json:"id"`
	Driver  string            `json:"driver"`
	Scope   string            `json:"scope"`
	Options map[string]string `json:"options,omitempty"`
	Subnets []string          `json:"subnets,omitempty"`
}
