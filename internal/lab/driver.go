package lab

// Driver builds labs one way: emulated hosts built by hand (netns), Docker
// Engines (docker), a cluster. Each is a package of its own; adding one is
// its package and a line in internal/lab/drivers.
type Driver interface {
	// Name is what a spec's driver field and --driver say.
	Name() string
	// Check refuses, before anything is built, what the driver cannot
	// build: a mode without its interface, conditions it cannot apply, a
	// lab of that name that exists. Up has checked the name, the topology
	// and the ports.
	Check(cfg Config) error
	// Builds reports whether the driver can build mode m at all (the mode
	// has the driver's interface). A run asks it of every lab before it
	// builds any; Check says it again for one lab.
	Builds(m Mode) bool
	// Up builds l's hosts as cfg.Topology lists them, has the mode build
	// the endpoints (Build.Endpoints, in the topology's order) and fills
	// l's record: hosts, endpoints, how it was built. Up
	// removes the lab if it fails.
	Up(l *Lab, cfg Config) error
	// Down removes what the driver built for the named lab, from what it
	// finds on the machine (so also after a crash). Removing nothing is
	// not an error.
	Down(name string) error
	// Labs finds the labs the driver built on the machine, with owners.
	Labs() ([]Info, error)
}
