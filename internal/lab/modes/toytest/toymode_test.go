// Package toytest is a mode written the way a real one is, to show (and
// test) the recipe: a package with Name, Summary and Build, added to the
// catalogue in one line. Its hosts' NICs are shaped to Rate, so a run
// on it shows whether the mode was really built. Nothing but its test
// links it.
package toytest

import (
	"fmt"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/netns"
)

// Name is the mode's name in specs.
const Name = "toy-shaped"

// Rate is what every endpoint host's NIC may send, as tc writes it.
const Rate = "200mbit"

// Mode is bare on hosts whose NICs send at most Rate.
type Mode struct{}

func (Mode) Name() string    { return Name }
func (Mode) Summary() string { return "plain process on a NIC shaped to " + Rate + " (a test's mode)" }

// Build shapes each endpoint host's NIC, then serves as bare does, in the
// host's own namespace. The qdisc lives in the lab's namespaces, so the
// driver's Down removes it with them.
func (Mode) Build(b *netns.Build) ([]lab.Endpoint, error) {
	for _, h := range b.Hosts {
		if err := b.Net().Shape(h.NS, "eth0", Rate); err != nil {
			return nil, fmt.Errorf("shape %s: %w", h.Name, err)
		}
	}
	return lab.HostEndpoints(b.Endpoints, b.Conditions, b.Port, false), nil
}
