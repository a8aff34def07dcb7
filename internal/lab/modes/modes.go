// Package modes lists the network setups cnperf can build. Adding a mode
// means adding its package and one line here.
package modes

import (
	"fmt"
	"github.com/cnperf/cnperf/internal/lab/modes/k8shost"
	"github.com/cnperf/cnperf/internal/lab/modes/k8snodeport"
	"github.com/cnperf/cnperf/internal/lab/modes/k8spod"
	"github.com/cnperf/cnperf/internal/lab/modes/k8sservice"
	"github.com/cnperf/cnperf/internal/lab/netns"
	"sort"
	"strings"

	"github.com/cnperf/cnperf/internal/lab"
	"github.com/cnperf/cnperf/internal/lab/modes/bare"
	"github.com/cnperf/cnperf/internal/lab/modes/bridge"
	"github.com/cnperf/cnperf/internal/lab/modes/bridgerouted"
	"github.com/cnperf/cnperf/internal/lab/modes/flannel"
	"github.com/cnperf/cnperf/internal/lab/modes/host"
	"github.com/cnperf/cnperf/internal/lab/modes/links"
	"github.com/cnperf/cnperf/internal/lab/modes/macvlan"
	"github.com/cnperf/cnperf/internal/lab/modes/overlay"
	"github.com/cnperf/cnperf/internal/lab/modes/ovs"
	"github.com/cnperf/cnperf/internal/lab/modes/useroverlay"
	"github.com/cnperf/cnperf/internal/lab/modes/vethrouted"
)

// All returns every mode, reference first; Bryzgalov's (2014) techniques last.
func All() []lab.Mode {
	all := []lab.Mode{bare.Mode{}, host.Mode{}, bridge.Mode{}, macvlan.Mode{}, overlay.Mode{}}
	all = append(all, useroverlay.Modes()...)
	// The real Flannel beside cnperf's stand-ins for it.
	all = append(all, flannel.Modes()...)
	all = append(all, ovs.Mode{}, vethrouted.Mode{}, bridgerouted.Mode{}, links.Mode{})
	// A cluster's own datapaths, on the kubernetes driver only.
	return append(all, k8shost.Mode{}, k8spod.Mode{}, k8sservice.Mode{}, k8snodeport.Mode{})
}

// Names returns the modes' names in All's order.
func Names() []string {
	var n []string
	for _, m := range All() {
		n = append(n, m.Name())
	}
	return n
}

// Lookup finds a mode by name.
func Lookup(name string) (lab.Mode, error) {
	for _, m := range All() {
		if m.Name() == name {
			return m, nil
		}
	}
	known := Names()
	sort.Strings(known)
	return nil, fmt.Errorf("unknown mode %q (known: %s)", name, strings.Join(known, ", "))
}

// Netns returns the modes the netns driver builds: the kernel topologies
// cnperf makes by hand (the Kubernetes modes run only on a cluster).
func Netns() []lab.Mode {
	var out []lab.Mode
	for _, m := range All() {
		if _, ok := m.(netns.Mode); ok {
			out = append(out, m)
		}
	}
	return out
}
