package conditions

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Disruption stops a daemon of a test cluster's node at given times of
// each cell and starts it again, as an upgrade or a crash restarts it, so
// that what the datapath promises while its control plane is away is
// measured like a link's flap (a spec's disrupt).
type Disruption struct {
	// Component is what is stopped: ComponentCNIAgent (the cluster's
	// cilium-agent or flanneld), kube-proxy, containerd or kubelet.
	Component string `yaml:"component" json:"component"`
	// Node is the node of the server's pod or of the client's.
	Node string `yaml:"node" json:"node"`
	// At are offsets from each cell's start (its clients' start).
	At []time.Duration `yaml:"at" json:"at"`
	// Down is how long the component stays stopped ("2s"), or Restart:
	// stopped, then started again at once.
	Down string `yaml:"down" json:"down"`
	// Cluster, when set, limits it to the labs on that cluster (a name
	// in kubernetes.clusters, which its driver checks).
	Cluster string `yaml:"cluster,omitempty" json:"cluster,omitempty"`
}

// The components a disruption may stop, and its nodes.
const (
	ComponentCNIAgent = "cni-agent"
	Restart           = "restart"
	NodeServer        = "server"
	NodeClient        = "client"
)

// Components are the values of disrupt[].component.
var Components = []string{ComponentCNIAgent, "kube-proxy", "containerd", "kubelet"}

// Bounds of disrupt.
const (
	MaxDisruptions   = 8 // disrupt
	MaxDisruptTimes  = 8 // disrupt[].at
	MaxDisruptDown   = time.Minute
	minDisruptLength = time.Millisecond
)

// Outage is how long the component stays stopped: 0 for a restart
// (Validate has refused what does not parse).
func (d Disruption) Outage() time.Duration {
	if d.Down == Restart {
		return 0
	}
	v, _ := time.ParseDuration(d.Down)
	return v
}

// ValidateDisrupt checks a spec's disruptions on their own: components,
// nodes, bounds, and times that end before the shortest test (test: its
// omit + duration; 0 when some test has none, where a disruption is
// refused). Whether the cluster runs the component is its driver's to
// say, before any lab.
func ValidateDisrupt(ds []Disruption, test time.Duration) error {
	if len(ds) == 0 {
		return nil
	}
	if len(ds) > MaxDisruptions {
		return fmt.Errorf("disrupt: %d entries, more than %d", len(ds), MaxDisruptions)
	}
	if test <= 0 {
		return errors.New("disrupt: disruptions need socket tests with a duration, the time they fall in")
	}
	for i, d := range ds {
		if err := d.validate(test); err != nil {
			return fmt.Errorf("disrupt[%d].%w", i, err)
		}
	}
	return nil
}

func (d Disruption) validate(test time.Duration) error {
	if !slices.Contains(Components, d.Component) {
		return fmt.Errorf("component %q: want %s", clip(d.Component), strings.Join(Components, ", "))
	}
	if d.Node != NodeServer && d.Node != NodeClient {
		return fmt.Errorf("node %q: want server or client (the node of that pod)", clip(d.Node))
	}
	if d.Cluster != "" && !ClusterNameRE.MatchString(d.Cluster) {
		return fmt.Errorf("cluster %q: a name of kubernetes.clusters (1-32 of a-z, 0-9 and -)", clip(d.Cluster))
	}
	down := time.Duration(0)
	if d.Down != Restart {
		v, err := time.ParseDuration(d.Down)
		switch {
		case err != nil:
			return fmt.Errorf("down %q: want restart or a duration, e.g. 2s", clip(d.Down))
		case v < minDisruptLength || v > MaxDisruptDown:
			return fmt.Errorf("down %s: want %s to %s (or restart)", v, minDisruptLength, MaxDisruptDown)
		case v >= test:
			return fmt.Errorf("down %s: not shorter than the shortest test (%s)", v, test)
		}
		down = v
	}
	switch {
	case len(d.At) == 0:
		return errors.New("at: give the times the component stops, e.g. [2s]")
	case len(d.At) > MaxDisruptTimes:
		return fmt.Errorf("at: %d times, more than %d", len(d.At), MaxDisruptTimes)
	}
	// Each time is bounded before it is added to down: a sum near 2^63
	// ns would wrap.
	for i, at := range d.At {
		switch {
		case at < 0:
			return fmt.Errorf("at[%d] %s: want 0 or later (from the cell's start)", i, at)
		case at >= test:
			return fmt.Errorf("at[%d] %s: not before the shortest test's end (%s)", i, at, test)
		case at+down >= test:
			return fmt.Errorf("at[%d] %s: with down %s it ends at %s, not before the shortest test's end (%s)", i, at, down, at+down, test)
		case i > 0 && at <= d.At[i-1]+down:
			return fmt.Errorf("at[%d] %s: not after the stop at %s has started again (down %s)", i, at, d.At[i-1], down)
		}
	}
	return nil
}

// clip shortens a user's value for an error line.
func clip(s string) string {
	if len(s) > 32 {
		return s[:32]
	}
	return s
}
